"""A failure half-way through a write leaves no half-written graph: one transaction per logical write."""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Iterator
from concurrent.futures import ThreadPoolExecutor
from typing import Any

import neo4j
import pytest
from factories import add
from neo4j.exceptions import Neo4jError

from graphmem.errors import Conflict, Contended, GraphmemError
from graphmem.model import CallerContext, ForgetMode, ForgetRequest, UpdateInput
from graphmem.runtime import Runtime
from graphmem.service import MemoryService
from graphmem.store.driver import GraphStore, RetryTransaction, Tx
from graphmem.turns import Turns
from helpers import counts, query, store_address

pytestmark = pytest.mark.engine  # starts engines or servers of its own


class InjectedFault(Exception):
    pass


def fail_at(monkeypatch: pytest.MonkeyPatch, statement: str) -> list[str]:
    """Make ``Tx.run`` raise when it reaches ``statement``; returns the statements that ran before."""
    ran: list[str] = []
    original = Tx.run

    def run(self: Tx, name: str, /, **params: Any) -> list[dict[str, Any]]:
        if name == statement:
            raise InjectedFault(name)
        result = original(self, name, **params)
        ran.append(name)
        return result

    monkeypatch.setattr(Tx, "run", run)
    return ran


def test_add_failing_after_document_created_leaves_nothing(service: MemoryService, ctx: CallerContext,
                                                           ns: str, graph: neo4j.Driver,
                                                           monkeypatch: pytest.MonkeyPatch) -> None:
    add(service, ctx, ns, "Already here.")
    before = counts(graph, ns)
    ran = fail_at(monkeypatch, "facts_create")
    with pytest.raises(InjectedFault):
        add(service, ctx, ns, "Is it half written? Never, not once.", request_id="req-fault-1")
    assert "documents_create" in ran  # the fault really came after a write
    assert counts(graph, ns) == before
    monkeypatch.undo()
    doc = add(service, ctx, ns, "Is it half written? Never, not once.", request_id="req-fault-1")
    assert doc.fact_count == 2  # the retry is a fresh write, not a collision with a ghost


def test_update_failing_after_supersede_leaves_old_version_latest(service: MemoryService,
                                                                  ctx: CallerContext, ns: str,
                                                                  graph: neo4j.Driver,
                                                                  monkeypatch: pytest.MonkeyPatch) -> None:
    v1 = add(service, ctx, ns, "Version one.")
    before = counts(graph, ns)
    ran = fail_at(monkeypatch, "version_link")
    with pytest.raises(InjectedFault):
        service.update_memory(ctx, v1.id, UpdateInput(content="Version two."))
    assert {"version_supersede", "documents_create", "facts_create"} <= set(ran)
    assert counts(graph, ns) == before
    rows = query(graph, "MATCH (d:Document {id: $id})-[:CONTAINS]->(f:Fact) "
                        "RETURN d.is_latest AS d, d.superseded_at AS s, f.is_latest AS f", id=v1.id)
    assert rows == [{"d": True, "s": None, "f": True}]


def test_hard_delete_failing_half_way_deletes_nothing(service: MemoryService, ctx: CallerContext, ns: str,
                                                      graph: neo4j.Driver,
                                                      monkeypatch: pytest.MonkeyPatch) -> None:
    v1 = add(service, ctx, ns, "Keep me. Please.")
    before = counts(graph, ns)
    ran = fail_at(monkeypatch, "chain_delete_documents")
    with pytest.raises(InjectedFault):
        service.forget(ctx, v1.id, ForgetRequest(mode=ForgetMode.hard))
    assert "chain_delete_facts" in ran
    assert counts(graph, ns) == before


@pytest.fixture
def retrying(runtime: Runtime, monkeypatch: pytest.MonkeyPatch) -> Iterator[Callable[[float], GraphStore]]:
    """Stores on the test engine with a given retry budget, whose waits between attempts are instant (the
    budget is then spent on real attempts, many more than a count of attempts would have allowed)."""
    address = store_address(runtime)
    driver = GraphStore.open_driver(address["neo4j_uri"], address["neo4j_user"], address["neo4j_password"], 2.0)
    monkeypatch.setattr(GraphStore, "_sleep", staticmethod(lambda seconds: None))
    yield lambda budget: GraphStore(driver, runtime.store.database, runtime.store.dialect, transaction_timeout_s=5,
                                    retry_budget_s=budget)
    driver.close()


