"""Entities as things to read and to connect: one entity with its facts and neighbours, and the shortest
chains between two entities through triples and shared facts.

A path search is breadth-first from the source, one named statement per level (``path_level``), inside one
namespace and one view. It is bounded three ways, all reported: each entity contributes at most
``PATH_FANOUT`` neighbours through triples in each direction and as many through shared facts; a level's
frontier holds at most ``PATH_FRONTIER`` entities (by id); and at most ``max_hops`` levels. The result lists
the shortest paths found (up to ``max_paths``), each step with the fact that supports it, and ``cut`` says
whether a bound stopped the search before it was exhaustive (then a path that exists may be missing).
"""

from __future__ import annotations

from collections import defaultdict
from typing import Any

from graphmem.errors import NotFound
from graphmem.ingest.names import ExtractedEntity
from graphmem.ingest.resolve import entity_key
from graphmem.model import CallerContext, EntityListOptions, EntityLookup, EntitySort, PathRequest, View, checked
from graphmem.results import (
    EntityDetail,
    EntityFact,
    EntityList,
    EntityPath,
    EntityWithAliases,
    Neighbour,
    PathResult,
    PathStep,
)
from graphmem.search.lucene import escape_lucene
from graphmem.service.access import read_in, readable
from graphmem.service.paging import Listing, read_page
from graphmem.service.shared import Core, checked_count, checked_ids
from graphmem.store.dialect import SearchIndex
from graphmem.store.driver import Tx
from graphmem.store.views import path_params, view_params

PATH_FANOUT = 25
ENTITIES = Listing[EntityWithAliases](
    purpose="entities", count="entities_list_count", key_names=("name", "id"),
    pages={EntitySort.name: "entities_page", EntitySort.name_desc: "entities_page_name_desc"},
    item=EntityWithAliases.model_validate, key=lambda item: {"name": item.name or "", "id": item.id})
PATH_FRONTIER = 500


