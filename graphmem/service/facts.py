"""Facts by id and what they mention, in batches: the reads a front end that resolves relationships
(GraphQL's loaders) makes once per level instead of once per item. Every read is limited to the caller's
readable namespaces inside the statement."""

from __future__ import annotations

from collections import defaultdict

from graphmem.model import CallerContext, FactListOptions, FactSort, checked
from graphmem.results import EntityRef, FactPage, FactRecord, TripleHit
from graphmem.search.triples import triples_of_facts
from graphmem.service.access import readable
from graphmem.service.paging import walk
from graphmem.service.shared import Core, checked_count, checked_ids
from graphmem.store.driver import Tx
from graphmem.store.views import path_params, view_params, where_params

PAGE_STATEMENTS = {FactSort.newest: "facts_page", FactSort.oldest: "facts_page_oldest"}


class Facts:
    def __init__(self, core: Core) -> None:
        self.core = core

    def many(self, ctx: CallerContext, fact_ids: list[str]) -> dict[str, FactRecord]:
        """Facts by id (any version); ids the caller cannot read are absent."""
        ids = checked_ids(fact_ids)
        rows = self.core.store.read(lambda tx: tx.run("facts_get", ids=ids, namespaces=ctx.readable))
        return {row["id"]: FactRecord.model_validate(row) for row in rows}

    def page(self, ctx: CallerContext, namespace: str, options: FactListOptions) -> FactPage:
        """A page of the namespace's facts in ``options.sort`` order, with the total of the view and
        conditions; the cursor walk is pinned to the first page's time."""
        ns = readable(ctx, namespace)
        options = checked(options, self.core.limits)
        page_walk = walk(self.core.cursors, "facts", ns, options.view,
                         {"path": options.path, "where": options.where.model_dump(), "sort": options.sort.value},
                         options.cursor, self.core.clock())
        params = {"namespace": ns, **path_params(options.path), **where_params(options.where),
                  **view_params(page_walk.view)}

        def read(tx: Tx) -> FactPage:
            total = tx.single("facts_list_count", **params)
            rows = tx.run(PAGE_STATEMENTS[options.sort], limit=options.limit + 1,
                          **page_walk.after_params(("recorded_at", "id")), **params)
            items = [FactRecord.model_validate(row) for row in rows[:options.limit]]
            next_cursor, cursors = page_walk.cursors(self.core.cursors, [
                {"recorded_at": i.recorded_at, "id": i.id} for i in items], len(rows) > options.limit,
                options.item_cursors)
            return FactPage(items=items, total=int(total["total"]) if total else 0, limit=options.limit,
                            next_cursor=next_cursor, cursors=cursors)

        return self.core.store.read(read)

    def entities_of(self, ctx: CallerContext, fact_ids: list[str]) -> dict[str, list[EntityRef]]:
        """What each fact mentions, by name."""
        ids = checked_ids(fact_ids)
        rows = self.core.store.read(lambda tx: tx.run("facts_entities", ids=ids, namespaces=ctx.readable))
        found: dict[str, list[EntityRef]] = defaultdict(list)
        for row in rows:
            found[row["fact_id"]].append(EntityRef.model_validate(row))
        return found

    def triples_of(self, ctx: CallerContext, fact_ids: list[str], limit: int) -> dict[str, list[TripleHit]]:
        """The triples read from each fact, up to ``limit`` each (the fact's own, whatever the view: the
        caller already sees the fact)."""
        ids, first = checked_ids(fact_ids), checked_count(limit)
        if not first:
            return {}
        return self.core.store.read(lambda tx: triples_of_facts(tx, ctx.readable, ids, first))
