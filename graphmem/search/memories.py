"""Memory-level signals: memories ranked by their own chunks (``ingest/chunks.py``) and by their stored
neighbours, for document search (``search/documents.py``) and as fact search's memory prior
(``search/hybrid.py``).

* ``memory_vector`` / ``memory_fulltext``: a memory's best chunk by vector and by full text;
* ``memory_context``: the chat turns stored next to the best ``CONTEXT_SEEDS`` memories (``FOLLOWS``, up to
  two steps either way), each at its seed's rank plus its distance less one: in a conversation stored turn by
  turn, "Eleven." answers the turn before it ("How many bakeries was that?"), and only the link finds it.

``MEMORY_WEIGHTS`` and ``MEMORY_RRF_K`` were tuned on the gold set and the conversational development set
together (``benchmarks/quality.py``). Development set, ``search_documents`` recall@10: facts alone 0.840;
with the memory's vector and full text 0.845; with stored neighbours (weight 0.5, every memory) 0.874 but gold
MRR fell to 0.888 (0.829 at weight 0.8): neighbours of a note are other notes. Neighbours of chat turns only:
0.879, gold recall@10 0.993 and MRR 0.899. Tried and not kept: "dated" memories (ranked by their nearest fact
with a DATE or TIME attribute, for "when" questions) gave 0.880 and cost the gold set (MRR 0.886 at weight
0.5, 0.788 at 1.0); the same list as a fact-level signal: 0.875, gold MRR 0.854. Memories sharing an entity
with the best three or five (entities with 2-24 memories; ranked by query similarity, or by shared entities
weighted 1/memories): 0.845-0.879 against 0.874 in the same run, gold MRR 0.844-0.899, within noise or worse.
"""

from __future__ import annotations

from typing import Any

from graphmem.results import Signal
from graphmem.search.fuse import rrf
from graphmem.search.retrieve import CHUNKS, Candidate, fulltext_ranked, vector_ranked
from graphmem.store.dialect import Dialect
from graphmem.store.driver import Tx

MEMORY_WEIGHTS = {Signal.memory_vector: 1.0, Signal.memory_fulltext: 0.4, Signal.facts: 1.0,
                  Signal.memory_context: 0.5}
MEMORY_RRF_K = 5
CONTEXT_SEEDS = 10  # the best memories whose stored neighbours are brought in

MemoryLists = dict[Signal, list[Candidate]]


def memory_candidates(tx: Tx, dialect: Dialect, params: dict[str, Any], text: str, vector_limit: int,
                      fulltext_limit: int) -> MemoryLists:
    """Memories ranked by their best chunk, by vector and by full text. ``params`` holds the namespaces, the
    query vector, the view and the filter parameters."""
    return {Signal.memory_vector: vector_ranked(tx, dialect, CHUNKS, params, vector_limit),
            Signal.memory_fulltext: fulltext_ranked(tx, dialect, CHUNKS, params, text, fulltext_limit)}


def with_context(tx: Tx, params: dict[str, Any], lists: MemoryLists) -> MemoryLists:
    """``lists`` and the ``memory_context`` list of the memories they rank best."""
    seeds = [f.id for f in rrf(lists, MEMORY_WEIGHTS, MEMORY_RRF_K)[:CONTEXT_SEEDS]]
    return {**lists, Signal.memory_context: neighbours(tx, params, seeds)}


def neighbours(tx: Tx, params: dict[str, Any], seeds: list[str]) -> list[Candidate]:
    """Chat turns stored next to the seeds, each at the rank of its best seed plus its distance less one: the
    answer turn after a strong question turn ranks just after it. The score it carries (1 / distance) only
    shows in explanations."""
    if not seeds:
        return []
    rank_of = {seed: rank for rank, seed in enumerate(seeds, start=1)}
    best: dict[str, tuple[int, int]] = {}
    for row in tx.run("documents_neighbouring", **{**params, "document_ids": seeds}):
        candidate = (rank_of[row["seed"]] + int(row["distance"]) - 1, int(row["distance"]))
        best[row["id"]] = min(best.get(row["id"], candidate), candidate)
    return [Candidate(doc_id, 1 / distance, rank) for doc_id, (rank, distance) in
            sorted(best.items(), key=lambda item: (item[1], item[0]))]
