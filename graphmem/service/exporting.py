"""The bounded evidence-graph export through the service: the namespace check, a query seed resolved by
the service's own fact search, and rendering as a separate call."""

from __future__ import annotations

from graphmem.export import QUERY_SEEDS, export_graph, render
from graphmem.model import CallerContext, ExportFormat, ExportRequest, SearchRequest, View
from graphmem.results import ExportResult, RenderedExport
from graphmem.service.access import readable
from graphmem.service.search import Search
from graphmem.service.shared import Core


class Exporting:
    def __init__(self, core: Core, search: Search) -> None:
        self.core = core
        self.search = search

    def export(self, ctx: CallerContext, namespace: str, request: ExportRequest) -> ExportResult:
        """One page of the bounded evidence graph around ``request.seed`` (``graphmem/export/`` says what is
        walked, how the caps hold, what the completeness fields mean and what the cursor binds)."""
        ns = readable(ctx, namespace)

        def seed_facts(query: str, pinned: View) -> list[str]:
            hits = self.search.facts(ctx, SearchRequest(query=query, namespaces=[ns], limit=QUERY_SEEDS, view=pinned))
            return [hit.fact_id for hit in hits]

        return export_graph(self.core.store, self.core.cursors, self.core.clock(), ns, request, seed_facts,
                            walk_ttl_ms=self.core.settings.export_walk_ttl_s * 1000)

    @staticmethod
    def render(result: ExportResult, format: ExportFormat, namespace: str,
               target_namespace: str | None = None) -> RenderedExport:
        """A page as GraphML, or as a Cypher script that recreates it in ``target_namespace`` (default: the
        namespace it was exported from)."""
        return render(result, format, target_namespace, namespace)
