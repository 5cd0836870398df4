"""One page of an export: the walk in one read transaction, the completeness fields, the next cursor.
``graphmem/export/__init__.py`` says what each field means and what the cursor binds."""

from __future__ import annotations

from collections.abc import Callable

from pydantic import BaseModel, Field

from graphmem.cursors import Cursors, digest, mismatch
from graphmem.errors import NotFound
from graphmem.export.walk import Traversal, cut_page, documents, page_edges, page_nodes
from graphmem.model import DocumentSeed, EntitySeed, ExportRequest, IdsSeed, QuerySeed, View
from graphmem.results import ExportResult
from graphmem.store.driver import GraphStore, Tx
from graphmem.store.views import view_params

QUERY_SEEDS = 10  # top fact hits a query seed starts from
CURSOR_PURPOSE = "export"

SeedSearch = Callable[[str, View], list[str]]  # (query, view) -> fact ids of the top hits


class ExportCursor(BaseModel):
    """What a page hands to the next: the export it belongs to and where it stands."""

    ns: str
    request: str = Field(description="digest of the seed, caps and view as requested")
    as_of: int
    offset: int = Field(ge=0)
    seeds: list[str] | None
    reachable: int | None = Field(description="None: not counted (count_reachable false)")
    upper_bound: bool


def request_digest(request: ExportRequest) -> str:
    return digest({"seed": request.seed.model_dump(mode="json"), "caps": request.caps.model_dump(),
                   "view": request.view.model_dump(), "count_reachable": request.count_reachable})


def export_graph(store: GraphStore, cursors: Cursors, now: int, namespace: str, request: ExportRequest,
                 search: SeedSearch) -> ExportResult:
    """One page of the export of ``request`` in ``namespace`` (the first, or the one its cursor points to).
    ``now`` pins a current view; ``search`` resolves a query seed."""
    state = None
    if request.cursor is not None:
        state = cursors.open(CURSOR_PURPOSE, request.cursor, ExportCursor)
        if state.ns != namespace or state.request != request_digest(request):
            raise mismatch()
    as_of = state.as_of if state else request.view.as_of if request.view.as_of is not None else now
    view = View(as_of=as_of, include_forgotten=request.view.include_forgotten,
                include_superseded=request.view.include_superseded)
    seed, caps = request.seed, request.caps
    pinned_seeds: list[str] | None = None
    if isinstance(seed, QuerySeed):
        pinned_seeds = state.seeds if state is not None and state.seeds is not None else search(seed.query, view)
        seed_ids, kinds = pinned_seeds, ["fact"]
    elif isinstance(seed, IdsSeed):
        seed_ids, kinds = seed.ids, ["document", "fact", "entity"]
    else:
        seed_ids, kinds = [seed.id], [seed.kind]
    offset = state.offset if state else 0
    scope = {"namespace": namespace, **view_params(view)}

    def read(tx: Tx) -> ExportResult:
        traversal = Traversal(tx, scope, seed_ids, kinds, caps.depth)
        walk = traversal.walk(caps.fanout, budget=offset + caps.max_nodes + 1)
        if not walk.nodes and isinstance(seed, DocumentSeed | EntitySeed):
            raise NotFound(f"no {seed.kind} with id {seed.id!r} in namespace {namespace!r}", id=seed.id)
        page = cut_page(walk.nodes, offset, caps)
        end = offset + len(page)
        has_next = end < len(walk.nodes)
        truncated = has_next or offset > 0 or walk.cut
        included = documents(page)
        reachable: int | None
        if not truncated:
            reachable, upper_bound = included, False
        elif state is not None:
            reachable, upper_bound = state.reachable, state.upper_bound
        elif request.count_reachable:
            reachable, upper_bound = traversal.reachable_documents(caps, page)
        else:
            reachable, upper_bound = None, False
        denominator = None if reachable is None else max(reachable, included)
        next_cursor = cursors.seal(CURSOR_PURPOSE, ExportCursor(
            ns=namespace, request=request_digest(request), as_of=as_of, offset=end, seeds=pinned_seeds,
            reachable=reachable, upper_bound=upper_bound)) if has_next else None
        coverage = None if denominator is None else included / denominator if denominator else 1.0
        return ExportResult(
            total_documents=included, reachable_documents=denominator, truncated=truncated,
            unavailable_documents=sum(1 for node in page if node.kind == "unavailable"),
            coverage=coverage, coverage_is_upper_bound=upper_bound,
            next_cursor=next_cursor, nodes=page_nodes(tx, page, namespace),
            edges=page_edges(tx, scope, page, walk.nodes[:end]))

    return store.read(read)
