"""One page of an export: the walk in one read transaction, the completeness fields, the next cursor, and
the walk's state kept for the next page. ``graphmem/export/__init__.py`` says what each field means, what
the cursor binds and how long a walk's state is kept."""

from __future__ import annotations

import logging
import uuid
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass

from pydantic import BaseModel, Field

from graphmem.cursors import Cursors, digest, mismatch
from graphmem.errors import GraphmemError, InvalidInput, NotFound
from graphmem.export.walk import (
    Pending,
    Reached,
    Traversal,
    Walk,
    cut_page,
    documents,
    page_edges,
    page_nodes,
    page_properties,
    reachable_documents,
)
from graphmem.model import DocumentSeed, EntitySeed, ExportRequest, IdsSeed, QuerySeed, View
from graphmem.results import ExportEdge, ExportNode, ExportResult
from graphmem.store.driver import GraphStore, Tx
from graphmem.store.views import view_params

log = logging.getLogger(__name__)

QUERY_SEEDS = 10  # top fact hits a query seed starts from
CURSOR_PURPOSE = "export"
# The most nodes one export follows over all its pages: a walk's state travels in the database between
# pages, and this bounds it (and the offset) at four pages of the largest page (5,000 nodes), ten of the
# default. The page that reaches it is the last; it says `truncated`.
WALK_LIMIT = 20_000
# A page reads a level in parts until it holds the nodes it shows (``Traversal.walk``); what the last part
# reads beyond them, up to this many pages past the offset, is kept for the next pages (the engine has read
# it anyway), and more is cut off.
READ_AHEAD_PAGES = 2
# Expired walks are swept by the first page that keeps a walk in each minute of the service's clock, per
# process (the store's memo remembers a sweep for 30 s, so a busy minute may sweep twice). The sweep is a
# write transaction of its own, 9-15 ms of a first page at 100k facts when it ran on every one; an expired
# walk is never read (``export_walk_get`` checks the time), it only takes space until the next sweep.
EXPIRY_SWEEP_MS = 60_000

SeedSearch = Callable[[str, View], list[str]]  # (query, view) -> fact ids of the top hits
# The reachable-document counts of first pages, each walked in a read transaction of its own beside its
# page's: the two walks share nothing, and on two cores a counted page took about its count walk longer.
_COUNTING = ThreadPoolExecutor(max_workers=2, thread_name_prefix="graphmem-export-count")


class ExportCursor(BaseModel):
    """What a page hands to the next: the export it belongs to and where it stands."""

    ns: str
    request: str = Field(description="digest of the seed, caps and view as requested")
    as_of: int
    offset: int = Field(ge=0)
    walk: str = Field(description="id of the walk's state, kept in `_system` between pages")
    seeds: list[str] | None
    reachable: int | None = Field(description="None: not counted (count_reachable false)")
    upper_bound: bool


@dataclass(frozen=True)
class PageRead:
    """What one page's read transaction found."""

    page: list[Reached]  # the page's nodes still in view
    end: int  # the offset after the page
    kept: KeptWalk  # the walk behind it, and what is kept with it for the next page
    grew: bool  # the walk read a level in this transaction
    has_next: bool
    truncated: bool
    nodes: list[ExportNode]
    edges: list[ExportEdge]


@dataclass(frozen=True)
class KeptWalk:
    """What a page keeps for the next: its walk, and the edges from the facts shown up to ``pending_until``
    to nodes not passed there. Only the page that starts at ``pending_until`` uses and moves them on; a cursor
    used again after that (a retry, a second click) gets a page that reads every earlier fact instead, and
    keeps them as they are, so that using a cursor twice gives the same page twice."""

    walk: Walk
    pending: Pending
    pending_until: int


def request_digest(request: ExportRequest) -> str:
    return digest({"seed": request.seed.model_dump(mode="json"), "caps": request.caps.model_dump(),
                   "view": request.view.model_dump(), "count_reachable": request.count_reachable})


