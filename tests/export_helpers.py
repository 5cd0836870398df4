"""What the export tests share: data that stresses escaping, export and paging calls, a spy on the
statements a transaction runs, and a version chain and a hub of facts to export."""

from __future__ import annotations

import subprocess
import threading
from pathlib import Path
from typing import Any

import neo4j
import pytest
from factories import add

from graphmem.model import (
    CURRENT,
    CallerContext,
    DocumentInput,
    ExportFormat,
    ExportRequest,
    ForgetMode,
    ForgetRequest,
    UpdateInput,
    View,
    parse,
)
from graphmem.results import Document, ExportResult, RenderedExport
from graphmem.service import MemoryService
from graphmem.store.driver import Tx
from helpers import cypher_gate, query

NASTY = [
    "", "plain", "it's", 'say "hi"', "back\\slash", "\\'", "\\u0041 is not A", "line\nbreak", "cr\rlf\r\n",
    "tab\there", "nul\x00byte", "bell\x07 esc\x1b del\x7f", "c1\x85\x9f", "sep\u2028para\u2029",
    "bidi\u202eevil\u202c", "zero\u200bwidth\ufeff", "Zoë 中文 ‽", "emoji 😀 family 👨\u200d👩\u200d👧",
    "tag\U000e0041", "private\ue000 and \U000f0000", "unassigned\u0378", "'); MATCH (n) DETACH DELETE n //",
    "$param {{ fragment }} /* comment */", "ends with backslash\\",
]
NASTY_DOCUMENT = "Zoë's \"quoted\" note: back\\slash, tab\t, bell\x07, RLO\u202e done. Zoë likes Kafka."


# ---- helpers ----------------------------------------------------------------------------------------


def add_all(service: MemoryService, ctx: CallerContext, ns: str, contents: list[str]) -> list[Document]:
    return [c.document for c in service.add_memories(ctx, ns, [DocumentInput(content=content) for content in contents])]


def request(seed: Any, caps: Any, view: View = CURRENT, cursor: str | None = None) -> ExportRequest:
    """An export request from plain seed and caps dicts (a bad one is ``InvalidInput``, as from a front end)."""
    return parse(ExportRequest, {"seed": seed, "caps": caps, "view": view, "cursor": cursor})


def export(service: MemoryService, ctx: CallerContext, ns: str, seed: dict[str, Any], caps: dict[str, Any],
           view: View = CURRENT, cursor: str | None = None) -> ExportResult:
    result = service.export(ctx, ns, request(seed, caps, view, cursor))
    assert isinstance(result, ExportResult)
    return result


def rendered(service: MemoryService, ctx: CallerContext, ns: str, seed: dict[str, Any], caps: dict[str, Any],
             format: ExportFormat, target_namespace: str | None = None) -> RenderedExport:
    result = service.render_export(export(service, ctx, ns, seed, caps), format, ns, target_namespace)
    assert isinstance(result, RenderedExport)
    return result


def all_pages(service: MemoryService, ctx: CallerContext, ns: str, seed: dict[str, Any],
              caps: dict[str, Any]) -> list[ExportResult]:
    pages = [export(service, ctx, ns, seed, caps)]
    while pages[-1].next_cursor is not None:
        pages.append(export(service, ctx, ns, seed, caps, cursor=pages[-1].next_cursor))
        assert len(pages) < 100
    return pages


def edge_keys(result: ExportResult) -> list[tuple[Any, ...]]:
    return [(e.source, e.target, e.kind, e.predicate, e.negated, e.fact_id) for e in result.edges]


def check_edges_between_nodes(result: ExportResult) -> None:
    kinds = {n.id: n.kind for n in result.nodes}
    for edge in result.edges:
        assert edge.source in kinds and edge.target in kinds
        if edge.kind == "triple":
            assert kinds.get(edge.fact_id or "") == "fact"  # every triple cites a fact of the export


def entity_id(graph: neo4j.Driver, ns: str, name: str) -> str:
    rows = query(graph, "MATCH (e:Entity) WHERE e.namespace = $ns AND e.name = $name RETURN e.id AS id",
                 ns=ns, name=name)
    assert len(rows) == 1, rows
    return str(rows[0]["id"])


def gate(statements: list[str], tmp_path: Path) -> subprocess.CompletedProcess[str]:
    return cypher_gate([{"name": f"line {i + 1}", "source": "export", "text": text}
                        for i, text in enumerate(statements)], tmp_path)


def script_statements(script: str) -> list[str]:
    """The script's statements: one per line (comments aside), each ending in ';'."""
    lines = [line for line in script.splitlines() if line and not line.startswith("//")]
    assert all(line.endswith(";") for line in lines)
    return [line.removesuffix(";") for line in lines]


class Calls(list[tuple[str, dict[str, Any], int]]):
    """Statements run: (name, parameters, rows the driver received); ``counting`` says which ran in the
    reachable-document count's own read transaction (its thread)."""

    def __init__(self) -> None:
        super().__init__()
        self.counting: list[bool] = []

    def of(self, counting: bool) -> list[tuple[str, dict[str, Any], int]]:
        return [call for call, count in zip(self, self.counting, strict=True) if count == counting]

    def clear(self) -> None:
        super().clear()
        self.counting.clear()


@pytest.fixture
def spy(monkeypatch: pytest.MonkeyPatch) -> Calls:
    """Every named statement run, with its parameters and the number of rows the driver received (those of
    a statement that returns its rows collected in one list, ``rows``, are counted one by one)."""
    calls = Calls()
    original = Tx.run
    lock = threading.Lock()

    def run(self: Tx, name: str, /, **params: Any) -> list[dict[str, Any]]:
        rows = original(self, name, **params)
        collected = len(rows) == 1 and isinstance(rows[0].get("rows"), list)
        with lock:
            calls.append((name, params, len(rows[0]["rows"]) if collected else len(rows)))
            calls.counting.append(threading.current_thread().name.startswith("graphmem-export-count"))
        return rows

    monkeypatch.setattr(Tx, "run", run)
    return calls


@pytest.fixture
def chain(service: MemoryService, ctx: CallerContext, ns: str) -> tuple[Document, Document, Document]:
    """v1 → v2 of one memory, and a forgotten memory about the same person."""
    v1 = add(service, ctx, ns, "Alice Johnson works at Microsoft. Alice Johnson lives in Seattle.", title="alice")
    v2 = service.update_memory(ctx, v1.id, UpdateInput(
        content="Alice Johnson works at Google. Alice Johnson lives in Seattle.")).document
    gone = add(service, ctx, ns, "Alice Johnson visited Lisbon.")
    service.forget(ctx, gone.id, ForgetRequest(mode=ForgetMode.soft))
    return v1, v2, gone


HUB_TEAMS = ["Atlas", "Borealis", "Cascade", "Dynamo", "Ember", "Fjord", "Glacier", "Harbor", "Iris", "Juniper",
             "Kestrel", "Lumen"]


@pytest.fixture
def hub(service: MemoryService, ctx: CallerContext, ns: str) -> list[Document]:
    """Twelve memories that all mention Kafka (a hub entity)."""
    return add_all(service, ctx, ns, [f"Team {name} streams its audit events through Kafka." for name in HUB_TEAMS])
