"""Ingestion into the real bundled engine (real spaCy, the hashing embedder): exactly the expected graph,
exactly once, resolution, and clean removal."""

from __future__ import annotations

import threading
from concurrent.futures import ThreadPoolExecutor
from typing import Any

import neo4j
import pytest

from graphmem.errors import Conflict
from graphmem.model import CallerContext, DocumentInput, ForgetMode, ForgetRequest, IngestItem, UpdateInput
from graphmem.results import Change, Document, IngestOutcome
from graphmem.runtime import Runtime
from graphmem.service import MemoryService
from helpers import counts, query

TEXT = "Alice Johnson works at Microsoft. Alice Johnson lives in Seattle. I use Neo4j."


def doc(content: str, **fields: Any) -> DocumentInput:
    return DocumentInput(content=content, **fields)


def ingested(service: MemoryService, ctx: CallerContext, ns: str, content: str, **fields: Any) -> IngestOutcome:
    """One item through the files path, versioned by its source (as a file is)."""
    (outcome,) = service.ingest(ctx, ns, [IngestItem(document=doc(content, **fields), versioned=True)])
    assert outcome.error is None, outcome.error
    return outcome


def ingested_document(outcome: IngestOutcome) -> Document:
    assert outcome.document is not None, outcome
    return outcome.document


def label_counts(graph: neo4j.Driver, ns: str) -> dict[str, int]:
    rows = query(graph, "MATCH (n) WHERE n.namespace = $ns UNWIND labels(n) AS label "
                        "RETURN label, count(*) AS c ORDER BY label", ns=ns)
    return {r["label"]: r["c"] for r in rows}


def edge_counts(graph: neo4j.Driver, ns: str) -> dict[str, int]:
    rows = query(graph, "MATCH (a)-[r]->(b) WHERE a.namespace = $ns AND b.namespace = $ns "
                        "RETURN type(r) AS t, count(*) AS c ORDER BY t", ns=ns)
    return {r["t"]: r["c"] for r in rows}


def test_one_ingestion_writes_exactly_the_expected_graph(service: MemoryService, ctx: CallerContext,
                                                         ns: str, graph: neo4j.Driver) -> None:
    added = service.add_memory(ctx, ns, doc(TEXT)).document
    assert label_counts(graph, ns) == {"Document": 1, "Fact": 3, "Chunk": 1, "Entity": 5, "Person": 2,
                                       "Organization": 1, "Place": 1, "Technology": 1, "StoredTail": 1,
                                       "Alias": 2}  # a person's first and last name (ingest/aliases.py)
    assert edge_counts(graph, ns) == {"CONTAINS": 3 + 1, "MENTIONS": 6, "RELATES": 3,  # 3 facts, 1 chunk
                                      "ALIAS_OF": 2}
    rows = query(graph, "MATCH (s:Entity)-[r:RELATES]->(o:Entity) WHERE r.namespace = $ns "
                        "RETURN s.name AS s, r.predicate AS p, o.name AS o, r.negated AS n, r.document_id AS d, "
                        "r.fact_id IS NOT NULL AS has_fact ORDER BY p", ns=ns)
    assert [(r["s"], r["p"], r["o"], r["n"]) for r in rows] == [
        ("Alice Johnson", "live in", "Seattle", False), ("user", "use", "Neo4j", False),
        ("Alice Johnson", "work at", "Microsoft", False)]
    assert all(r["d"] == added.id and r["has_fact"] for r in rows)
    entities = query(graph, "MATCH (e:Entity) WHERE e.namespace = $ns RETURN e.normalized_name AS k, e.type AS t, "
                            "size(e.embedding) AS dims, e.entity_key AS key ORDER BY k", ns=ns)
    assert [(e["k"], e["t"]) for e in entities] == [("@user", "Person"), ("alice johnson", "Person"),
                                                    ("microsoft", "Organization"), ("neo4j", "Technology"),
                                                    ("seattle", "Place")]
    assert all(e["dims"] == 384 and e["key"] == f"{ns}|{e['k']}" for e in entities)
    facts = query(graph, "MATCH (f:Fact) WHERE f.namespace = $ns RETURN f.text AS t, f.start AS s, f.end AS e, "
                         "size(f.embedding) AS dims, f.extractor AS x, f.confidence AS c ORDER BY s", ns=ns)
    assert all(TEXT[f["s"]:f["e"]] == f["t"] and f["dims"] == 384 and "spacy" in f["x"] and f["c"] is None
               for f in facts)
    mentions = query(graph, "MATCH (f:Fact)-[m:MENTIONS]->(e:Entity) WHERE f.namespace = $ns "
                            "RETURN m.text AS text, m.starts AS s, m.ends AS e", ns=ns)
    assert all(TEXT[m["s"][0]:m["e"][0]] == m["text"] for m in mentions)


