"""What the graph knows, in the shape of Neo4j's memory MCP server's reads (``read_graph``, ``search_memories``,
``find_memories_by_name``): entities with their observations (what agents stated of them first, then the facts
that mention them) and their relations (asserted ones as stated, extracted ones as identifiers, WORK_AT).
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import Any

from graphmem.ingest.aliases import alias_keys
from graphmem.model import CURRENT, CallerContext, EntityListOptions, EntitySearchRequest, SearchRequest
from graphmem.results import EntityRef
from graphmem.results.knowledge import KnowledgeGraph, KnownEntity, KnownRelation
from graphmem.service.access import read_in
from graphmem.service.entities import Entities
from graphmem.service.search import Search
from graphmem.service.shared import Core
from graphmem.store.driver import Tx
from graphmem.store.views import path_params, view_params

OBSERVATIONS_SHOWN = 20  # observations of one entity in a read
RELATIONS_SHOWN = 50  # relations of one entity in a read
SEARCH_ENTITIES = 20  # entities a search answers


class Knowledge:
    def __init__(self, core: Core, entities: Entities, search: Search) -> None:
        self.core = core
        self.entities = entities
        self.searching = search

    def read_graph(self, ctx: CallerContext, namespace: str | None, limit: int,
                   cursor: str | None) -> KnowledgeGraph:
        """A page of the entities (name order) with their observations and relations; never the whole of a
        large namespace at once (``next_cursor`` continues). ``namespace`` None: every one the caller may
        read, in one list."""
        page = self.entities.page(ctx, namespace, EntityListOptions(limit=limit, cursor=cursor))
        graph = self._knowledge(page.namespaces, page.items)
        return graph.model_copy(update={"truncated": page.next_cursor is not None, "next_cursor": page.next_cursor})

    def search(self, ctx: CallerContext, namespace: str | None, query: str) -> KnowledgeGraph:
        """Entities whose name matches ``query`` (words and meaning), then entities the best matching facts
        mention, up to ``SEARCH_ENTITIES``, with their observations and relations."""
        names = read_in(ctx, namespace)
        named = self.searching.entities(ctx, EntitySearchRequest(query=query, namespaces=names,
                                                                 limit=SEARCH_ENTITIES))
        facts = self.searching.facts(ctx, SearchRequest(query=query, namespaces=names, limit=SEARCH_ENTITIES))
        found: dict[str, EntityRef] = {hit.id: EntityRef(id=hit.id, name=hit.name, type=hit.type)
                                       for hit in named.items}
        for fact in facts:
            for entity in fact.entities:
                found.setdefault(entity.id, entity)
        return self._knowledge(names, list(found.values())[:SEARCH_ENTITIES])

    def find_by_name(self, ctx: CallerContext, namespace: str | None, names: Sequence[str]) -> KnowledgeGraph:
        """The entities with these names (matched as entities are keyed: case, articles and punctuation
        folded), or, for a name no entity has, the entities it is an alias of; with their observations and
        relations."""
        read_from = read_in(ctx, namespace)
        keys = alias_keys(read_from, names)  # an entity's key and an alias's are built alike
        scope = {"namespaces": read_from, **view_params(CURRENT), **path_params(None)}

        def read(tx: Tx) -> list[dict[str, Any]]:
            exact = tx.run("entities_by_keys_in_view", keys=keys, **scope)
            unnamed = sorted(set(keys) - {row["key"] for row in exact})
            aliased = tx.run("entities_by_alias", alias_keys=unnamed, limit=len(unnamed) * SEARCH_ENTITIES,
                             **scope) if unnamed else []
            return list({row["id"]: row for row in [*exact, *aliased]}.values())

        rows = self.core.store.read(read)
        return self._knowledge(read_from, [EntityRef.model_validate(row) for row in rows])

    def _knowledge(self, names: list[str], entities: Sequence[EntityRef]) -> KnowledgeGraph:
        """``entities`` (found in ``names``, already checked readable) with their observations and relations."""
        ids = [entity.id for entity in entities]
        if not ids:
            return KnowledgeGraph(entities=[], relations=[], namespaces=names)
        scope = {"namespaces": names, **view_params(CURRENT), **path_params(None)}

        def read(tx: Tx) -> dict[str, list[str]]:
            rows = tx.run("entities_observations", ids=ids, limit=OBSERVATIONS_SHOWN, **scope)
            return {row["entity_id"]: list(row["observations"]) for row in rows}

        observations = self.core.store.read(read)
        neighbours = self.entities.neighbours_of(CallerContext.for_namespaces(*names, writable=False), None, ids,
                                                 RELATIONS_SHOWN, CURRENT)
        relations: dict[tuple[str, str, str], KnownRelation] = {}
        for entity in entities:
            for other in neighbours.get(entity.id, []):
                source, target = (entity.name, other.name) if other.outgoing else (other.name, entity.name)
                kind = other.predicate if other.asserted else _identifier(other.predicate, other.negated)
                relation = KnownRelation(source=source or "", target=target or "", relationType=kind,
                                         asserted=other.asserted)
                relations.setdefault((relation.source, relation.relationType, relation.target), relation)
        return KnowledgeGraph(
            entities=[KnownEntity(name=e.name or "", type=e.type or "", observations=observations.get(e.id, []))
                      for e in entities],
            relations=list(relations.values()), namespaces=names)


def _identifier(predicate: str, negated: bool) -> str:
    """An extracted predicate in the contract's form: "work at" → WORK_AT; negated: NOT_WORK_AT."""
    words = re.sub(r"[^A-Za-z0-9]+", "_", predicate).strip("_").upper() or "RELATED_TO"
    return f"NOT_{words}" if negated else words