class Entities:
    def __init__(self, core: Core) -> None:
        self.core = core

    def get(self, ctx: CallerContext, namespace: str, lookup: EntityLookup) -> EntityDetail:
        ns = readable(ctx, namespace)
        lookup = checked(lookup, self.core.limits)
        scope = {"namespace": ns, "namespaces": [ns], **view_params(lookup.view), **path_params(None)}
        dialect = self.core.store.dialect

        def read(tx: Tx) -> EntityDetail:
            row = _resolve(tx, dialect.index_name(SearchIndex.entity_name), scope, lookup.id, lookup.name)
            facts = _facts_of(tx, scope, [row["id"]], lookup.facts + 1).get(row["id"], []) if lookup.facts else []
            total = tx.single("entity_fact_count", id=row["id"], **scope)
            neighbours = _neighbours_of(tx, scope, [row["id"]], lookup.neighbours + 1).get(row["id"], []) \
                if lookup.neighbours else []
            return EntityDetail(
                id=row["id"], name=row["name"], type=row["type"], aliases=row["aliases"], facts=facts[:lookup.facts],
                facts_total=int(total["total"]) if total else 0, facts_cut=len(facts) > lookup.facts,
                neighbours=neighbours[:lookup.neighbours], neighbours_cut=len(neighbours) > lookup.neighbours)

        return self.core.store.read(read)

    def page(self, ctx: CallerContext, namespace: str | None, options: EntityListOptions) -> EntityList:
        """A page of the entities a fact of the view mentions, in ``options.sort`` order, with the total; the
        cursor walk is pinned to the first page's time. ``namespace`` None: every one the caller may read."""
        names = read_in(ctx, namespace)
        options = checked(options, self.core.limits)
        page = read_page(self.core.store, self.core.cursors, self.core.clock(), ENTITIES, names, options)
        return EntityList(items=page.items, total=page.total, limit=options.limit, next_cursor=page.next_cursor,
                          cursors=page.cursors, namespaces=names)

    def many(self, ctx: CallerContext, namespace: str | None, entity_ids: list[str],
             view: View) -> dict[str, EntityWithAliases]:
        """Entities by id in one statement; ids not visible in the view are absent."""
        scope = self._scope(ctx, namespace, view)
        ids = checked_ids(entity_ids)
        rows = self.core.store.read(lambda tx: tx.run("entities_get", ids=ids, **scope))
        return {row["id"]: EntityWithAliases.model_validate(row) for row in rows}

    def facts_of(self, ctx: CallerContext, namespace: str | None, entity_ids: list[str], limit: int,
                 view: View) -> dict[str, list[EntityFact]]:
        """The newest ``limit`` facts mentioning each entity, in one statement."""
        scope = self._scope(ctx, namespace, view)
        ids, first = checked_ids(entity_ids), checked_count(limit)
        return self.core.store.read(lambda tx: _facts_of(tx, scope, ids, first))

    def neighbours_of(self, ctx: CallerContext, namespace: str | None, entity_ids: list[str], limit: int,
                      view: View) -> dict[str, list[Neighbour]]:
        """Up to ``limit`` triples of each entity (either direction, by the other entity's name), in one
        statement."""
        scope = self._scope(ctx, namespace, view)
        ids, first = checked_ids(entity_ids), checked_count(limit)
        return self.core.store.read(lambda tx: _neighbours_of(tx, scope, ids, first))

    def _scope(self, ctx: CallerContext, namespace: str | None, view: View) -> dict[str, Any]:
        return {"namespaces": read_in(ctx, namespace), **view_params(view), **path_params(None)}

    def path(self, ctx: CallerContext, namespace: str, request: PathRequest) -> PathResult:
        ns = readable(ctx, namespace)
        scope = {"namespace": ns, "namespaces": [ns], **view_params(request.view), **path_params(None)}
        index = self.core.store.dialect.index_name(SearchIndex.entity_name)

        def read(tx: Tx) -> PathResult:
            source = _resolve(tx, index, scope, *_id_or_name(request.source))["id"]
            target = _resolve(tx, index, scope, *_id_or_name(request.target))["id"]
            return _search(tx, scope, source, target, request)

        return self.core.store.read(read)


def _id_or_name(value: str) -> tuple[str | None, str | None]:
    """An entity is named by its id (a UUID) or by its name."""
    looks_like_id = len(value) == 36 and value.count("-") == 4
    return (value, None) if looks_like_id else (None, value)


def _facts_of(tx: Tx, scope: dict[str, Any], ids: list[str], limit: int) -> dict[str, list[EntityFact]]:
    found: dict[str, list[EntityFact]] = defaultdict(list)
    for row in tx.run("entities_facts", ids=ids, limit=limit, **scope):
        found[row["entity_id"]].append(EntityFact.model_validate(row))
    return found


def _neighbours_of(tx: Tx, scope: dict[str, Any], ids: list[str], limit: int) -> dict[str, list[Neighbour]]:
    found: dict[str, list[Neighbour]] = defaultdict(list)
    for row in tx.run("entities_neighbours", ids=ids, limit=limit, **scope):
        found[row["entity_id"]].append(Neighbour.model_validate(row))
    return found


def _resolve(tx: Tx, index: str, scope: dict[str, Any], entity_id: str | None, name: str | None) -> dict[str, Any]:
    """The visible entity of that id, or of that name: its normalised name first, then an alias (the first by
    name where the alias became ambiguous), else the best full-text match. Not visible, or no match: not
    found."""
    if entity_id is not None:
        row = tx.single("entities_get", ids=[entity_id], **scope)
    else:
        assert name is not None
        key = entity_key(scope["namespace"], ExtractedEntity(name, "Concept"))
        row = tx.single("entity_by_key", key=key, **scope) or \
            tx.single("entities_by_alias", alias_keys=[key], limit=1, **scope)
        query = escape_lucene(name)
        if row is None and query is not None:
            row = tx.single("entity_by_name_match", index=index, query=query, k=200, **scope)
    if row is None:
        raise NotFound(f"no entity {entity_id or name!r} in namespace {scope['namespace']!r}",
                       entity=entity_id or name)
    return row