def test_reingestion_changes_nothing(service: MemoryService, ctx: CallerContext, ns: str,
                                     graph: neo4j.Driver) -> None:
    first = service.add_memory(ctx, ns, doc(TEXT)).document
    before = counts(graph, ns)
    again = service.add_memory(ctx, ns, doc(TEXT.replace(" ", "  ") + "\n", request_id="reingest-01")).document
    assert again.id == first.id and counts(graph, ns) == before
    outcome = ingested(service, ctx, ns, TEXT)
    assert outcome.change is Change.unchanged
    assert ingested_document(outcome).id == first.id and counts(graph, ns) == before
    batch = [c.document for c in service.add_memories(ctx, ns, [doc(TEXT), doc(TEXT)])]
    assert {d.id for d in batch} == {first.id} and counts(graph, ns) == before


def test_old_or_forgotten_matches_make_a_new_document(service: MemoryService, ctx: CallerContext,
                                                      ns: str) -> None:
    v1 = service.add_memory(ctx, ns, doc("Bob moved to Berlin.")).document
    service.update_memory(ctx, v1.id, UpdateInput(content="Bob moved to Munich."))
    fresh = service.add_memory(ctx, ns, doc("Bob moved to Berlin.")).document  # only an old version holds it
    assert fresh.id != v1.id and fresh.version == 1
    service.forget(ctx, fresh.id, ForgetRequest(mode=ForgetMode.soft))
    third = service.add_memory(ctx, ns, doc("Bob moved to Berlin.")).document  # only a forgotten memory holds it
    assert third.id not in (v1.id, fresh.id)
    with pytest.raises(Conflict):  # restoring would make two identical current memories
        service.restore(ctx, fresh.id)


def test_concurrent_identical_ingestions_make_one_document(service: MemoryService, ctx: CallerContext,
                                                           ns: str, graph: neo4j.Driver) -> None:
    barrier = threading.Barrier(4)

    def add(i: int) -> str:
        barrier.wait()
        return service.add_memory(ctx, ns, doc(TEXT, request_id=f"concurrent-{i:04d}")).document.id

    with ThreadPoolExecutor(max_workers=4) as pool:
        ids = set(pool.map(add, range(4)))
    assert len(ids) == 1
    assert label_counts(graph, ns)["Document"] == 1 and label_counts(graph, ns)["Entity"] == 5


def test_concurrent_ingestion_of_the_same_new_entity(service: MemoryService, ctx: CallerContext, ns: str,
                                                     graph: neo4j.Driver) -> None:
    barrier = threading.Barrier(4)

    def add(i: int) -> str:
        barrier.wait()
        return service.add_memory(ctx, ns, doc(f"Zanzibar Labs hired person number {i}.")).document.id

    with ThreadPoolExecutor(max_workers=4) as pool:
        assert len(set(pool.map(add, range(4)))) == 4
    rows = query(graph, "MATCH (f:Fact)-[:MENTIONS]->(e:Entity {entity_key: $k}) RETURN count(f) AS c",
                 k=f"{ns}|zanzibar labs")
    assert rows == [{"c": 4}]


