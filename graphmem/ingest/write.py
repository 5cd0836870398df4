"""Write: one batch of prepared documents into the graph, inside the caller's transaction.

Facts, chunks, entities (resolved and typed by vote against what the graph already holds), MENTIONS, RELATES
triples and SIMILAR_TO candidate links, each kind as one UNWIND statement. Concurrent ingestion of the same
new entity collides on the ``entity_key`` uniqueness constraint; the transaction is retried by the store
and the retry finds the winner's node (``entities_upsert`` is a MERGE).

The SIMILAR_TO candidates of new entities are one vector-index query each, the largest part of a bulk load
(139 s of 348 s for 100k facts). They look for entities that were already stored, so they are read beside the
transaction: in read transactions of their own, on ``SIMILAR_READERS`` threads, while it writes everything
but the links (documents, facts, chunks, then entities, mentions and triples); a read transaction does not
see what this one has not committed, so they find the stored entities only, and the batch's own new ones are
compared with each other in memory (``similar_within``). Waiting for them after the entities, mentions and
triples rather than after the chunks took a bulk load of known entities from 759 to 934 and from 1,033 to
1,129 facts/s (two alternating runs of 20 and 30 batches of 750 facts each way at 100k facts), and changed
nothing where most entities were new (314 and 317 facts/s): there the reads are the whole cost. (On a routed
Neo4j cluster such a read could land on a follower that lags behind the previous batch; graphmem runs
against one server.)
"""

from __future__ import annotations

import logging
import uuid
from collections import defaultdict
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from typing import Any, TypeVar

import numpy as np

from graphmem.errors import GraphmemError
from graphmem.ingest.aliases import AliasPlan, Known, number_variants, short_forms
from graphmem.ingest.aliases import plan as alias_plan
from graphmem.ingest.extract import EXTRACTOR
from graphmem.ingest.pipeline import PreparedDocument, StageTimes
from graphmem.ingest.resolve import display, entity_key, vote
from graphmem.store.dialect import Dialect, SearchIndex
from graphmem.store.driver import GraphStore, Tx
from graphmem.store.names import StatementName

log = logging.getLogger(__name__)

ASSERTED_BY = "agent"  # a fact's extractor when an agent stated it
SIMILAR_CANDIDATES = 100  # over-fetch: the namespace filter runs after the index's top k
SIMILAR_LINKS_PER_ENTITY = 3
# Read transactions a batch's similarity queries are split over, each one pooled connection while it runs.
# Alone, two took 300 queries from 5.3-6.0 s to 3.4-3.6 s at 100k facts on 2 cores; beside the writes of a
# 30k-fact bulk load, one, two and three readers gave 179, 186-191 and 185 facts/s (149-153 reading inside).
SIMILAR_READERS = 2

T = TypeVar("T")


@dataclass(frozen=True)
class WriteOptions:
    user_name: str
    similar_cosine: float
    dialect: Dialect
    times: StageTimes
    read: Callable[[Callable[[Tx], Any]], Any]  # ``GraphStore.read``: the similarity reads beside the write


def fact_records(document: dict[str, Any], prepared: PreparedDocument) -> list[dict[str, Any]]:
    return [
        {"id": str(uuid.uuid4()), "namespace": document["namespace"], "document_id": document["id"],
         "position": i, "text": fact.text, "start": fact.start, "end": fact.end, "embedding": fact.embedding,
         "kind": fact.kind.value, "section": fact.section, "path": document.get("path"),
         "attributes": fact.attributes, "is_latest": True, "is_forgotten": False, "is_inference": False,
         "recorded_at": document["recorded_at"], "assertion": fact.assertion,
         "extractor": ASSERTED_BY if fact.assertion else EXTRACTOR}
        for i, fact in enumerate(prepared.facts)
    ]


def chunk_records(document: dict[str, Any], prepared: PreparedDocument) -> list[dict[str, Any]]:
    """A memory's chunks (``ingest/chunks.py``), carrying its namespace, path and view flags as its facts do,
    so the same view and filter fragments apply to them and forget, restore and redact reach them."""
    return [
        {"id": str(uuid.uuid4()), "namespace": document["namespace"], "document_id": document["id"],
         "position": i, "text": chunk.text, "start": chunk.start, "end": chunk.end, "embedding": chunk.embedding,
         "path": document.get("path"), "is_latest": True, "is_forgotten": False,
         "recorded_at": document["recorded_at"]}
        for i, chunk in enumerate(prepared.chunks)
    ]


def write_documents(tx: Tx, namespace: str, batch: list[tuple[dict[str, Any], PreparedDocument]], now: int,
                    options: WriteOptions) -> list[str]:
    """Documents, facts and everything extracted from them, for one namespace, in the open transaction.
    Returns the keys of the entities whose type label does not follow their type yet (``sync_type_labels``
    gives them their label once this commits); a known entity whose type stays is not among them."""
    with options.times.timing("write"):
        return _write(tx, namespace, batch, now, options)