def _search(tx: Tx, scope: dict[str, Any], source: str, target: str, request: PathRequest) -> PathResult:
    """Breadth-first from ``source``; every shortest way into each entity is kept, so several shortest paths
    can be rebuilt (the module docstring says how it is bounded)."""
    if source == target:
        return PathResult(source=source, target=target, paths=[], hops=0, cut=False)
    parents: dict[str, list[dict[str, Any]]] = defaultdict(list)  # entity -> the steps that reach it first
    depth = {source: 0}
    frontier, cut = [source], False
    for level in range(1, request.max_hops + 1):
        if len(frontier) > PATH_FRONTIER:
            frontier, cut = sorted(frontier)[:PATH_FRONTIER], True
        rows = tx.run("path_level", frontier=frontier, fanout=PATH_FANOUT, **scope)
        counted: dict[tuple[str, str], int] = defaultdict(int)
        reached: list[str] = []
        for row in rows:
            counted[(row["source"], row["via"])] += 1
            other = row["other"]
            if depth.get(other, level) < level:
                continue  # already reached by a shorter way
            if other not in depth:
                depth[other] = level
                reached.append(other)
            parents[other].append(row)
        cut = cut or any(n >= PATH_FANOUT for n in counted.values())
        if target in depth:
            break
        frontier = sorted(reached)
        if not frontier:
            break
    if target not in depth:
        return PathResult(source=source, target=target, paths=[], hops=None, cut=cut)
    paths = _unwind(parents, source, target, request.max_paths)
    return PathResult(source=source, target=target, paths=_described(tx, scope, paths), hops=depth[target], cut=cut)


def _unwind(parents: dict[str, list[dict[str, Any]]], source: str, target: str,
            limit: int) -> list[list[dict[str, Any]]]:
    """Up to ``limit`` shortest paths as lists of steps, source first, in a stable order: distinct chains of
    entities, each step a triple where one joins the two entities, else a fact that mentions both."""
    found: list[list[dict[str, Any]]] = []

    def back(node: str, tail: list[dict[str, Any]]) -> None:
        if len(found) >= limit:
            return
        if node == source:
            found.append(list(reversed(tail)))
            return
        best: dict[str, dict[str, Any]] = {}  # one step per predecessor: a triple before a shared fact
        for step in sorted(parents[node], key=lambda r: (r["via"] != "triple", r["fact_id"])):
            best.setdefault(step["source"], step)
        for predecessor in sorted(best):
            back(predecessor, [*tail, best[predecessor]])

    back(target, [])
    return found


def _described(tx: Tx, scope: dict[str, Any], paths: list[list[dict[str, Any]]]) -> list[EntityPath]:
    ns = scope["namespace"]
    fact_ids = sorted({step["fact_id"] for path in paths for step in path})
    entity_ids = sorted({step[key] for path in paths for step in path for key in ("source", "other")})
    texts = {row["id"]: row["text"] for row in tx.run("facts_texts", ids=fact_ids, namespace=ns)}
    names = {row["id"]: row["name"] for row in tx.run("entities_names", ids=entity_ids, namespace=ns)}
    described = []
    for path in paths:
        chain = [path[0]["source"], *(step["other"] for step in path)]
        described.append(EntityPath(entities=chain, names=[names.get(e) for e in chain], steps=[
            PathStep(source=step["source"], target=step["other"], via=step["via"], predicate=step["predicate"],
                     negated=step["negated"], forward=step["forward"], fact_id=step["fact_id"],
                     text=texts.get(step["fact_id"])) for step in path]))
    return described

