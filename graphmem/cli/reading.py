"""Reading the graph from the terminal: ``search``, ``recall``, ``show``, ``export`` and ``stats``. Like
``ingest`` they run with the local operator's trust against the data directory (or the Neo4j of the settings),
print tables for people (rich: stored text as written, one line per cell) or ``--json`` for scripts, and exit 2
with a one-line message on bad input (1 when the database fails)."""

from __future__ import annotations

import json
from collections.abc import Callable, Iterable, Iterator
from contextlib import contextmanager
from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any, TypeVar

import typer
from pydantic import BaseModel

from graphmem.cli.common import DataDir, as_option, fail, settings
from graphmem.errors import GraphmemError, InvalidInput, NotFound
from graphmem.model import ExportCaps, SearchFilters, View
from graphmem.model.flat import flattened
from graphmem.model.queries import seed_of

if TYPE_CHECKING:
    from rich.table import Table
    from rich.text import Text

    from graphmem.model import CallerContext
    from graphmem.service.memory import MemoryService

T = TypeVar("T")
Namespace = Annotated[str | None, typer.Option("--namespace", "-n", help=(
    "The namespace to read (default: every namespace, at most 100)."))]
AsJson = Annotated[bool, typer.Option("--json", help="Print JSON (the service's result) instead of a table.")]
CELL_CHARS = 120  # a stored Markdown table or long paragraph would otherwise fill the screen in one cell


@contextmanager
def _service(data_dir: Path | None) -> Iterator[MemoryService]:
    from graphmem.runtime import Runtime  # spaCy and torch come with it: after the cheap checks

    try:
        runtime = Runtime.open(settings(data_dir))
    except GraphmemError as exc:
        fail(exc)
    with runtime:
        yield runtime.service


def _run(namespace: str | None, data_dir: Path | None, work: Callable[[MemoryService, CallerContext], T]) -> T:
    """``work`` with the operator's context of ``namespace``, or, for None, of every namespace that holds
    memories (at most ``MAX_NAMESPACES``, as for any caller); a bad namespace fails before anything is opened,
    bad input exits 2, a database failure 1."""
    from graphmem.model import CallerContext, check_namespace

    try:
        names = [check_namespace(namespace)] if namespace is not None else []
    except InvalidInput as exc:
        fail(exc, code=2)
    with _service(data_dir) as service:
        try:
            if namespace is None:
                names = service.every_namespace()
            return work(service, CallerContext.for_namespaces(*names))
        except (InvalidInput, NotFound) as exc:  # the input named nothing there: bad input, not a failure
            fail(exc, code=2)
        except GraphmemError as exc:
            fail(exc)


def _echo_json(result: BaseModel | list[Any]) -> None:
    payload = [r.model_dump(mode="json") for r in result] if isinstance(result, list) else \
        result.model_dump(mode="json")
    typer.echo(json.dumps(payload, indent=2, ensure_ascii=False))


def _print(result: BaseModel | list[Any], as_json: bool, table: Callable[[], Table]) -> None:
    if as_json:
        _echo_json(result)
        return
    from rich.console import Console

    Console().print(table())


def _when(ms: int | None) -> str:
    return "" if ms is None else datetime.fromtimestamp(ms / 1000, tz=UTC).strftime("%Y-%m-%d %H:%M")


def _names(namespaces: list[str]) -> str:
    return ", ".join(namespaces) or "no namespace (none holds memories yet)"


def _cell(value: str, style: str = "") -> Text:
    """``value`` on one line of at most ``CELL_CHARS`` (cut with …), as plain text: Rich would read stored
    brackets such as ``[grpc]`` as markup and ``:bug:`` as an emoji, and drop or change them."""
    from rich.text import Text

    line = " ".join(value.split())
    return Text(line if len(line) <= CELL_CHARS else line[:CELL_CHARS - 1] + "…", style=style)