def test_resolution_merges_variants_and_keeps_namespaces_apart(service: MemoryService, ns: str,
                                                                 graph: neo4j.Driver) -> None:
    other = f"{ns}-b"
    ctx = CallerContext.for_namespaces(ns, other)
    service.add_memory(ctx, ns, doc("Acme Corp hired Bob."))
    service.add_memory(ctx, ns, doc("The Acme Corp. fired Carol."))
    service.add_memory(ctx, ns, doc("Bob praised Acme Corp's culture."))
    service.add_memory(ctx, other, doc("Acme Corp hired Bob."))
    rows = query(graph, "MATCH (f:Fact)-[:MENTIONS]->(e:Entity {normalized_name: 'acme corp'}) "
                        "RETURN e.namespace AS ns, e.id AS id, count(f) AS mentions ORDER BY ns", )
    assert [(r["ns"], r["mentions"]) for r in rows if r["ns"] in (ns, other)] == [(ns, 3), (other, 1)]
    ids = {r["id"] for r in rows if r["ns"] in (ns, other)}
    assert len(ids) == 2
    crossing = query(graph, "MATCH (a)-[r]->(b) WHERE a.namespace <> b.namespace RETURN count(r) AS c")
    assert crossing == [{"c": 0}]


def test_near_duplicates_are_linked_not_merged(runtime: Runtime, ns: str, graph: neo4j.Driver) -> None:
    # the hashing embedder scores "Acme Corp" / "Acme Corporation" at 1/3: lower the threshold for it
    settings = runtime.settings.model_copy(update={"similar_entity_cosine": 0.3})
    service = MemoryService(runtime.store, settings, runtime.service.pipeline, runtime.service.core.cursors)
    ctx = CallerContext.for_namespaces(ns)
    service.add_memory(ctx, ns, doc("Acme Corp hired Bob."))
    service.add_memory(ctx, ns, doc("Acme Corporation fired Carol."))
    rows = query(graph, "MATCH (a:Entity)-[r:SIMILAR_TO]->(b:Entity) WHERE a.namespace = $ns "
                        "RETURN a.normalized_name AS a, b.normalized_name AS b, r.score AS s", ns=ns)
    assert [(r["a"], r["b"]) for r in rows] == [("acme corporation", "acme corp")]
    assert 0.6 < rows[0]["s"] < 1.0
    service.add_memory(ctx, ns, doc("Zeta Labs hired Dan. Zeta Laboratories fired Eve."))  # both new, one batch
    same_batch = query(graph, "MATCH (a:Entity)-[r:SIMILAR_TO]-(b:Entity) WHERE a.namespace = $ns "
                              "AND a.normalized_name STARTS WITH 'zeta' RETURN count(r) AS c", ns=ns)
    assert same_batch == [{"c": 2}]  # one link, seen from both ends
    names = query(graph, "MATCH (e:Entity) WHERE e.namespace = $ns AND e.normalized_name STARTS WITH 'acme' "
                         "RETURN count(e) AS c", ns=ns)
    assert names == [{"c": 2}]


def test_a_known_entity_keeps_its_embedding(service: MemoryService, ctx: CallerContext, ns: str,
                                            graph: neo4j.Driver) -> None:
    """A later mention sends no vector for a known entity (the upsert writes it on create only)."""
    service.add_memory(ctx, ns, doc("Acme Corp hired Bob."))
    key = f"{ns}|acme corp"
    read = "MATCH (e:Entity {entity_key: $k}) RETURN e.embedding AS v, e.updated_at AS at"
    (before,) = query(graph, read, k=key)
    service.add_memory(ctx, ns, doc("Acme Corp fired Carol."))
    (after,) = query(graph, read, k=key)
    assert after["at"] > before["at"]  # the entity was written again
    assert before["v"] and after["v"] == before["v"]
    assert service.pipeline.embedder.embed(["Acme Corp"])[0] == pytest.approx(after["v"])
    # one left without a vector (deleted and created again between a batch's read and its upsert) gets it back
    query(graph, "MATCH (e:Entity {entity_key: $k}) SET e.embedding = null", k=key)
    service.add_memory(ctx, ns, doc("Acme Corp hired Dan."))
    (healed,) = query(graph, read, k=key)
    assert healed["v"] == before["v"]


