"""spaCy is used by ingestion and by triple search (predicate lemmas); every use takes the language lock, and
a search waits for at most one chunk of an ingest, not for the whole batch."""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from types import TracebackType

import pytest

from graphmem.model import CallerContext, DocumentInput, TripleQuery
from graphmem.nlp import language
from graphmem.service import MemoryService
from graphmem.turns import TurnLock

WAIT_BOUND_S = 3.0  # a triple search during an ingest; one chunk of parsing takes well under a second


class CountingLock:
    """The real lock, counting who takes it."""

    def __init__(self) -> None:
        self._lock = TurnLock()
        self.taken: list[str] = []

    def __enter__(self) -> None:
        self._lock.__enter__()
        self.taken.append(threading.current_thread().name)

    def __exit__(self, kind: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None) -> None:
        self._lock.__exit__(kind, exc, tb)


def drawn(lock: TurnLock, tickets: int) -> None:
    """Wait until ``tickets`` callers have drawn their tickets: the holder and those now waiting."""
    deadline = time.monotonic() + 10
    while lock.drawn < tickets and time.monotonic() < deadline:
        time.sleep(0.001)


def test_the_language_lock_is_taken_in_turns() -> None:
    """A caller waiting for the lock gets it before its holder's next turn (an ingest's next chunk): with a
    plain lock the holder, releasing and asking again at once, wins that race most of the time."""
    lock = TurnLock()
    order: list[str] = []

    def search() -> None:
        with lock:
            order.append("search")

    with lock:
        order.append("chunk 1")
        waiting = threading.Thread(target=search)
        waiting.start()
        drawn(lock, 2)  # the search waits
    with lock:
        order.append("chunk 2")
    waiting.join(timeout=10)
    assert order == ["chunk 1", "search", "chunk 2"]


def test_a_caller_that_stops_waiting_does_not_hold_up_the_next(monkeypatch: pytest.MonkeyPatch) -> None:
    """A waiter interrupted before its turn gives the turn up: the callers after it still get theirs."""
    lock = TurnLock()
    wait_for = lock._turns.wait_for

    def interrupted(predicate: Callable[[], bool], timeout: float | None = None) -> bool:
        if threading.current_thread().name == "interrupted":
            raise KeyboardInterrupt
        return wait_for(predicate, timeout)

    monkeypatch.setattr(lock._turns, "wait_for", interrupted)
    got: list[str] = []

    def take() -> None:
        try:
            with lock:
                got.append(threading.current_thread().name)
        except KeyboardInterrupt:
            got.append("gave up")

    with lock:
        for name in ("interrupted", "next"):
            thread = threading.Thread(target=take, name=name)
            thread.start()
            drawn(lock, 2 if name == "interrupted" else 3)  # it waits, in this order
    thread.join(timeout=10)
    assert got == ["gave up", "next"]


def test_triple_search_takes_the_language_lock(service: MemoryService, ctx: CallerContext, ns: str,
                                                monkeypatch: pytest.MonkeyPatch) -> None:
    service.add_memory(ctx, ns, DocumentInput(content="Nadia moved to Lisbon."))
    counting = CountingLock()
    monkeypatch.setattr(language, "_LOCK", counting)
    found = service.search_triples(ctx, TripleQuery(predicate="moved to")).items
    assert [t.statement for t in found] == ["Nadia move to Lisbon"]
    assert counting.taken == [threading.current_thread().name]


def test_triple_searches_during_an_ingest_are_correct_and_wait_little(service: MemoryService, ctx: CallerContext,
                                                                      ns: str) -> None:
    service.add_memory(ctx, ns, DocumentInput(content="Marcus likes Kafka. Priya moved to Porto."))
    expected = {predicate: [t.statement for t in service.search_triples(ctx, TripleQuery(predicate=predicate)).items]
                for predicate in ("likes", "moved to")}
    sentences = " ".join(f"Engineer{i} Okafor reviewed the report number {i} with Dara." for i in range(600))
    done = threading.Event()

    def ingest() -> None:
        try:
            service.add_memory(ctx, ns, DocumentInput(content=sentences))
        finally:
            done.set()

    def search(predicate: str) -> tuple[list[str], float]:
        started = time.perf_counter()
        found = service.search_triples(ctx, TripleQuery(predicate=predicate, object="Kafka" if predicate == "likes"
                                                        else "Porto"))
        return [t.statement for t in found.items], time.perf_counter() - started

    writer = threading.Thread(target=ingest, name="ingest")
    writer.start()
    results: list[tuple[str, list[str], float]] = []
    with ThreadPoolExecutor(max_workers=3) as pool:
        while not done.is_set() or not results:
            predicates = ["likes", "moved to", "likes"]
            for predicate, (statements, seconds) in zip(predicates, pool.map(search, predicates), strict=True):
                results.append((predicate, statements, seconds))
    writer.join(timeout=300)
    assert not writer.is_alive()
    for predicate, statements, seconds in results:
        assert statements == expected[predicate]
        assert seconds < WAIT_BOUND_S, f"a triple search waited {seconds:.2f} s during an ingest"
    assert len(results) >= 3