def _table(title: str, columns: Iterable[str], rows: Iterable[Iterable[str]]) -> Table:
    """The one way a table is built, so every title and cell goes through ``_cell``."""
    from rich.table import Table

    table = Table(title=_cell(title, "table.title"), title_justify="left")  # a Text title gets no style of its own
    for column in columns:
        table.add_column(column, overflow="fold")
    for row in rows:
        table.add_row(*map(_cell, row))
    return table


@flattened("view", View, as_option)
@flattened("filters", SearchFilters, as_option)
def search(
    query: Annotated[str, typer.Argument(help="What to look for.")],
    filters: dict[str, Any],
    view: dict[str, Any],
    namespace: Namespace = None,
    limit: Annotated[int, typer.Option(help="Memories to show (1-100).")] = 10,
    as_json: AsJson = False,
    data_dir: DataDir = None,
) -> None:
    """Search memories: ranked by their own and their facts' signals, each with its best facts."""
    from graphmem.model import SearchRequest, parse

    read, hits = _run(namespace, data_dir, lambda service, ctx: (ctx.readable, service.search_memories(
        ctx, parse(SearchRequest, {"query": query, "limit": limit, "view": view, **filters}))))

    def table() -> Table:
        return _table(f"{len(hits)} memories for {query!r} in {_names(read)}",
                      ("#", "score", "memory", "namespace", "recorded", "best fact"),
                      ((str(rank), f"{hit.score:.3f}", hit.title or hit.document_id, hit.namespace,
                        _when(hit.recorded_at), hit.facts[0].text if hit.facts else "")
                       for rank, hit in enumerate(hits, start=1)))

    _print(hits, as_json, table)


@flattened("view", View, as_option)
@flattened("filters", SearchFilters, as_option)
def recall(
    query: Annotated[str, typer.Argument(help="The question the context is for.")],
    filters: dict[str, Any],
    view: dict[str, Any],
    namespace: Namespace = None,
    max_items: Annotated[int, typer.Option(help="Facts at most (1-50).")] = 8,
    max_tokens: Annotated[int, typer.Option(help="Tokens at most (32-16,000).")] = 1500,
    as_json: AsJson = False,
    data_dir: DataDir = None,
) -> None:
    """A cited context for a prompt, within both budgets (printed as it would be given to a model)."""
    from graphmem.model import RecallRequest, parse

    result = _run(namespace, data_dir, lambda service, ctx: service.recall(ctx, parse(RecallRequest, {
        "query": query, "max_items": max_items, "max_tokens": max_tokens, "view": view, **filters})))
    if as_json:
        _echo_json(result)
        return
    typer.echo(result.context_text)
    typer.echo(f"\n({result.answer_status.value}; {len(result.items)} facts, {result.tokens_used} of "
               f"{result.max_tokens} tokens; read {_names(result.namespaces)})", err=True)


def show(
    memory_id: Annotated[str, typer.Argument(metavar="ID", help="A memory version's id.")],
    namespace: Namespace = None,
    as_json: AsJson = False,
    data_dir: DataDir = None,
) -> None:
    """A memory: its text, its facts, the entities they mention, and its versions."""
    from graphmem.results import HistoryPage, MemoryDetail

    class Shown(BaseModel):
        memory: MemoryDetail
        history: HistoryPage

    shown = _run(namespace, data_dir, lambda service, ctx: Shown(memory=service.get_memory(ctx, memory_id),
                                                                  history=service.history(ctx, memory_id)))
    if as_json:
        _echo_json(shown)
        return
    from rich.console import Console
    from rich.text import Text

    memory = shown.memory.memory
    console = Console()
    # Text, not markup: the stored title, path and text are printed as written (the text whole, not a cell)
    console.print(Text.assemble((memory.title or memory.id, "bold"), f"  version {memory.version}"
                                f"{'' if memory.is_latest else ' (not the latest)'}  recorded "
                                f"{_when(memory.recorded_at)}{'  path ' + memory.path if memory.path else ''}"))
    console.print(Text(memory.content if memory.content is not None else "(redacted)"))
    for table in (
        _table(f"{shown.memory.facts_total} facts", ("#", "fact"),
               ((str(fact.position + 1), fact.text or "(redacted)") for fact in shown.memory.facts)),
        _table(f"{shown.memory.entities_total} entities", ("name", "type"),
               ((entity.name or "", entity.type or "") for entity in shown.memory.entities)),
        _table("versions", ("version", "id", "recorded", "latest"),
               ((str(version.version), version.id, _when(version.recorded_at), "yes" if version.is_latest else "")
                for version in shown.history.items)),
    ):
        console.print(table)