@dataclass
class _Rows:
    """A batch as statement rows: facts, chunks, mentions and triples, and the entities it mentions."""
    facts: list[dict[str, Any]] = field(default_factory=list)
    chunks: list[dict[str, Any]] = field(default_factory=list)
    mentions: dict[tuple[str, str], dict[str, Any]] = field(default_factory=dict)
    triples: list[dict[str, Any]] = field(default_factory=list)
    seen_types: dict[str, list[str]] = field(default_factory=lambda: defaultdict(list))
    stated_types: dict[str, str] = field(default_factory=dict)  # entity key → the type an agent stated
    names: dict[str, tuple[str, str]] = field(default_factory=dict)  # entity key → display name, kind
    asserted: set[str] = field(default_factory=set)  # entity keys an agent's statement names

    def link(self, links: dict[str, tuple[str, str]]) -> None:
        """Point the mentions and triples of each linked key at its target (``ingest/aliases.py``); a linked
        mention records its form."""
        mentions: dict[tuple[str, str], dict[str, Any]] = {}
        for (fact_id, key), entry in self.mentions.items():
            if key in links:
                target, form = links[key]
                entry = {**entry, "entity_key": target, "alias": form}
                key = target
            kept = mentions.setdefault((fact_id, key), entry)
            if kept is not entry:  # the fact names the target in both forms: one mention, every span
                kept["starts"] = kept["starts"] + entry["starts"]
                kept["ends"] = kept["ends"] + entry["ends"]
        self.mentions = mentions
        for triple in self.triples:
            for end in ("subject_key", "object_key"):
                if triple[end] in links:
                    triple[end] = links[triple[end]][0]
        for key, (target, _) in links.items():
            self.seen_types[target].extend(self.seen_types.pop(key, []))
            self.names.setdefault(target, self.names[key])  # only a new entity takes its name from here
            del self.names[key]


def _rows(namespace: str, batch: list[tuple[dict[str, Any], PreparedDocument]], user_name: str) -> _Rows:
    rows = _Rows()
    for document, prepared in batch:
        records = fact_records(document, prepared)
        rows.facts.extend(records)
        rows.chunks.extend(chunk_records(document, prepared))
        for record, fact in zip(records, prepared.facts, strict=True):
            for mention in fact.mentions:
                key = entity_key(namespace, mention.entity)
                name, kind = display(mention.entity, user_name)
                rows.names.setdefault(key, (name, kind))
                if fact.assertion is None:
                    rows.seen_types[key].append(kind)
                else:
                    rows.asserted.add(key)
                # an agent's mention without a type (an observation, a relation's end) says none
                if fact.assertion is not None and kind:
                    rows.stated_types[key] = kind
                entry = rows.mentions.setdefault((record["id"], key), {
                    "fact_id": record["id"], "entity_key": key, "starts": [], "ends": [],
                    "text": document["content"][mention.start:mention.end], "asserted": fact.assertion is not None,
                    "alias": None})
                entry["starts"].append(mention.start)
                entry["ends"].append(mention.end)
            for triple in fact.triples:
                if fact.assertion is not None:
                    rows.asserted.update(entity_key(namespace, end) for end in (triple.subject, triple.object))
                rows.triples.append({
                    "subject_key": entity_key(namespace, triple.subject), "predicate": triple.predicate,
                    "object_key": entity_key(namespace, triple.object), "negated": triple.negated,
                    "asserted": fact.assertion is not None, "fact_id": record["id"],
                    "document_id": document["id"], "recorded_at": document["recorded_at"]})
    return rows


def _aliases(tx: Tx, namespace: str, rows: _Rows) -> tuple[dict[str, dict[str, Any]], AliasPlan]:
    """The stored entities the batch names, after linking its short names and plurals (``ingest/aliases.py``):
    only the batch's new names cost lookups (their other-number forms, short forms and registered targets)."""
    existing = {row["key"]: row for row in tx.run("entities_by_keys", keys=sorted(rows.names), namespace=namespace)}
    prefix = f"{namespace}|"
    mentioned = {key: (rows.stated_types.get(key) or vote([], [], rows.seen_types[key], None)[2],
                       key not in rows.asserted) for key in rows.names}
    shorts = {key: short_forms(key.removeprefix(prefix), mentioned[key][0])
              for key in rows.names if key not in existing}
    forms = {form for key, short in shorts.items() for form in short | {key.removeprefix(prefix)}}
    around = {prefix + form for key, short in shorts.items()
              for form in short | number_variants(key.removeprefix(prefix))} - existing.keys()
    nearby = {row["key"]: row for row in tx.run("entities_by_keys", keys=sorted(around), namespace=namespace)}
    registered = tx.run("alias_targets", alias_keys=sorted(prefix + form for form in forms), namespace=namespace)
    targets: dict[str, list[str]] = defaultdict(list)
    for row in registered:
        targets[row["form"]].append(row["key"])
    stored = {key: Known(key.removeprefix(prefix), row["type"])
              for key, row in {**existing, **nearby, **{row["key"]: row for row in registered}}.items()}
    plan = alias_plan(namespace, mentioned, stored, targets)
    rows.link(plan.links)
    return {**existing, **{key: row for key, row in nearby.items() if key in rows.names}}, plan