def test_a_write_meeting_concurrent_changes_for_its_whole_budget_is_503_with_retry_after(
        retrying: Callable[[float], GraphStore]) -> None:
    """The bundled engine reports a read of a record another transaction just deleted as EntityNotFound: the
    store retries it like a write conflict, for its time budget; then the server is busy (503), which is not the
    caller's conflict (409)."""
    calls = 0

    def always_racing(tx: Tx) -> None:
        nonlocal calls
        calls += 1
        tx.run("ping")  # a real transaction each time
        raise Neo4jError._hydrate_neo4j(code="Neo.ClientError.Statement.EntityNotFound", message="deleted")

    started = time.monotonic()
    with pytest.raises(Contended) as raised:
        retrying(0.5).write(always_racing)
    elapsed = time.monotonic() - started
    assert raised.value.http_status == 503 and raised.value.details["retry_after"] >= 1
    assert 0.5 <= elapsed < 3 and calls > 12, (elapsed, calls)  # a budget of time, not of attempts


def test_a_write_that_gets_through_within_its_budget_succeeds(retrying: Callable[[float], GraphStore]) -> None:
    calls = 0

    def conflicting_then_through(tx: Tx) -> int:
        nonlocal calls
        calls += 1
        if calls <= 20:
            raise RetryTransaction
        return int(tx.single("ping") is not None)

    assert retrying(10.0).write(conflicting_then_through) == 1 and calls == 21


def test_a_write_that_lost_a_conflict_retries_alone(retrying: Callable[[float], GraphStore]) -> None:
    """Two writers keep one write each in flight without a gap; a third write conflicts whenever another is in
    flight. Its first attempt meets one and loses; its retry waits for the writes in flight to end and keeps
    new ones back, so it runs alone and gets through at its second attempt, rather than losing until its
    budget ends."""
    store = retrying(3.0)
    lock = threading.Lock()
    in_flight = 0
    first_lost = threading.Event()
    stop = threading.Event()

    def other(tx: Tx) -> None:
        nonlocal in_flight
        with lock:
            in_flight += 1
        first_lost.wait(timeout=5)  # hold until the contested write has met this one
        time.sleep(0.05)
        with lock:
            in_flight -= 1

    def keep_writing() -> None:
        while not stop.is_set():
            store.write(other)

    attempts: list[int] = []

    def contested(tx: Tx) -> int:
        with lock:
            attempts.append(in_flight)
        first_lost.set()
        if attempts[-1]:
            raise RetryTransaction
        return int(tx.single("ping") is not None)

    writers = [threading.Thread(target=keep_writing) for _ in range(2)]
    for writer in writers:
        writer.start()
    while not in_flight:
        time.sleep(0.001)
    try:
        assert store.write(contested) == 1
    finally:
        stop.set()
        for writer in writers:
            writer.join()
    assert attempts[0] > 0 and attempts[1:] == [0], attempts


def test_the_time_a_write_waits_for_its_turn_is_not_spent_against_its_budget(
        retrying: Callable[[float], GraphStore]) -> None:
    """A retry that runs alone for a second holds a second write back for that second, three times the budget.
    The second write then loses a conflict once: queued behind another writer is not contended, so it retries
    and gets through instead of answering 503."""
    store = retrying(0.3)
    alone = threading.Event()
    first_calls: list[float] = []

    def slow_retry(tx: Tx) -> int:
        first_calls.append(time.monotonic())
        if len(first_calls) == 1:
            raise RetryTransaction
        alone.set()
        time.sleep(1.0)
        return int(tx.single("ping") is not None)

    holder = threading.Thread(target=store.write, args=(slow_retry,))
    holder.start()
    assert alone.wait(timeout=5)
    second_calls = 0

    def losing_once(tx: Tx) -> int:
        nonlocal second_calls
        second_calls += 1
        if second_calls == 1:
            raise RetryTransaction
        return int(tx.single("ping") is not None)

    started = time.monotonic()
    try:
        assert store.write(losing_once) == 1
    finally:
        holder.join()
    assert second_calls == 2 and time.monotonic() - started >= 0.8


def test_writes_that_run_alone_take_their_turns_in_the_order_they_asked() -> None:
    turns = Turns()
    release = threading.Event()
    order: list[int] = []

    def hold() -> None:
        with turns.alone():
            release.wait(timeout=5)

    def wait_alone(number: int) -> None:
        with turns.alone():
            order.append(number)

    threads = [threading.Thread(target=hold)] + [threading.Thread(target=wait_alone, args=(n,)) for n in range(6)]
    for asked, thread in enumerate(threads, start=1):
        thread.start()
        while turns.asked < asked:  # each has its ticket before the next asks
            time.sleep(0.001)
    release.set()
    for thread in threads:
        thread.join()
    assert order == list(range(6))