def expired() -> InvalidInput:
    return InvalidInput("cursor has expired: this export's walk is kept for a limited time between pages "
                        "(GRAPHMEM_EXPORT_WALK_TTL_S); start again from the first page, without a cursor",
                        field="cursor")


def stored_walk(tx: Tx, walk_id: str, namespace: str, request: str, now: int) -> KeptWalk:
    """The walk a cursor continues, as the previous page left it; ``expired()`` once its time is up."""
    row = tx.single("export_walk_get", id=walk_id, namespace=namespace, request=request, now=now)
    if row is None or row["pending_until"] is None:  # kept by a version before parts and pending edges
        raise expired()
    nodes = [Reached(id, kind, depth) for id, kind, depth in zip(row["ids"], row["kinds"], row["depths"],
                                                                  strict=True)]
    pending: Pending = {}
    for target, fact in zip(row["pending_targets"], row["pending_facts"], strict=True):
        pending.setdefault(target, []).append(fact)
    return KeptWalk(Walk(nodes, complete=row["complete"], cut=row["cut"], expanded=row["expanded"]), pending,
                    row["pending_until"])


def keep_walk(store: GraphStore, walk_id: str, namespace: str, request: str, kept: KeptWalk, *, first_page: bool,
              grew: bool, now: int, ttl_ms: int) -> None:
    """Keep the walk for the next page (only its pending edges and time limit are written when this page
    read no level).
    A new walk first deletes expired ones (at most once per ``EXPIRY_SWEEP_MS``), best effort, in a
    transaction of its own: a conflict between two exports cleaning up at once fails neither export."""
    sweep = ("export_walks_expire", now // EXPIRY_SWEEP_MS)
    if first_page and sweep not in store.memo:
        try:
            store.write(lambda tx: tx.run("export_walks_expire", now=now))
            store.memo[sweep] = True
        except GraphmemError:
            log.warning("could not delete expired export walks; the next export tries again", exc_info=True)
    pairs = [(target, fact) for target, facts in kept.pending.items() for fact in facts]
    pending = {"pending_targets": [target for target, _ in pairs], "pending_facts": [fact for _, fact in pairs],
               "pending_until": kept.pending_until}
    if not grew:
        store.write(lambda tx: tx.run("export_walk_touch", id=walk_id, expires_at=now + ttl_ms, **pending))
        return
    walk = kept.walk
    store.write(lambda tx: tx.run(
        "export_walk_save", id=walk_id, namespace=namespace, request=request, now=now,
        ids=[node.id for node in walk.nodes], kinds=[node.kind for node in walk.nodes],
        depths=[node.depth for node in walk.nodes], complete=walk.complete, cut=walk.cut, expanded=walk.expanded,
        expires_at=now + ttl_ms, **pending))


def cursor_namespace(cursors: Cursors, cursor: str) -> str:
    """The namespace a later page's cursor walks (an export is one namespace's graph)."""
    return cursors.open(CURSOR_PURPOSE, cursor, ExportCursor).ns


def export_graph(store: GraphStore, cursors: Cursors, now: int, namespace: str, request: ExportRequest,
                 search: SeedSearch, walk_ttl_ms: int) -> ExportResult:
    """One page of the export of ``request`` in ``namespace`` (the first, or the one its cursor points to).
    ``now`` pins a current view; ``search`` resolves a query seed; a walk with more pages is kept for
    ``walk_ttl_ms`` after each page."""
    state = None
    bound = request_digest(request)
    if request.cursor is not None:
        state = cursors.open(CURSOR_PURPOSE, request.cursor, ExportCursor)
        if state.ns != namespace or state.request != bound:
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
    walk_id = state.walk if state else uuid.uuid4().hex
    scope = {"namespace": namespace, **view_params(view)}
    counting = None
    if state is None and request.count_reachable:
        # the reachable documents, counted in a read transaction of its own beside the page's (only a
        # truncated page uses the count, which is not known before its walk; a page that is not truncated
        # is small, and so is its count)
        counting = _COUNTING.submit(store.read, lambda tx: Traversal(tx, scope, seed_ids, kinds, caps.depth)
                                    .count_walk(caps))

    def read(tx: Tx) -> PageRead:
        traversal = Traversal(tx, scope, seed_ids, kinds, caps.depth)
        enough = min(offset + caps.max_nodes, WALK_LIMIT) + 1  # this page's nodes, and one to know more exist
        kept = stored_walk(tx, walk_id, namespace, bound, now) if state else None
        start = kept.walk if kept is not None else None
        if start is not None and (start.complete or len(start.nodes) >= enough):
            walk = start  # this page's nodes were read ahead: no level to read
        else:
            budget = min(offset + READ_AHEAD_PAGES * caps.max_nodes, WALK_LIMIT) + 1
            walk = traversal.walk(caps.fanout, budget=budget, start=start, enough=enough)
        if not walk.nodes and isinstance(seed, DocumentSeed | EntitySeed):
            raise NotFound(f"no {seed.kind} with id {seed.id!r} in namespace {namespace!r}", id=seed.id)
        page = cut_page(walk.nodes[:WALK_LIMIT], offset, caps)
        end = offset + len(page)
        # a later page's nodes come from the kept walk: what was forgotten since is left off
        properties = page_properties(tx, scope, page, walked_here=state is None)
        shown = [node for node in page if node.kind == "unavailable" or node.id in properties]
        hidden = {node.id for node in page} - {node.id for node in shown}
        has_next = end < min(len(walk.nodes), WALK_LIMIT)
        emitted = [node for node in walk.nodes[:end] if node.id not in hidden]
        passed = {node.id for node in walk.nodes[:end]}
        if kept is None or kept.pending_until == offset:  # this page goes on from the last one kept
            edges, pending = page_edges(tx, scope, shown, emitted, properties,
                                        kept.pending if kept is not None else {}, passed)
            pending_until = end
        else:  # a cursor used again after the next page: every earlier fact is read, what is kept stays
            edges, _ = page_edges(tx, scope, shown, emitted, properties, None, passed)
            pending, pending_until = kept.pending, kept.pending_until
        return PageRead(
            page=shown, end=end, kept=KeptWalk(walk, pending, pending_until), grew=walk is not start, has_next=has_next,
            truncated=has_next or offset > 0 or walk.cut or len(walk.nodes) > end,
            nodes=page_nodes(shown, properties), edges=edges)

    try:
        read_page = store.read(read)
        count = counting.result() if counting is not None else None
    finally:
        if counting is not None:
            counting.cancel()
    page, included = read_page.page, documents(read_page.page)
    reachable: int | None
    if not read_page.truncated:
        reachable, upper_bound = included, False
    elif state is not None:
        reachable, upper_bound = state.reachable, state.upper_bound
    elif count is not None:
        reachable, upper_bound = reachable_documents(count, caps, page)
    else:
        reachable, upper_bound = None, False
    denominator = None if reachable is None else max(reachable, included)
    coverage = None if denominator is None else included / denominator if denominator else 1.0
    next_cursor = cursors.seal(CURSOR_PURPOSE, ExportCursor(
        ns=namespace, request=bound, as_of=as_of, offset=read_page.end, walk=walk_id, seeds=pinned_seeds,
        reachable=reachable, upper_bound=upper_bound)) if read_page.has_next else None
    if read_page.has_next:
        keep_walk(store, walk_id, namespace, bound, read_page.kept, first_page=state is None, grew=read_page.grew,
                  now=now, ttl_ms=walk_ttl_ms)
    return ExportResult(
        total_documents=included, reachable_documents=denominator, truncated=read_page.truncated,
        unavailable_documents=sum(1 for node in page if node.kind == "unavailable"),
        coverage=coverage, coverage_is_upper_bound=upper_bound, next_cursor=next_cursor, nodes=read_page.nodes,
        edges=read_page.edges, namespaces=[namespace])