def _entities(rows: _Rows, existing: dict[str, dict[str, Any]],
              embeddings: dict[str, list[float]]) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    """Upsert rows for the batch's entities, typed by vote against what the graph holds, and those of them not
    stored yet that have a vector. Only a new entity's vector is sent: the upsert writes it on create only, and
    384 floats a row for every known entity of the batch were most of the statement's payload in a bulk load.
    A type an agent stated (now, or before) is the entity's type; the vote goes on beside it, so the voted
    type returns when the agent's statements are deleted."""
    entities = []
    for key in sorted(rows.names):
        name, _ = rows.names[key]
        stored = existing.get(key)
        labels, tallies, winner = vote(stored["labels"] or [] if stored else [],
                                       stored["counts"] or [] if stored else [], rows.seen_types[key],
                                       stored["type"] if stored else None)
        stated = rows.stated_types.get(key) or (stored["asserted_type"] if stored else None)
        normalized = key.split("|", 1)[1]
        entities.append({"entity_key": key, "id": str(uuid.uuid4()), "name": name, "normalized_name": normalized,
                         "type": stated or winner, "type_labels": labels, "type_counts": tallies,
                         "asserted_type": rows.stated_types.get(key),
                         "embedding": None if stored else embeddings.get(normalized)})
    return entities, [e for e in entities if e["entity_key"] not in existing and e["embedding"] is not None]


def _write(tx: Tx, namespace: str, batch: list[tuple[dict[str, Any], PreparedDocument]], now: int,
           options: WriteOptions) -> list[str]:
    rows = _rows(namespace, batch, options.user_name)
    embeddings: dict[str, list[float]] = {}
    for _, prepared in batch:
        embeddings.update(prepared.entity_embeddings)
    existing, aliases = _aliases(tx, namespace, rows) if rows.names else ({}, AliasPlan())
    entities, new = _entities(rows, existing, embeddings) if rows.names else ([], [])
    # the similarity reads run while this transaction writes everything but the links (module docstring);
    # threads of this write's own, so that it never queues behind other writers' reads while it is open
    readers = ThreadPoolExecutor(max_workers=SIMILAR_READERS, thread_name_prefix="graphmem-similar")
    try:
        candidates = [readers.submit(_candidates, namespace, part, options)
                      for part in _split(new, SIMILAR_READERS)]
        tx.run_chunked("documents_create", "documents", [{**document, "speaker": prepared.speaker}
                                                         for document, prepared in batch])
        _follow(tx, namespace, [document["id"] for document, _ in batch])
        if rows.facts:
            tx.run_chunked("facts_create", "facts", rows.facts)
        if rows.chunks:
            tx.run_chunked("chunks_create", "chunks", rows.chunks)
        relabel = _entities_write(tx, namespace, rows, entities, embeddings, now) if entities else []
        _aliases_write(tx, namespace, aliases)
    finally:  # a failed write waits for its reads too (none is left running), and its own error is raised
        with options.times.timing("similar"):
            readers.shutdown(wait=True)
    stored = [row for future in candidates for row in future.result()]
    links = _links(new, stored, options.similar_cosine)
    if links:
        tx.run_chunked("similar_links_create", "links", links, namespace=namespace, now=now)
    return relabel


def _entities_write(tx: Tx, namespace: str, rows: _Rows, entities: list[dict[str, Any]],
                    embeddings: dict[str, list[float]], now: int) -> list[str]:
    """The batch's entities, their mentions and triples; returns the keys whose type label must follow."""
    upserted = tx.run_chunked("entities_upsert", "entities", entities, namespace=namespace, now=now)
    missing = {row["key"] for row in upserted if row["missing"]}
    refill = [{"entity_key": e["entity_key"], "embedding": embeddings[e["normalized_name"]]} for e in entities
              if e["entity_key"] in missing and e["normalized_name"] in embeddings]
    if refill:
        tx.run_chunked("entities_embedding_set", "entities", refill, namespace=namespace)
    tx.run_chunked("mentions_create", "mentions", list(rows.mentions.values()), namespace=namespace)
    if rows.triples:
        tx.run_chunked("triples_create", "triples", rows.triples, namespace=namespace)
    return sorted(row["key"] for row in upserted if row["relabel"])


