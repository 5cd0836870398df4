"""Entity search: by embedding and by name, fused by reciprocal rank. An entity is visible in a view only
while a fact of that view mentions it, so an entity known only from a forgotten or superseded memory is not
found in the current view.

Pages continue after the last hit's (score, id) in the fused order, recomputed per page (so a page never
repeats an entity of an earlier one); a walk goes at most ``MAX_DEPTH`` entities deep.
"""

from __future__ import annotations

from typing import Any

from graphmem.ingest.aliases import alias_keys
from graphmem.model import EntitySearchRequest
from graphmem.results import EntityHit, Signal
from graphmem.search.fuse import rrf
from graphmem.search.lucene import escape_lucene
from graphmem.search.retrieve import ENTITIES, Candidate, fulltext_ranked, vector_ranked
from graphmem.store.dialect import Dialect
from graphmem.store.driver import Tx
from graphmem.store.views import path_params, view_params

# a typed name is as strong as meaning for entities, and a name the memories gave it as strong as its own
ENTITY_WEIGHTS = {Signal.vector: 1.0, Signal.name: 1.0, Signal.alias: 1.0}
ENTITY_RRF_K = 5
MAX_DEPTH = 500  # entities a paged search reaches at most


def search_entities(tx: Tx, dialect: Dialect, namespaces: list[str], vector: list[float],
                    request: EntitySearchRequest, after: tuple[float, str] | None,
                    seen: int) -> tuple[list[EntityHit], bool]:
    """(the page of hits after ``after`` in fused order, whether more follow). ``seen`` hits came before."""
    depth = min(MAX_DEPTH, seen + request.limit + 1)
    pool = max(30, depth * 3)
    params: dict[str, Any] = {"namespaces": namespaces, "vector": vector, **view_params(request.view),
                              **path_params(request.path)}
    lists = {Signal.vector: vector_ranked(tx, dialect, ENTITIES, params, pool)}
    if escape_lucene(request.query) is not None:
        lists[Signal.name] = fulltext_ranked(tx, dialect, ENTITIES, params, request.query, pool)
        aliased = tx.run("entities_by_alias", alias_keys=alias_keys(namespaces, [request.query]), limit=pool, **params)
        if aliased:
            lists[Signal.alias] = [Candidate(row["id"], 1.0, 1) for row in aliased]
    fused = rrf(lists, ENTITY_WEIGHTS, ENTITY_RRF_K)[:depth]
    if after is not None:
        fused = [f for f in fused if (-f.score, f.id) > (-after[0], after[1])]
    page, more = fused[: request.limit], len(fused) > request.limit and seen + request.limit < MAX_DEPTH
    found = {r["id"]: r for r in tx.run("entities_hydrate", entity_ids=[f.id for f in page], **params)}
    hits = [EntityHit(id=f.id, namespace=found[f.id]["namespace"], name=found[f.id]["name"], type=found[f.id]["type"],
                      score=f.score,
                      similarity=dialect.cosine_score(found[f.id]["raw"]), facts=found[f.id]["facts"],
                      signals=f.signal_scores() if request.explain else None)
            for f in page if f.id in found]
    return hits, more