def test_similarity_reads_beside_a_write_see_only_what_was_stored_before(runtime: Runtime, ns: str,
                                                                         graph: neo4j.Driver,
                                                                         monkeypatch: pytest.MonkeyPatch) -> None:
    """The SIMILAR_TO reads run in read transactions of their own while the write goes on (ingest/write.py).
    Held here until the write has upserted the batch's entities, they still find only the entities stored
    before: two new near-duplicates of one batch get the one link the batch makes in memory, not a second
    one from the index."""
    import graphmem.ingest.write as write
    from graphmem.store.driver import Tx

    settings = runtime.settings.model_copy(update={"similar_entity_cosine": 0.3})
    service = MemoryService(runtime.store, settings, runtime.service.pipeline, runtime.service.core.cursors)
    ctx = CallerContext.for_namespaces(ns)
    service.add_memory(ctx, ns, doc("Acme Corp hired Bob."))  # stored before: the reads may find it
    upserted = threading.Event()
    held: list[bool] = []
    run_chunked, candidates = Tx.run_chunked, write._candidates

    def spy(self: Tx, name: str, /, key: str, rows: list[dict[str, Any]], **params: Any) -> list[dict[str, Any]]:
        result = run_chunked(self, name, key, rows, **params)
        if name == "entities_upsert":
            upserted.set()
        return result

    def late(namespace: str, new: list[dict[str, Any]], options: write.WriteOptions) -> list[dict[str, Any]]:
        held.append(upserted.wait(timeout=30))
        return candidates(namespace, new, options)

    monkeypatch.setattr(Tx, "run_chunked", spy)
    monkeypatch.setattr(write, "_candidates", late)
    service.add_memory(ctx, ns, doc("Zeta Labs hired Dan. Zeta Laboratories fired Eve. Acme Corporation paid."))
    assert held and all(held)  # every read ran after the upsert, in the same transaction's lifetime
    links = query(graph, "MATCH (a:Entity)-[r:SIMILAR_TO]->(b:Entity) WHERE a.namespace = $ns "
                         "RETURN a.normalized_name AS a, b.normalized_name AS b", ns=ns)
    pairs = sorted((r["a"], r["b"]) for r in links)
    assert ("acme corporation", "acme corp") in pairs  # found in the index: stored before
    zeta = [pair for pair in pairs if pair[0].startswith("zeta")]
    assert len(zeta) == 1, pairs  # found in memory only: the index did not show the batch's own entities


def test_type_follows_the_majority_and_the_label_follows_the_type(service: MemoryService, ctx: CallerContext,
                                                                  ns: str, graph: neo4j.Driver) -> None:
    service.add_memory(ctx, ns, doc("Jordan lives in Oslo."))  # spaCy: Jordan is a place here
    before = query(graph, "MATCH (e:Entity {entity_key: $k}) RETURN e.type AS t, labels(e) AS l", k=f"{ns}|jordan")
    service.add_memory(ctx, ns, doc("Alex Smith met Jordan."))
    service.add_memory(ctx, ns, doc("Jordan works at Microsoft. Jordan wrote the report."))
    after = query(graph, "MATCH (e:Entity {entity_key: $k}) RETURN e.type AS t, labels(e) AS l, "
                         "e.type_labels AS tl, e.type_counts AS tc", k=f"{ns}|jordan")
    assert len(after) == 1
    tally = dict(zip(after[0]["tl"], after[0]["tc"], strict=True))
    definite = {t: n for t, n in tally.items() if t not in ("Name", "Concept")} or tally  # "type unknown" loses
    assert after[0]["t"] == max(definite, key=lambda t: (definite[t], t == before[0]["t"]))
    assert sorted(after[0]["l"]) == sorted(["Entity", after[0]["t"]])


