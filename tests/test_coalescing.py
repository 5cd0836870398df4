"""Concurrent remembers share one NLP pass, and each caller keeps its own outcome (``service/coalescing.py``).

The passes here gather for 400 ms, so that callers started together surely meet in one pass; a barrier starts
them together."""

from __future__ import annotations

import asyncio
import threading
import uuid
from collections.abc import Callable, Iterator
from typing import Any

import httpx
import pytest
from factories import add

import gql_helpers
import mcp_helpers
from graphmem.app import create_app
from graphmem.errors import Conflict, Forbidden, GraphmemError, InvalidInput
from graphmem.model import CallerContext, DocumentInput
from graphmem.results import Change, Document
from graphmem.runtime import Runtime
from graphmem.service.adding import Adding
from graphmem.service.coalescing import Coalescer
from graphmem.service.memory import MemoryService
from helpers import coalescer, served

WINDOW_MS = 400


def together(calls: list[Callable[[], Any]]) -> list[Any]:
    """Each call in its own thread, started at once; each one's result or the exception it raised."""
    barrier = threading.Barrier(len(calls))
    results: list[Any] = [None] * len(calls)

    def run(i: int) -> None:
        barrier.wait()
        try:
            results[i] = calls[i]()
        except Exception as exc:  # the outcome under test
            results[i] = exc

    threads = [threading.Thread(target=run, args=(i,)) for i in range(len(calls))]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(120)
    return results


def adder(shared: Coalescer, ctx: CallerContext, ns: str,
          item: DocumentInput) -> Callable[[], tuple[Document, Change]]:
    return lambda: shared.add(shared_adding(shared).checked(ctx, ns, item))


def shared_adding(shared: Coalescer) -> Adding:
    return shared._adding  # the same part the coalescer writes with


def test_concurrent_adds_share_one_pass_and_keep_their_own_answers(service: MemoryService) -> None:
    shared = coalescer(service, WINDOW_MS)
    namespaces = [f"t-{uuid.uuid4().hex[:10]}" for _ in range(2)]
    ctx = CallerContext.for_namespaces(*namespaces)
    texts = [f"Note {i}: Priya Raman moved the {word} service to Kafka." for i, word in
             enumerate(["billing", "search", "export", "ingest", "alerting", "payments"])]
    results = together([adder(shared, ctx, namespaces[i % 2], DocumentInput(content=text))
                        for i, text in enumerate(texts)])
    assert shared.passes() == {6: 1}
    for i, (text, (document, change)) in enumerate(zip(texts, results, strict=True)):
        assert change is Change.created and document.content == text and document.namespace == namespaces[i % 2]
        assert document.fact_count == 1
    assert {len(service.list_memories(ctx, ns).items) for ns in namespaces} == {3}


def test_one_callers_conflict_or_bad_item_fails_no_other(service: MemoryService, ctx: CallerContext,
                                                          ns: str) -> None:
    first = add(service, ctx, ns, "The first note.", request_id="used-once")
    shared = coalescer(service, WINDOW_MS, content_chars=100)
    other = CallerContext.for_namespaces(f"t-{uuid.uuid4().hex[:10]}")
    huge = "word " * 30
    results = together([
        adder(shared, ctx, ns, DocumentInput(content="Other text, used id.", request_id="used-once")),
        adder(shared, ctx, ns, DocumentInput(content="A fresh note on Lisbon.", request_id="fresh-request")),
        adder(shared, ctx, ns, DocumentInput(content=huge)),
        adder(shared, other, ns, DocumentInput(content="Not allowed here.")),
        adder(shared, ctx, ns, DocumentInput(content="The first note.")),
    ])
    reused, fresh, too_long, forbidden, same_text = results
    assert isinstance(reused, Conflict) and isinstance(too_long, InvalidInput) and isinstance(forbidden, Forbidden)
    assert fresh[1] is Change.created and fresh[0].content == "A fresh note on Lisbon."
    assert same_text[1] is Change.unchanged
    assert shared.passes() == {3: 1}  # the refused callers never joined the pass
    assert same_text[0].id == first.id
    assert {memory.id for memory in service.list_memories(ctx, ns).items} == {first.id, fresh[0].id}


def test_one_request_id_from_two_callers_in_one_pass_is_one_request(service: MemoryService, ctx: CallerContext,
                                                                    ns: str) -> None:
    """Whichever arrives first creates the memory; a caller with the same request is answered with it, one with
    other content under the id is a conflict."""
    shared = coalescer(service, WINDOW_MS)
    texts = ["Ana runs the Oslo office.", "Ana runs the Oslo office.", "Ana left the Oslo office."]
    results = together([adder(shared, ctx, ns, DocumentInput(content=text, request_id="twice-sent"))
                        for text in texts])
    assert shared.passes() == {3: 1}
    (created,) = [r for r in results if not isinstance(r, Exception) and r[1] is Change.created]
    for text, result in zip(texts, results, strict=True):
        if result is created:
            continue
        if text == created[0].content:
            assert result[0].id == created[0].id and result[1] is Change.unchanged
        else:
            assert isinstance(result, Conflict)
    assert [m.id for m in service.list_memories(ctx, ns).items] == [created[0].id]