@flattened("view", View, as_option)
@flattened("caps", ExportCaps, as_option)
def export(
    output: Annotated[Path, typer.Option("--output", "-o", help="The file to write.")],
    caps: dict[str, Any],
    view: dict[str, Any],
    namespace: Namespace = None,
    query: Annotated[str | None, typer.Option(help="Start from this search's top facts.")] = None,
    document: Annotated[str | None, typer.Option(help="Start from this memory version.")] = None,
    entity: Annotated[str | None, typer.Option(help="Start from this entity.")] = None,
    format: Annotated[str, typer.Option(help="json, graphml (Gephi, yEd) or cypher.")] = "json",
    count: Annotated[bool, typer.Option("--count/--no-count",
                                        help="Count the reachable memories (--no-count is faster).")] = True,
    data_dir: DataDir = None,
) -> None:
    """One bounded page of the evidence graph around a seed, written to a file; says how complete it is."""
    from graphmem.model import ExportFormat, ExportRequest, parse

    if format not in {f.value for f in ExportFormat}:
        fail(InvalidInput(f"--format must be one of json, graphml, cypher, not {format!r}"), code=2)
    try:
        seed = seed_of({"query": query, "document": document, "entity": entity})
    except InvalidInput:
        fail(InvalidInput("give exactly one of --query, --document, --entity"), code=2)
    request_data = {"seed": seed, "caps": caps, "view": view, "count_reachable": count}

    def work(service: MemoryService, ctx: CallerContext) -> tuple[str, str]:
        result = service.export(ctx, namespace, parse(ExportRequest, request_data))
        summary = (f"{len(result.nodes)} nodes, {len(result.edges)} edges, {result.total_documents} of "
                   f"{'at least ' if result.coverage_is_upper_bound else ''}"
                   f"{'(not counted)' if result.reachable_documents is None else result.reachable_documents} memories"
                   f" in {_names(result.namespaces)}"
                   f"{', truncated' if result.truncated else ''}"
                   f"{'; more pages: use the HTTP API or GraphQL with the cursor' if result.next_cursor else ''}")
        if format == ExportFormat.json:
            return result.model_dump_json(indent=2), summary
        return service.render_export(result, ExportFormat(format), result.namespaces[0]).content, summary

    content, summary = _run(namespace, data_dir, work)
    try:
        output.write_text(content, encoding="utf-8")
    except OSError as exc:
        fail(InvalidInput(f"cannot write {output}: {exc.strerror}"), code=2)
    typer.echo(f"{output}: {summary}")


def stats(as_json: AsJson = False, data_dir: DataDir = None) -> None:
    """Memories (one per version chain), versions (all of them), facts, entities and triples of every
    namespace."""

    class Row(BaseModel):
        namespace: str
        memories: int
        versions: int
        facts: int
        entities: int
        triples: int

    def work(service: MemoryService, _: CallerContext) -> list[Row]:
        return [Row(namespace=name, memories=c.memories, versions=c.documents, facts=c.facts, entities=c.entities,
                    triples=c.triples) for name, c in service.stored_namespace_counts().items()]

    rows = _run(None, data_dir, work)

    def table() -> Table:
        return _table(f"{len(rows)} namespaces", ("namespace", "memories", "versions", "facts", "entities", "triples"),
                      ((row.namespace, *(f"{n:,}" for n in (row.memories, row.versions, row.facts, row.entities,
                                                            row.triples))) for row in rows))

    _print(rows, as_json, table)