def test_update_versions_keep_their_own_extractions(service: MemoryService, ctx: CallerContext, ns: str,
                                                    graph: neo4j.Driver) -> None:
    v1 = service.add_memory(ctx, ns, doc("Bob moved to Berlin.")).document
    v2 = service.update_memory(ctx, v1.id, UpdateInput(content="Bob moved to Munich.")).document
    rows = query(graph, "MATCH (d:Document)-[:CONTAINS]->(f:Fact)-[:MENTIONS]->(e:Entity) WHERE d.namespace = $ns "
                        "RETURN d.id AS d, collect(e.name) AS names", ns=ns)
    by_doc = {r["d"]: sorted(r["names"]) for r in rows}
    assert by_doc == {v1.id: ["Berlin", "Bob"], v2.id: ["Bob", "Munich"]}
    first = ingested(service, ctx, ns, "Carol joined Google.", source="notes/carol.md")
    assert first.change is Change.created
    second = ingested(service, ctx, ns, "Carol joined Spotify.", source="notes/carol.md")
    assert second.change is Change.versioned
    source, changed = ingested_document(first), ingested_document(second)
    assert changed.chain_id == source.id and changed.version == 2  # a changed file is a new version


def test_hard_delete_and_redact_remove_triples_embeddings_and_orphans(service: MemoryService, ctx: CallerContext,
                                                                      ns: str, graph: neo4j.Driver) -> None:
    keep = service.add_memory(ctx, ns, doc("Bob works at Microsoft.")).document
    gone = service.add_memory(ctx, ns, doc("Bob moved to Berlin. Carol likes Neo4j.")).document
    service.forget(ctx, gone.id, ForgetRequest(mode=ForgetMode.hard))
    names = {r["n"] for r in query(graph, "MATCH (e:Entity) WHERE e.namespace = $ns RETURN e.normalized_name AS n",
                                   ns=ns)}
    assert names == {"bob", "microsoft"}  # Berlin, Carol, Neo4j had no other mention
    # what is left: the kept memory's fact and chunk, its mentions and triple; the FOLLOWS link went with it
    assert edge_counts(graph, ns) == {"CONTAINS": 2, "MENTIONS": 2, "RELATES": 1}

    hidden = service.add_memory(ctx, ns, doc("Bob visited Lisbon on Friday.")).document
    assert query(graph, "MATCH (d:Document {id: $id})-[:CONTAINS]->(f:Fact) RETURN f.attributes AS a",
                 id=hidden.id) == [{"a": ["DATE: Friday"]}]
    service.forget(ctx, hidden.id, ForgetRequest(mode=ForgetMode.redact))
    facts = query(graph, "MATCH (d:Document {id: $id})-[:CONTAINS]->(f:Fact) RETURN f.text AS t, "
                         "f.embedding AS e, f.attributes AS a", id=hidden.id)
    assert facts == [{"t": None, "e": None, "a": None}]  # nothing of the text is left on the fact
    names = {r["n"] for r in query(graph, "MATCH (e:Entity) WHERE e.namespace = $ns RETURN e.normalized_name AS n",
                                   ns=ns)}
    assert names == {"bob", "microsoft"}
    chunks = query(graph, "MATCH (d:Document {id: $id})-[:CONTAINS]->(c:Chunk) RETURN c.text AS t, c.embedding AS e",
                   id=hidden.id)
    assert chunks == [{"t": None, "e": None}]
    # the redacted memory keeps its nodes, emptied: its fact and its chunk; it has no stored-order link, since
    # the memory stored just before it was the hard-deleted one (a hard delete leaves a gap)
    assert edge_counts(graph, ns) == {"CONTAINS": 4, "MENTIONS": 2, "RELATES": 1}
    assert service.get_version(ctx, keep.id).content == "Bob works at Microsoft."


