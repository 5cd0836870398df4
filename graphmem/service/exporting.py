"""The bounded evidence-graph export through the service: the namespace check, a query seed resolved by
the service's own fact search, and rendering as a separate call."""

from __future__ import annotations

from graphmem.errors import NotFound
from graphmem.export import QUERY_SEEDS, cursor_namespace, export_graph, render
from graphmem.model import CallerContext, ExportFormat, ExportRequest, IdsSeed, QuerySeed, SearchRequest, View
from graphmem.results import ExportResult, RenderedExport
from graphmem.results.tokens import GraphResult
from graphmem.search.budget import fit_export
from graphmem.service.access import read_in, readable
from graphmem.service.search import WARM_QUERIES, Search
from graphmem.service.shared import Core, repeat_within

WARM_EXPORT_SECONDS = 10.0


class Exporting:
    def __init__(self, core: Core, search: Search) -> None:
        self.core = core
        self.search = search

    def within_tokens(self, ctx: CallerContext, namespace: str | None, request: ExportRequest, label_chars: int,
                      max_tokens: int) -> GraphResult:
        """An export page fitted to ``max_tokens`` (``search/budget.py``)."""
        return fit_export(self.export(ctx, namespace, request), label_chars, max_tokens)

    def export(self, ctx: CallerContext, namespace: str | None, request: ExportRequest) -> ExportResult:
        """One page of the bounded evidence graph around ``request.seed`` (``graphmem/export/`` says what is
        walked, how the caps hold, what the completeness fields mean and what the cursor binds). An export is
        one namespace's graph: naming none, it walks the namespace its seed is in (``_seed_namespace``)."""
        ns = readable(ctx, namespace if namespace is not None else self._seed_namespace(ctx, request))

        def seed_facts(query: str, pinned: View) -> list[str]:
            hits = self.search.facts(ctx, SearchRequest(query=query, namespaces=[ns], limit=QUERY_SEEDS, view=pinned))
            return [hit.fact_id for hit in hits]

        return export_graph(self.core.store, self.core.cursors, self.core.clock(), ns, request, seed_facts,
                            walk_ttl_ms=self.core.settings.export_walk_ttl_s * 1000)

    def _seed_namespace(self, ctx: CallerContext, request: ExportRequest) -> str:
        """Where an export that names no namespace walks: a later page's, from its cursor; for a query, the
        namespace of the best fact hit over every namespace the caller may read (the walk then searches its
        seeds there again, as any query export does); for ids, the namespace of the first id found. Nothing
        found: the first readable namespace, whose page is then empty."""
        if request.cursor is not None:
            return cursor_namespace(self.core.cursors, request.cursor)
        names = read_in(ctx, None)
        seed = request.seed
        if isinstance(seed, QuerySeed):
            ids = [hit.fact_id for hit in self.search.facts(ctx, SearchRequest(
                query=seed.query, namespaces=names, limit=1, view=request.view))]
        else:
            ids = seed.ids if isinstance(seed, IdsSeed) else [seed.id]
        row = self.core.store.read(lambda tx: tx.single("namespace_of_ids", ids=ids, namespaces=names)) \
            if ids else None
        if row is not None:
            return str(row["namespace"])
        if not names:
            raise NotFound("no namespace holds memories yet")
        return names[0]

    def warm_up(self, namespace: str, count: int) -> None:
        """Real exports (query seeds, the default caps, counted) in ``namespace`` (the one with the most
        memories), so that the database has compiled and cached its export statements before the first request
        does. In a probe after restarts at 100k facts, three runs each way, the first export (a query seed,
        1,000 nodes) took 0.70-0.76 s without and 0.42-0.59 s with 20 of these (1-3 s more warm-up); the 25
        query-seed exports after it did not differ beyond the noise (p50 234-328 against 240-295 ms): what keeps
        them slower than after a bulk load is the engine's cold page cache, which a few walks do not fill. At
        most ``count`` exports and ``WARM_EXPORT_SECONDS``; what they find is dropped, and the walks they keep
        expire as any do."""
        ctx = CallerContext.for_namespaces(namespace)
        repeat_within(count, WARM_EXPORT_SECONDS, lambda i: self.export(
            ctx, namespace, ExportRequest(seed=QuerySeed(kind="query", query=WARM_QUERIES[i % len(WARM_QUERIES)]))))

    @staticmethod
    def render(result: ExportResult, format: ExportFormat, namespace: str,
               target_namespace: str | None = None) -> RenderedExport:
        """A page as GraphML, or as a Cypher script that recreates it in ``target_namespace`` (default: the
        namespace it was exported from)."""
        return render(result, format, target_namespace, namespace)