def _aliases_write(tx: Tx, namespace: str, plan: AliasPlan) -> None:
    """Absorb the bare short names a new full name takes in, then register the batch's forms."""
    if plan.absorb:
        for statement in ("entity_absorb_shared_mentions", "entity_absorb_mentions", "entity_absorb_triples",
                          "entity_absorb_delete"):
            tx.run(statement, absorb=plan.absorb, namespace=namespace)
    if plan.register:
        tx.run_chunked("aliases_register", "aliases", plan.register, namespace=namespace)


def _follow(tx: Tx, namespace: str, document_ids: list[str]) -> None:
    """Link each new memory to the one stored just before it (FOLLOWS): the batch in its order, its first to
    the namespace's last stored memory (its StoredTail, moved to the batch's last). Document search uses the
    links to bring in a strong memory's neighbours (a question and its answer are two chat turns)."""
    if not document_ids:
        return
    tail = tx.single("stored_tail_move", namespace=namespace, last_id=document_ids[-1])
    previous = [tail["previous_id"] if tail else None, *document_ids[:-1]]
    links = [{"id": doc_id, "previous_id": prev} for doc_id, prev in zip(document_ids, previous, strict=True) if prev]
    if links:
        tx.run_chunked("documents_follow", "links", links, namespace=namespace)


def _split(rows: list[T], parts: int) -> list[list[T]]:
    """``rows`` in at most ``parts`` non-empty slices of about equal size."""
    if not rows:
        return []
    size = -(-len(rows) // parts)
    return [rows[i:i + size] for i in range(0, len(rows), size)]


def _candidates(namespace: str, new: list[dict[str, Any]], options: WriteOptions) -> list[dict[str, Any]]:
    """Stored entities of the namespace whose name embedding is close to a new entity's (the vector index, one
    statement for the slice, in a read transaction of its own)."""
    rows = [{"entity_key": e["entity_key"], "embedding": e["embedding"]} for e in new]

    def query(tx: Tx) -> list[dict[str, Any]]:
        return tx.run_chunked("entities_similar", "entities", rows,
                              index=options.dialect.index_name(SearchIndex.entity_embedding), k=SIMILAR_CANDIDATES,
                              namespace=namespace, min_score=_min_score(options.similar_cosine))

    result: list[dict[str, Any]] = options.read(query)
    return result


def _min_score(similar_cosine: float) -> float:
    return (1 + similar_cosine) / 2  # the vector procedure scores (1 + cos) / 2 on both servers


def _links(new: list[dict[str, Any]], stored: list[dict[str, Any]], similar_cosine: float) -> list[dict[str, Any]]:
    """SIMILAR_TO links for new entities: the stored entities found close (``_candidates``) and new entities of
    this batch close to each other (not in the index yet: one matrix product). Never a merge, only a link for
    review; at most ``SIMILAR_LINKS_PER_ENTITY`` a new entity, the closest first."""
    rows = stored + similar_within(new, _min_score(similar_cosine))
    rows.sort(key=lambda r: (r["key"], -r["score"], r["other"]))
    per_key: dict[str, int] = defaultdict(int)
    links = []
    for row in rows:
        if per_key[row["key"]] < SIMILAR_LINKS_PER_ENTITY:
            per_key[row["key"]] += 1
            links.append({"key": row["key"], "other": row["other"], "score": float(row["score"])})
    return links


def similar_within(new: list[dict[str, Any]], min_score: float) -> list[dict[str, Any]]:
    """Pairs of the batch's new entities at or above ``min_score`` ((1 + cos) / 2), each pair once: the later
    entity links to the earlier one. Float64, so the threshold decides exactly as a Python loop would."""
    if len(new) < 2:
        return []
    vectors = np.array([e["embedding"] for e in new], dtype=np.float64)
    scores = (1.0 + vectors @ vectors.T) / 2.0
    earlier, later = np.nonzero(np.triu(scores >= min_score, k=1))
    return [{"key": new[j]["entity_key"], "other": new[i]["entity_key"], "score": float(scores[i, j])}
            for i, j in zip(earlier.tolist(), later.tolist(), strict=True)]


def sync_type_labels(store: GraphStore, namespace: str, keys: list[str]) -> None:
    """Give entities their type as a label, after the write (see ``entity_labels_unset`` for why two
    transactions of their own)."""
    if not keys:
        return
    relabelling: tuple[StatementName, ...] = ("entity_labels_unset", "entity_labels_set")
    for statement in relabelling:

        def relabel(tx: Tx, statement: StatementName = statement) -> None:
            tx.run(statement, keys=keys, namespace=namespace)

        try:
            store.write(relabel)
        except GraphmemError as exc:  # the write itself committed: a missed label is reconciled later
            log.warning("type labels of %d entities not updated: %s", len(keys), exc.message)
            return