def test_two_writes_that_lock_each_other_s_records_both_commit(runtime: Runtime, service: MemoryService,
                                                                  ctx: CallerContext, ns: str,
                                                                  graph: neo4j.Driver) -> None:
    """Two writes lock the same two memories in opposite orders, each holding its first lock until the other has
    taken its own: a real deadlock on Neo4j (which fails one of them with a TransientError), a write conflict at
    commit on the bundled engine. Either way the store's one retry loop tries the loser again, and both commit."""
    first, second = add(service, ctx, ns, "The first memory."), add(service, ctx, ns, "The second memory.")
    both_hold_one = threading.Barrier(2, timeout=20)
    attempts: list[str] = []

    def locking(ids: tuple[str, str], name: str) -> Callable[[Tx], None]:
        def write(tx: Tx) -> None:
            attempts.append(name)
            tx.run("chain_lock", id=ids[0], namespaces=[ns], token=name)
            if attempts.count(name) == 1:
                both_hold_one.wait()
            tx.run("chain_lock", id=ids[1], namespaces=[ns], token=name)
        return write

    with ThreadPoolExecutor(2) as pool:
        done = [pool.submit(runtime.store.write, locking(ids, name))
                for ids, name in (((first.id, second.id), "a"), ((second.id, first.id), "b"))]
        for writer in done:
            writer.result(60)  # both commit: neither raises
    assert len(attempts) >= 3 and {"a", "b"} <= set(attempts), attempts  # one of them lost, and went again
    tokens = query(graph, "MATCH (d:Document) WHERE d.namespace = $ns RETURN d.lock_token AS t", ns=ns)
    assert len(tokens) == 2 and len({row["t"] for row in tokens}) == 1  # one of them committed last, whole


def test_a_conflict_the_request_causes_is_not_retried(retrying: Callable[[float], GraphStore]) -> None:
    calls = 0

    def stale(tx: Tx) -> None:
        nonlocal calls
        calls += 1
        raise Conflict("memory x is at version 3, not 2", next_step="read it again")

    with pytest.raises(Conflict):
        retrying(10.0).write(stale)
    assert calls == 1


def test_the_removed_attempt_count_is_said_to_be_ignored(runtime: Runtime, caplog: pytest.LogCaptureFixture) -> None:
    with caplog.at_level("WARNING", logger="graphmem.runtime"), \
            Runtime.open(runtime.settings.model_copy(update={"write_retry_attempts": 12}), own_engine=False):
        pass
    said = [r.getMessage() for r in caplog.records if "GRAPHMEM_WRITE_RETRY_ATTEMPTS" in r.getMessage()]
    assert len(said) == 1 and "ignored" in said[0]


def test_a_read_of_a_record_caught_mid_write_is_retried_and_logged(retrying: Callable[[float], GraphStore],
                                                                    caplog: pytest.LogCaptureFixture) -> None:
    """The bundled engine's general error for a multi-page record read while concurrent writes moved it (seen
    once under twelve writers) is retried like a conflict, with a line in the log; other general errors are not."""
    calls = 0

    def torn_once(tx: Tx) -> int:
        nonlocal calls
        calls += 1
        if calls == 1:
            raise Neo4jError._hydrate_neo4j(code="Neo.DatabaseError.General.UnknownError", message=(
                "Error executing Cypher command: ... Caused by: Multi-page record #1:83 has a broken chunk chain"))
        return int(tx.single("ping") is not None)

    with caplog.at_level("WARNING", logger="graphmem.store.driver"):
        assert retrying(10.0).write(torn_once) == 1 and calls == 2
    assert "could not read a record being written" in caplog.text

    def broken(tx: Tx) -> None:
        raise Neo4jError._hydrate_neo4j(code="Neo.DatabaseError.General.UnknownError", message="disk on fire")

    with pytest.raises(GraphmemError) as raised:
        retrying(10.0).write(broken)
    assert raised.value.http_status == 500 and raised.value.details["ref"]


def test_an_engine_error_without_its_cause_is_tried_again_a_few_times(retrying: Callable[[float], GraphStore],
                                                                      caplog: pytest.LogCaptureFixture) -> None:
    """The same torn read, when the engine's message names only the statement: tried again up to
    OPAQUE_ATTEMPTS times (it passes the next time), and a statement that keeps failing so is the caller's 500
    after exactly that many tries, not a 503 after the whole retry budget."""
    from graphmem.store.driver import OPAQUE_ATTEMPTS

    def opaque() -> Neo4jError:
        return Neo4jError._hydrate_neo4j(code="Neo.DatabaseError.General.UnknownError",
                                         message="Error executing Cypher command: UNWIND $links AS link ...")

    calls = 0

    def torn_twice(tx: Tx) -> int:
        nonlocal calls
        calls += 1
        if calls < OPAQUE_ATTEMPTS:
            raise opaque()
        return int(tx.single("ping") is not None)

    with caplog.at_level("WARNING", logger="graphmem.store.driver"):
        assert retrying(10.0).write(torn_twice) == 1 and calls == OPAQUE_ATTEMPTS
    assert "without saying why" in caplog.text

    calls = 0

    def always(tx: Tx) -> None:
        nonlocal calls
        calls += 1
        raise opaque()

    with pytest.raises(GraphmemError) as raised:
        retrying(10.0).write(always)
    assert raised.value.http_status == 500 and raised.value.details["ref"] and calls == OPAQUE_ATTEMPTS
