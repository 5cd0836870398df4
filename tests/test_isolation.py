"""Namespaces: an id of another namespace is not found, exactly like an id that does not exist."""

from __future__ import annotations

from collections.abc import Callable

import neo4j
import pytest
from factories import add, update

from graphmem.errors import Forbidden, InvalidInput, NotFound
from graphmem.model import (
    CallerContext,
    DocumentListOptions,
    ForgetMode,
    ForgetRequest,
    View,
)
from graphmem.service import MemoryService
from helpers import counts


def forget_as(mode: str) -> ForgetRequest:
    return ForgetRequest(mode=ForgetMode(mode))


@pytest.fixture
def other(service: MemoryService, ns: str) -> tuple[CallerContext, str, str]:
    """A memory with two versions in namespace ``{ns}-other``, owned by another caller."""
    other_ns = f"{ns}-other"
    owner = CallerContext.for_namespaces(other_ns)
    v1 = add(service, owner, other_ns, "Their private memory.")
    v2 = update(service, owner, v1.id, "Their private memory, revised.")
    return owner, v1.id, v2.id


def _by_id(service: MemoryService, ctx: CallerContext, call: str, doc_id: str) -> object:
    calls: dict[str, Callable[[], object]] = {
        "get": lambda: service.get_version(ctx, doc_id),
        "history": lambda: service.history(ctx, doc_id),
        "update": lambda: update(service, ctx, doc_id, "Overwrite."),
        "soft": lambda: service.forget(ctx, doc_id, forget_as("soft")),
        "redact": lambda: service.forget(ctx, doc_id, forget_as("redact")),
        "hard": lambda: service.forget(ctx, doc_id, forget_as("hard")),
        "restore": lambda: service.restore(ctx, doc_id),
    }
    return calls[call]()


ID_CALLS = ["get", "history", "update", "soft", "redact", "hard", "restore"]


@pytest.mark.parametrize("call", ID_CALLS)
def test_id_calls_across_namespaces_are_not_found(service: MemoryService, ctx: CallerContext, ns: str,
                                                  other: tuple[CallerContext, str, str], graph: neo4j.Driver,
                                                  call: str) -> None:
    owner, old_id, latest_id = other
    other_ns = next(iter(owner.write))
    before = counts(graph, other_ns)
    add(service, ctx, ns, "My own memory.")
    missing = "00000000-0000-4000-8000-000000000000"
    with pytest.raises(NotFound) as raised:
        _by_id(service, ctx, call, missing)
    for doc_id in (old_id, latest_id):
        with pytest.raises(NotFound) as crossed:
            _by_id(service, ctx, call, doc_id)
        # the same answer as for an id that does not exist: nothing tells the two apart
        assert crossed.value.message == raised.value.message.replace(missing, doc_id)
        assert crossed.value.details == {"id": doc_id}
    assert counts(graph, other_ns) == before
    assert service.get_version(owner, latest_id).content == "Their private memory, revised."


def test_list_of_another_namespace_is_not_found_and_never_mixes(service: MemoryService, ctx: CallerContext,
                                                                ns: str,
                                                                other: tuple[CallerContext, str, str]) -> None:
    owner, _, _ = other
    other_ns = next(iter(owner.write))
    with pytest.raises(NotFound) as crossed:
        service.list_memories(ctx, other_ns)
    with pytest.raises(NotFound) as missing:
        service.list_memories(ctx, "t-never-created-anywhere")
    assert crossed.value.message == missing.value.message.replace("t-never-created-anywhere", other_ns)
    with pytest.raises(Forbidden):
        add(service, ctx, other_ns, "Planted.")
    mine = add(service, ctx, ns, "Mine.")
    everything = DocumentListOptions(view=View(include_forgotten=True, include_superseded=True))
    assert [d.id for d in service.list_memories(ctx, ns, everything).items] == [mine.id]


def test_read_only_caller_cannot_write(service: MemoryService, ctx: CallerContext, ns: str) -> None:
    doc = add(service, ctx, ns, "Shared.")
    reader = CallerContext(read=frozenset({ns}))
    assert service.get_version(reader, doc.id).content == "Shared."
    assert service.list_memories(reader, ns).total == 1
    for call in (lambda: update(service, reader, doc.id, "x"),
                 lambda: service.forget(reader, doc.id, forget_as("hard")),
                 lambda: service.restore(reader, doc.id),
                 lambda: add(service, reader, ns, "x")):
        with pytest.raises(Forbidden):
            call()
    assert service.get_version(ctx, doc.id).content == "Shared."


def test_system_namespace_cannot_be_named(service: MemoryService) -> None:
    with pytest.raises(InvalidInput):
        CallerContext.for_namespaces("_system")
    ctx = CallerContext.for_namespaces("t-sys")
    with pytest.raises(InvalidInput):
        add(service, ctx, "_system", "Sneaky.")
    with pytest.raises(InvalidInput):
        service.list_memories(ctx, "_system")