def failing_on(shared: Coalescer, word: str, error: Exception, monkeypatch: pytest.MonkeyPatch) -> Adding:
    """The coalescer's pass fails with ``error`` whenever one of its memories holds ``word``."""
    adding = shared_adding(shared)
    original = adding.prepare

    def failing(memories: list[Any], progress: Any = None) -> Any:
        if any(word in m.input.content for m in memories):
            raise error
        return original(memories, progress)

    monkeypatch.setattr(adding, "prepare", failing)
    return adding


def test_a_failed_pass_reaches_its_callers_only(service: MemoryService, ctx: CallerContext, ns: str,
                                                monkeypatch: pytest.MonkeyPatch) -> None:
    shared = coalescer(service, WINDOW_MS)
    adding = failing_on(shared, "fail", GraphmemError("the pass failed"), monkeypatch)
    failed = together([adder(shared, ctx, ns, DocumentInput(content=f"Please fail {i}.")) for i in range(2)])
    assert all(isinstance(outcome, GraphmemError) for outcome in failed)
    _, change = shared.add(adding.checked(ctx, ns, DocumentInput(content="The next pass works.")))
    assert change is Change.created and shared.passes() == {2: 1, 1: 1}


def test_a_text_the_pass_cannot_take_fails_alone(service: MemoryService, ctx: CallerContext, ns: str,
                                                  monkeypatch: pytest.MonkeyPatch) -> None:
    """A pass failing otherwise than on a model or the database is run again memory by memory."""
    shared = coalescer(service, WINDOW_MS)
    failing_on(shared, "explode", ValueError("the parser gave up"), monkeypatch)
    texts = ["Oslo has a harbour.", "Please explode.", "Lisbon has trams."]
    results = together([adder(shared, ctx, ns, DocumentInput(content=text)) for text in texts])
    assert isinstance(results[1], ValueError)
    assert [r[1] for r in (results[0], results[2])] == [Change.created, Change.created]
    assert shared.passes() == {3: 1, 1: 3}


def test_no_window_adds_each_alone(service: MemoryService, ctx: CallerContext, ns: str) -> None:
    shared = coalescer(service, window_ms=0)
    results = together([adder(shared, ctx, ns, DocumentInput(content=f"Alone {i} in Berlin."))
                        for i in range(3)])
    assert all(change is Change.created for _, change in results)
    assert shared.passes() == {1: 3}


def test_a_pass_takes_at_most_its_maximum(service: MemoryService, ctx: CallerContext, ns: str) -> None:
    shared = coalescer(service, WINDOW_MS, most=2)
    results = together([adder(shared, ctx, ns, DocumentInput(content=f"Capped {i} in Madrid."))
                        for i in range(5)])
    assert all(change is Change.created for _, change in results)
    assert sum(size * n for size, n in shared.passes().items()) == 5 and max(shared.passes()) == 2


@pytest.fixture
def base_url(runtime: Runtime, monkeypatch: pytest.MonkeyPatch) -> Iterator[str]:
    monkeypatch.setattr(runtime.service, "coalescer", coalescer(runtime.service, WINDOW_MS))
    with served(create_app(runtime=runtime)) as url:
        yield url


def test_remembers_from_every_front_end_share_a_pass(runtime: Runtime, base_url: str, ns: str) -> None:
    """/v1, GraphQL and MCP over Streamable HTTP, at once: one pass, each answered with its own memory."""
    token = gql_helpers.credential(runtime, [ns])
    headers = {"Authorization": f"Bearer {token}"}
    mutation = 'mutation($c: String!) { remember(content: $c) { ... on Memory { id content } } }'

    def over_v1() -> str:
        answer = httpx.post(f"{base_url}/v1/remember", json={"content": "Via REST: Lena joined Globex."},
                            headers=headers, timeout=60)
        assert answer.status_code == 201, answer.text
        return str(answer.json()["id"])

    def over_graphql() -> str:
        answer = httpx.post(f"{base_url}/graphql", json={"query": mutation,
                                                          "variables": {"c": "Via GraphQL: Lena visited Oslo."}},
                            headers=headers, timeout=60)
        return str(answer.json()["data"]["remember"]["id"])

    async def mcp_call() -> str:
        async with mcp_helpers.over_http(f"{base_url}/mcp", token) as client:
            result = await client.call_tool("add_memory", {"content": "Via MCP: Lena uses Kafka."})
            assert not result.is_error, mcp_helpers.error_text(result)
            assert result.structured_content is not None
            return str(result.structured_content["id"])

    ids = together([over_v1, over_graphql, lambda: asyncio.run(mcp_call())])
    assert all(isinstance(i, str) for i in ids), ids
    passes = runtime.service.coalescer.passes()
    assert len(set(ids)) == 3 and max(passes) >= 2, passes
    ctx = CallerContext.for_namespaces(ns)
    assert {m.id for m in runtime.service.list_memories(ctx, ns).items} == set(ids)
    metrics = httpx.get(f"{base_url}/metrics").text  # the pass sizes, for benchmarks/concurrency.py
    assert "graphmem_remember_pass_memories_sum 3.0" in metrics
    assert f"graphmem_remember_pass_memories_count {sum(passes.values())}.0" in metrics
