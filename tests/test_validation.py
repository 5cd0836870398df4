"""Bad input gets a typed error, names the problem, and writes nothing."""

from __future__ import annotations

from typing import Any

import neo4j
import pytest
from factories import add
from pydantic import ValidationError

from graphmem.errors import InvalidInput, NotFound
from graphmem.model import (
    MAX_OFFSET,
    CallerContext,
    DocumentInput,
    DocumentListOptions,
    TripleQuery,
    UpdateInput,
    View,
    parse,
)
from graphmem.service import MemoryService
from helpers import counts, query

BAD_ADDS: dict[str, dict[str, Any]] = {
    "blank": {"content": "  \n\t "},
    "empty": {"content": ""},
    "content_not_text": {"content": 42},
    "too_long": {"content": "x" * 100_001},
    "title_too_long": {"content": "ok", "title": "t" * 501},
    "source_too_long": {"content": "ok", "source": "s" * 201},
    "request_id_short": {"content": "ok", "request_id": "short"},
    "request_id_bad_chars": {"content": "ok", "request_id": "has spaces in it"},
    "request_id_long": {"content": "ok", "request_id": "r" * 101},
    "metadata_nested": {"content": "ok", "metadata": {"a": {"b": 1}}},
    "metadata_list": {"content": "ok", "metadata": {"a": [1, 2]}},
    "metadata_mixed_list": {"content": "ok", "metadata": {"a": [1, "a"]}},
    "metadata_null": {"content": "ok", "metadata": {"a": None}},
    "metadata_nan": {"content": "ok", "metadata": {"a": float("nan")}},
    "metadata_huge_int": {"content": "ok", "metadata": {"a": 2**70}},
    "metadata_oversized": {"content": "ok", "metadata": {f"k{i}": "v" * 100 for i in range(90)}},
    "metadata_not_map": {"content": "ok", "metadata": ["a"]},
    "metadata_empty_key": {"content": "ok", "metadata": {"": 1}},
}


@pytest.mark.parametrize("case", sorted(BAD_ADDS))
def test_bad_add_is_invalid_and_writes_nothing(service: MemoryService, ctx: CallerContext, ns: str,
                                               graph: neo4j.Driver, case: str) -> None:
    add(service, ctx, ns, "Existing memory.")
    before = counts(graph, ns)
    with pytest.raises(InvalidInput) as raised:
        parse(DocumentInput, BAD_ADDS[case])
    assert raised.value.message
    assert counts(graph, ns) == before


def test_limits_are_exact(service: MemoryService, ctx: CallerContext, ns: str) -> None:
    doc = add(service, ctx, ns, "x" * 100_000, title="t" * 500, source="s" * 200,
              request_id="r" * 100, metadata={"k": "v" * 8000})
    assert len(service.get_version(ctx, doc.id).content or "") == 100_000


@pytest.mark.parametrize("namespace", ["", "a" * 65, "has space", "slash/ns", "_system", "_private", None, 7])
def test_bad_namespace(service: MemoryService, ctx: CallerContext, ns: str, graph: neo4j.Driver,
                       namespace: Any) -> None:
    add(service, ctx, ns, "Existing memory.")
    before = counts(graph, ns), counts(graph, "_system")
    with pytest.raises(InvalidInput):
        add(service, ctx, namespace, "Text.")
    if namespace is None:  # a list that names no namespace covers every one the caller may read
        assert service.list_memories(ctx, namespace).namespaces == [ns]
    else:
        with pytest.raises(InvalidInput):
            service.list_memories(ctx, namespace)
    assert (counts(graph, ns), counts(graph, "_system")) == before


@pytest.mark.parametrize(("offset", "limit"), [(-10, 10), (-20, 10), (0, 0), (0, 201), (0, 500), ("0", 10),
                                               (0, True), (10**18, 10), (MAX_OFFSET + 1, 10)])
def test_bad_paging(service: MemoryService, ctx: CallerContext, ns: str, graph: neo4j.Driver, offset: Any,
                    limit: Any) -> None:
    add(service, ctx, ns, "Existing memory.")
    before = counts(graph, ns)
    with pytest.raises(InvalidInput) as raised:
        parse(DocumentListOptions, {"offset": offset, "limit": limit})
    if limit in (0, 201, 500):
        assert "1 to 200" in raised.value.message
    if isinstance(offset, int) and offset > MAX_OFFSET:
        assert "cursor" in raised.value.message
    assert counts(graph, ns) == before


def test_paging_bounds_are_exact(service: MemoryService, ctx: CallerContext, ns: str) -> None:
    doc = add(service, ctx, ns, "Existing memory.")
    deepest = service.list_memories(ctx, ns, parse(DocumentListOptions, {"offset": MAX_OFFSET, "limit": 200}))
    assert deepest.items == [] and deepest.total == 1 and deepest.limit == 200
    first = service.list_memories(ctx, ns, parse(DocumentListOptions, {"offset": 0, "limit": 1}))
    assert [d.id for d in first.items] == [doc.id] and first.next_cursor is None


@pytest.mark.parametrize("view", [{"as_of": 2**70}, {"as_of": -1}, {"as_of": "yesterday"},
                                  {"include_forgotten": "yes"}, {"mode": "all"}])
def test_bad_view(view: dict[str, Any]) -> None:
    with pytest.raises(ValidationError):
        View(**view)


def test_metadata_is_stored_as_sent(service: MemoryService, ctx: CallerContext, ns: str,
                                    graph: neo4j.Driver) -> None:
    doc = add(service, ctx, ns, "Accents.", metadata={"name": "é" * 4000})
    stored = query(graph, "MATCH (d:Document {id: $id}) RETURN d.metadata AS m", id=doc.id)[0]["m"]
    assert len(stored.encode()) <= 8192 and "é" in stored


def test_bad_updates_write_nothing(service: MemoryService, ctx: CallerContext, ns: str,
                                   graph: neo4j.Driver) -> None:
    doc = add(service, ctx, ns, "Original.")
    before = counts(graph, ns)
    for fields in ({"content": " "}, {"content": "x" * 100_001}, {"content": "ok", "expected_version": 0},
                   {"content": "ok", "expected_version": "1"}, {"content": "ok", "request_id": "bad id!"}):
        with pytest.raises(InvalidInput):
            parse(UpdateInput, fields)
    for bad_id in ("", "x" * 101, "semi;colon", None):
        with pytest.raises(InvalidInput):
            service.get_version(ctx, bad_id)  # type: ignore[arg-type]
    with pytest.raises(NotFound):
        service.get_version(ctx, "00000000-0000-4000-8000-000000000000")
    assert counts(graph, ns) == before
    unchanged = service.get_version(ctx, doc.id)
    assert unchanged.content == "Original." and unchanged.version == 1 and unchanged.is_latest


def test_error_lists_every_problem(service: MemoryService, ctx: CallerContext, ns: str) -> None:
    with pytest.raises(InvalidInput) as raised:
        parse(DocumentInput, {"content": " ", "title": "t" * 501})
    assert "content" in raised.value.message and "title" in raised.value.message


@pytest.mark.parametrize("part", ["subject", "object", "term"])
def test_triple_parts_are_bounded_as_entity_names(part: str) -> None:
    """A triple's parts are entity names: 200 characters at most on every front end (MCP's tool says so too)."""
    assert getattr(TripleQuery(**{part: "x" * 200}), part) == "x" * 200
    with pytest.raises(ValidationError):
        TripleQuery(**{part: "x" * 201})
