"""The embedding identity and its migration: facts read their turn header, memories have chunks with vectors of
their own, the database records that, a store written before is refused with the way out (``graphmem
reembed``), and re-embedding gives every fact exactly the vector a fresh ingestion would, and builds the chunks
(hashing embedder: fast and deterministic; tests/test_real_models.py switches models with the real one)."""

from __future__ import annotations

from pathlib import Path

import pytest

from graphmem.config import EmbedderChoice, Settings
from graphmem.errors import ConfigurationError
from graphmem.ingest.chunks import chunk_spans
from graphmem.ingest.reembed import _chunk_rows, reembed
from graphmem.ingest.split import embedding_identity, split_facts, split_memory
from graphmem.model import CallerContext, DocumentInput, ForgetMode, ForgetRequest, SearchRequest
from graphmem.nlp.embedder import embedder_name, get_embedder
from graphmem.runtime import Runtime
from graphmem.store.schema import record_embedder
from helpers import graph_driver, make_settings, own_store, query

pytestmark = pytest.mark.engine  # starts engines or servers of its own

TURN = ("Kofi (8:15 pm on 2 March 2025): Ilse! Long time no speak. I finally signed up for the Leeds half "
        "marathon. My knee is holding up so far.")


def test_facts_read_their_turn_header() -> None:
    spans = split_facts(TURN)
    assert len(spans) == 4
    assert spans[0].turn_header is None and spans[0].embedding_text.startswith("Kofi (8:15 pm")
    for span in spans[1:]:
        assert span.turn_header == "Kofi (8:15 pm on 2 March 2025):"
        assert span.embedding_text == f"{span.turn_header} {span.plain}"
    assert split_facts("No header here. Just a few notes.")[1].embedding_text == "Just a few notes."


def test_a_store_embedded_before_is_told_to_reembed_and_reembed_migrates_it(tmp_path: Path) -> None:
    data_dir = tmp_path / "migrate"
    with own_store(data_dir) as store:
        migrates(make_settings(data_dir, **store))


def migrates(settings: Settings) -> None:
    ctx = CallerContext.for_namespaces("mig")
    with Runtime.open(settings) as first, graph_driver(first) as driver:
        service = first.service
        kept = service.add_memory(ctx, "mig", DocumentInput(content=TURN)).document
        gone = service.add_memory(ctx, "mig",
                                  DocumentInput(content="Sam (9:00 am on 3 March 2025): Secret. Bye.")).document
        service.forget(ctx, gone.id, ForgetRequest(mode=ForgetMode.redact))
        fresh = {r["start"]: r["v"] for r in query(driver, "MATCH (f:Fact) WHERE f.namespace = 'mig' AND "
                                                           "f.embedding IS NOT NULL RETURN f.start AS start, "
                                                           "f.embedding AS v")}
        chunks = query(driver, "MATCH (d:Document)-[:CONTAINS]->(c:Chunk) WHERE c.namespace = 'mig' "
                               "RETURN d.id AS doc, c.text AS text, c.embedding AS v, c.is_forgotten AS forgotten")
        assert sorted((c["doc"] == kept.id, c["text"], c["forgotten"], c["v"] is None) for c in chunks) == [
            (False, None, True, True), (True, TURN, False, False)]  # redaction emptied the other memory's chunk
        chunk_vector = next(c["v"] for c in chunks if c["doc"] == kept.id)
        query(driver, "MATCH (c:Chunk) WHERE c.namespace = 'mig' DETACH DELETE c")  # chunks came later
        # the store as an earlier release wrote it: plain sentences, the model's name alone
        embedder = service.pipeline.embedder
        for span in split_facts(TURN):
            (old,) = embedder.embed([span.plain])
            query(driver, "MATCH (f:Fact {start: $start}) WHERE f.namespace = 'mig' SET f.embedding = $v",
                  start=span.start, v=old)
        record_embedder(first.store, embedder_name(EmbedderChoice.hashing), embedder.dimensions)
    with pytest.raises(ConfigurationError) as refused:
        Runtime.open(settings)
    assert "graphmem reembed" in refused.value.message
    with Runtime.open(settings, check_model=False) as switching:
        assert reembed(switching.store, switching.service.pipeline.embedder) >= 4
    with Runtime.open(settings) as after, graph_driver(after) as driver:
        rows = query(driver, "MATCH (f:Fact) WHERE f.namespace = 'mig' RETURN f.start AS start, "
                             "f.embedding AS v, f.text AS text")
        assert {r["start"] for r in rows if r["v"] is not None} == set(fresh)  # the redacted facts stay empty
        for row in rows:
            if row["v"] is not None:
                assert sum(a * b for a, b in zip(row["v"], fresh[row["start"]], strict=True)) > 0.9999
        recorded = after.store.read(lambda tx: tx.single("embedder_get"))
        assert recorded is not None and recorded["name"] == embedding_identity(embedder_name(EmbedderChoice.hashing))
        assert after.service.get_version(ctx, kept.id).content == TURN
        rebuilt = query(driver, "MATCH (d:Document)-[:CONTAINS]->(c:Chunk) WHERE c.namespace = 'mig' "
                                "RETURN d.id AS doc, c.text AS text, c.embedding AS v, c.is_latest AS latest, "
                                "c.is_forgotten AS forgotten, c.recorded_at AS at")
        assert [(c["doc"], c["text"], c["latest"], c["forgotten"], c["at"]) for c in rebuilt] == [
            (kept.id, TURN, True, False, kept.recorded_at)]  # none for the redacted memory
        assert sum(a * b for a, b in zip(rebuilt[0]["v"], chunk_vector, strict=True)) > 0.9999
        found = after.service.search_memories(ctx, SearchRequest(query="Leeds half marathon knee", limit=1))
        assert [h.document_id for h in found] == [kept.id]


def test_a_chunk_shares_a_fact_vector_only_with_a_fact_of_exactly_its_span() -> None:
    """Facts stored by an older splitter ("Yes." as a fact, a list item cut after its inline code) do not
    match today's spans: such a chunk is embedded on its own, never given another span's vector or none."""
    embedder = get_embedder(EmbedderChoice.hashing)
    content = "Yes. Alice moved to Paris in May."
    (chunk,) = chunk_spans(content, split_memory(content))
    assert chunk.is_one_fact  # today "Yes." joins the sentence: one fact, [0, 33)
    stale = {("d", 0, 4): [1.0] * 384}  # the old fact "Yes."
    (row,) = _chunk_rows(embedder, {"d": [chunk]}, stale)
    assert row["embedding"] == embedder.embed([chunk.embedding_text])[0]
    exact = {("d", 0, len(content)): [0.5] * 384}
    assert _chunk_rows(embedder, {"d": [chunk]}, exact)[0]["embedding"] == [0.5] * 384