def test_type_flip_moves_the_label(runtime: Runtime, ns: str, graph: neo4j.Driver,
                                   monkeypatch: pytest.MonkeyPatch) -> None:
    """Deterministic votes: the NLP step is replaced by fixed extractions (the graph is the real one)."""
    from graphmem.ingest.extract import Mention
    from graphmem.ingest.names import ExtractedEntity
    from graphmem.ingest.pipeline import PreparedDocument, PreparedFact
    from graphmem.ingest.split import FactKind

    service = runtime.service
    embedding = [1.0] + [0.0] * 383

    def prepared(kind: str) -> Any:
        def prepare(contents: list[str], progress: object = None) -> list[PreparedDocument]:
            return [PreparedDocument(c, [PreparedFact(c, 0, len(c), FactKind.sentence, None, embedding, [],
                                                      [Mention(ExtractedEntity("Jordan", kind), 0, 6)], [])],
                                     entity_embeddings={"jordan": embedding}) for c in contents]
        return prepare

    import graphmem.service.shared as shared

    relabelled: list[list[str]] = []
    sync = shared.sync_type_labels

    def recorded(store: Any, namespace: str, keys: list[str]) -> None:
        relabelled.append(keys)
        sync(store, namespace, keys)

    monkeypatch.setattr(shared, "sync_type_labels", recorded)
    ctx = CallerContext.for_namespaces(ns)
    key, read = f"{ns}|jordan", "MATCH (e:Entity {entity_key: $k}) RETURN e.type AS t, labels(e) AS l"
    for i, kind in enumerate(["Place", "Person", "Person", "Place"]):
        monkeypatch.setattr(service.pipeline, "prepare", prepared(kind))
        service.add_memory(ctx, ns, doc(f"Jordan text {i}."))
        row = query(graph, read, k=key)[0]
        # a 1:1 tie keeps Place, Person then wins 2:1, and the 2:2 tie keeps Person (and its label)
        expected = ["Place", "Place", "Person", "Person"][i]
        assert row["t"] == expected and sorted(row["l"]) == sorted(["Entity", expected]), (i, row)
    # only a new entity and a changed type are relabelled, not every entity a write mentions
    assert relabelled == [[key], [], [key], []]
    # a label change that was missed is made by the next write, though the type stays: one whose setting
    # transaction never ran (no label), and one whose two transactions never ran (the old label)
    monkeypatch.setattr(service.pipeline, "prepare", prepared("Person"))  # 3:2, then 4:2: the type stays Person
    for i, missed in enumerate(["REMOVE e:Person SET e.type_label = null",
                                "REMOVE e:Person SET e:Place, e.type_label = 'Place'"]):
        query(graph, f"MATCH (e:Entity {{entity_key: $k}}) {missed}", k=key)
        service.add_memory(ctx, ns, doc(f"Jordan text {4 + i}."))
        assert relabelled[-1] == [key]
        row = query(graph, read, k=key)[0]
        assert row["t"] == "Person" and sorted(row["l"]) == ["Entity", "Person"], (missed, row)



def test_batch_similarity_finds_the_same_pairs_as_the_pairwise_loop() -> None:
    """The matrix product that replaced the pure-Python pairwise loop links exactly the same pairs."""
    import random

    from graphmem.ingest.write import similar_within

    rng = random.Random(7)

    def unit(vector: list[float]) -> list[float]:
        norm = sum(x * x for x in vector) ** 0.5
        return [x / norm for x in vector]

    bases = [unit([rng.gauss(0, 1) for _ in range(384)]) for _ in range(12)]
    new = [{"entity_key": f"ns|e{i:02d}",
            "embedding": unit([x + rng.gauss(0, 0.015 * (i % 5)) for x in bases[i % 12]])} for i in range(60)]
    min_score = (1 + 0.85) / 2
    expected = []
    for i, a in enumerate(new):  # the loop as it was
        for b in new[i + 1:]:
            score = (1 + sum(x * y for x, y in zip(a["embedding"], b["embedding"], strict=True))) / 2
            if score >= min_score:
                expected.append((b["entity_key"], a["entity_key"], round(score, 9)))
    found = [(r["key"], r["other"], round(r["score"], 9)) for r in similar_within(new, min_score)]
    assert sorted(found) == sorted(expected) and len(expected) > 20
