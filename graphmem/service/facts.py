"""Facts by id and what they mention, in batches: the reads a front end that resolves relationships
(GraphQL's loaders) makes once per level instead of once per item. Every read is limited to the caller's
readable namespaces inside the statement."""

from __future__ import annotations

from collections import defaultdict

from graphmem.errors import NotFound
from graphmem.model import CallerContext, FactListOptions, FactSort, checked
from graphmem.results import EntityRef, FactPage, FactRecord, TripleHit
from graphmem.search.triples import triples_of_facts
from graphmem.service.access import read_in
from graphmem.service.paging import Listing, read_page
from graphmem.service.shared import Core, checked_count, checked_ids

FACTS = Listing[FactRecord](
    purpose="facts", count="facts_list_count", key_names=("recorded_at", "id"),
    pages={FactSort.newest: "facts_page", FactSort.oldest: "facts_page_oldest"},
    item=FactRecord.model_validate, key=lambda item: {"recorded_at": item.recorded_at, "id": item.id})


class Facts:
    def __init__(self, core: Core) -> None:
        self.core = core

    def many(self, ctx: CallerContext, fact_ids: list[str]) -> dict[str, FactRecord]:
        """Facts by id (any version); ids the caller cannot read are absent."""
        ids = checked_ids(fact_ids)
        rows = self.core.store.read(lambda tx: tx.run("facts_get", ids=ids, namespaces=ctx.readable))
        return {row["id"]: FactRecord.model_validate(row) for row in rows}

    def page(self, ctx: CallerContext, namespace: str | None, options: FactListOptions) -> FactPage:
        """A page of facts in ``options.sort`` order, with the total of the view and conditions; the cursor
        walk is pinned to the first page's time. ``namespace`` None: every one the caller may read."""
        names = read_in(ctx, namespace)
        options = checked(options, self.core.limits)
        page = read_page(self.core.store, self.core.cursors, self.core.clock(), FACTS, names, options)
        return FactPage(items=page.items, total=page.total, limit=options.limit, next_cursor=page.next_cursor,
                        cursors=page.cursors, namespaces=names)

    def get(self, ctx: CallerContext, fact_id: str) -> FactRecord:
        """A fact by id (any version), from the caller's readable namespaces only."""
        found = self.many(ctx, [fact_id])
        if fact_id not in found:
            raise NotFound(f"no fact with id {fact_id!r}", id=fact_id)
        return found[fact_id]

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
