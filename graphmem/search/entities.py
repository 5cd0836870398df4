"""Entity search: by embedding and by name, fused by reciprocal rank. An entity is visible in a view only
while a fact of that view mentions it, so an entity known only from a forgotten or superseded memory is not
found in the current view."""

from __future__ import annotations

from typing import Annotated, Any

from pydantic import BaseModel, ConfigDict, Field

from graphmem.model import within
from graphmem.search.fuse import rrf
from graphmem.search.hybrid import SignalScore
from graphmem.search.lucene import escape_lucene
from graphmem.search.retrieve import ENTITIES, ranked, vector_ranked, widening
from graphmem.store.dialect import Dialect, SearchIndex
from graphmem.store.driver import Tx
from graphmem.store.views import CURRENT, View

ENTITY_WEIGHTS = {"vector": 1.0, "name": 1.0}  # a typed name is as strong a signal as meaning for entities
ENTITY_RRF_K = 5


class EntitySearchOptions(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")

    limit: Annotated[int, within(1, 100)] = 10
    view: View = CURRENT
    explain: bool = False


class EntityHit(BaseModel):
    id: str
    name: str | None
    type: str | None
    score: float
    similarity: float = Field(description="cosine similarity of the name's embedding to the query, 0..1")
    facts: int = Field(description="facts in the view that mention the entity")
    signals: dict[str, SignalScore] | None = None


def search_entities(tx: Tx, dialect: Dialect, namespaces: list[str], text: str, vector: list[float],
                    options: EntitySearchOptions) -> list[EntityHit]:
    pool = max(30, options.limit * 3)
    params: dict[str, Any] = {"namespaces": namespaces, "vector": vector, **options.view.params()}
    lists = {"vector": vector_ranked(tx, dialect, ENTITIES, params, pool)}
    query = escape_lucene(text)
    if query is not None:
        rows = widening(tx, "entities_name_search", dialect.index_name(SearchIndex.entity_name),
                        {**params, "query": query}, pool)
        lists["name"] = ranked(rows, "name")
    fused = rrf(lists, ENTITY_WEIGHTS, ENTITY_RRF_K)[: options.limit]
    found = {r["id"]: r for r in tx.run("entities_hydrate", entity_ids=[f.id for f in fused], **params)}
    return [EntityHit(id=f.id, name=found[f.id]["name"], type=found[f.id]["type"], score=f.score,
                      similarity=dialect.cosine_score(found[f.id]["raw"]), facts=found[f.id]["facts"],
                      signals={s: SignalScore(score=c.score, rank=c.rank) for s, c in sorted(f.signals.items())}
                      if options.explain else None)
            for f in fused if f.id in found]
