"""Memory-level signals: chunks are cut along paragraphs and the size limit, carry exact spans, and their two
signals (vector, full text) obey the time views, forgetting, redaction, the filters and the namespaces inside
the statements, on the real engine (hashing embedder, real spaCy); document search ranks memories by them."""

from __future__ import annotations

import pytest
from factories import add

from graphmem.ingest.chunks import CHUNK_CHARS, chunk_spans
from graphmem.ingest.split import split_facts, split_memory
from graphmem.model import (
    CURRENT,
    NO_FILTERS,
    CallerContext,
    DocumentInput,
    EntitySearchRequest,
    ForgetMode,
    ForgetRequest,
    FusionWeights,
    SearchFilters,
    SearchRequest,
    UpdateInput,
    View,
)
from graphmem.results import Signal
from graphmem.runtime import Runtime
from graphmem.search.documents import _evidence
from graphmem.search.retrieve import CHUNKS, fulltext_ranked, vector_ranked
from graphmem.service import MemoryService
from graphmem.store.driver import Tx
from graphmem.store.views import filter_params, view_params
from helpers import graph_driver, query

TURN = ("Kofi (8:15 pm on 2 March 2025): Ilse! Long time no speak. I finally signed up for the Leeds half "
        "marathon. My knee is holding up so far.")


def paragraph(topic: str, sentences: int) -> str:
    return " ".join(f"The {topic} note number {i} says something plain about {topic} today." for i in range(sentences))


def test_a_short_memory_is_one_chunk_from_its_first_fact_to_its_last() -> None:
    (chunk,) = chunk_spans(TURN, split_facts(TURN))
    assert (chunk.start, chunk.end, chunk.text, chunk.facts) == (0, len(TURN), TURN, 4)
    assert chunk.embedding_text.startswith("Kofi (8:15 pm on 2 March 2025): Ilse!")
    assert chunk_spans("", split_facts("")) == []


def test_long_memories_are_cut_at_paragraphs_within_the_size_limit() -> None:
    content = "\n\n".join(paragraph(topic, n) for topic, n in
                          [("alpha", 5), ("beta", 4), ("gamma", 12), ("delta", 2), ("epsilon", 30)])
    chunks = chunk_spans(content, split_facts(content))
    assert len(chunks) >= 4
    for chunk in chunks:
        assert content[chunk.start:chunk.end] == chunk.text and len(chunk.text) <= CHUNK_CHARS
    assert [c.start for c in chunks] == sorted(c.start for c in chunks)
    # every fact is in exactly one chunk, and chunks tile the facts in order
    assert sum(c.facts for c in chunks) == len(split_facts(content))
    # a chunk half full ends at the next paragraph break (alpha and beta: over half), one that is not goes on
    assert chunks[0].text.startswith("The alpha note") and chunks[0].text.endswith("beta today.")
    assert chunks[1].text.startswith("The gamma note number 0")
    # a sentence longer than the limit is a chunk by itself
    huge = "A " + "very " * 400 + "long sentence. A short one."
    cut = chunk_spans(huge, split_facts(huge))
    assert [c.facts for c in cut] == [1, 1] and cut[1].text == "A short one."


def test_a_later_chunk_reads_its_turn_header() -> None:
    content = "Ilse (9:00 am on 3 March 2025): " + "\n\n".join(paragraph(t, 8) for t in ("rowing", "cycling"))
    chunks = chunk_spans(content, split_facts(content))
    assert len(chunks) == 2
    assert chunks[1].embedding_text.startswith("Ilse (9:00 am on 3 March 2025): The cycling note")
    assert chunks[0].embedding_text.startswith("Ilse (9:00 am on 3 March 2025): The rowing note")


@pytest.mark.parametrize("signal", ["vector", "fulltext"])
def test_chunk_signals_obey_views_forgetting_redaction_filters_and_namespaces(
        runtime: Runtime, service: MemoryService, ctx: CallerContext, ns: str, signal: str) -> None:
    other_ns = f"{ns}-other"
    other = CallerContext.for_namespaces(other_ns)
    v1 = add(service, ctx, ns, "Ilse: the winter freeze starts on the fifteenth.", path="plans/winter").id
    v2 = service.update_memory(ctx, v1, UpdateInput(content="Ilse: the winter freeze starts on the tenth.")).document.id
    kept = add(service, ctx, ns, "Kofi: the winter freeze worries Ilse.", source="chat").id
    soft = add(service, ctx, ns, "Sam: the winter freeze is early this year.").id
    redacted = add(service, ctx, ns, "Sam: the winter freeze secret plan.").id
    add(service, other, other_ns, "Ilse: the winter freeze starts on the second.")
    service.forget(ctx, soft, ForgetRequest(mode=ForgetMode.soft))
    service.forget(ctx, redacted, ForgetRequest(mode=ForgetMode.redact))
    (vector,) = service.pipeline.embedder.embed(["winter freeze"])
    dialect = runtime.store.dialect

    def found(view: View = CURRENT, filters: SearchFilters = NO_FILTERS,
              namespaces: list[str] | None = None) -> set[str]:
        params = {"namespaces": namespaces or [ns], "vector": vector, **view_params(view),
                  **filter_params(filters)}

        def read(tx: Tx) -> set[str]:
            if signal == "vector":
                return {c.id for c in vector_ranked(tx, dialect, CHUNKS, params, 20)}
            return {c.id for c in fulltext_ranked(tx, dialect, CHUNKS, params, "winter freeze", 20)}
        return runtime.store.read(read)

    assert found() == {v2, kept}
    assert found(View(include_superseded=True)) == {v1, v2, kept}
    assert found(View(include_forgotten=True)) == {v2, kept, soft}  # the redacted one keeps no text nor vector
    v1_at = service.get_version(ctx, v1).recorded_at
    assert found(View(as_of=v1_at)) == {v1}
    assert found(filters=SearchFilters(path="plans%")) == {v2}
    assert found(filters=SearchFilters(source="chat")) == {kept}
    assert found(filters=SearchFilters(document_id=kept)) == {kept}
    kofi = next(e for e in service.search_entities(ctx, EntitySearchRequest(query="Kofi")).items if e.name == "Kofi")
    assert found(filters=SearchFilters(entity_id=kofi.id)) == {kept}
    assert found(namespaces=[other_ns]) != found() and not found(namespaces=[other_ns]) & found()
    hard = add(service, ctx, ns, "Sam: the winter freeze plan to delete.").id
    assert hard in found()
    service.forget(ctx, hard, ForgetRequest(mode=ForgetMode.hard))
    with graph_driver(runtime) as driver:
        left = query(driver, "MATCH (c:Chunk) WHERE c.document_id = $id RETURN count(c) AS n", id=hard)
    assert left == [{"n": 0}] and hard not in found(View(include_forgotten=True))


def test_document_search_ranks_a_memory_by_its_own_signals(service: MemoryService, ctx: CallerContext,
                                                           ns: str) -> None:
    marathon = add(service, ctx, ns, TURN).id
    add(service, ctx, ns, "Sam (9:00 am on 3 March 2025): My knee hurts after football.")
    add(service, ctx, ns, "Kofi (9:05 am on 3 March 2025): I like tea in the morning.")
    hits = service.search_memories(ctx, SearchRequest(query="Kofi knee marathon", limit=3, explain=True))
    assert hits[0].document_id == marathon
    signals = {s.signal for s in hits[0].signals or []}
    assert {Signal.memory_vector, Signal.memory_fulltext, Signal.facts} <= signals
    assert hits[0].facts and all(f.citation.document_id == marathon for f in hits[0].facts)
    assert service.search_memories(ctx, SearchRequest(query="Kofi knee marathon", limit=3))[0].signals is None
    # fact search: asked for, the memory prior lifts the memory's best fact; by default it is off
    facts = service.search(ctx, SearchRequest(query="Kofi knee marathon", limit=5, explain=True,
                                              weights=FusionWeights(memory=1.0)))
    assert facts[0].citation.document_id == marathon
    assert facts[0].explain is not None and Signal.memory in {s.signal for s in facts[0].explain.signals}
    off = service.search(ctx, SearchRequest(query="Kofi knee marathon", limit=5, explain=True))
    assert all(Signal.memory not in {s.signal for s in f.explain.signals} for f in off if f.explain)


def test_a_memory_found_by_its_own_signals_alone_carries_its_best_facts(
        runtime: Runtime, service: MemoryService, ctx: CallerContext, ns: str) -> None:
    marathon = add(service, ctx, ns, TURN).id
    add(service, ctx, ns, "Sam (9:00 am on 3 March 2025): The river path is closed.")
    (vector,) = service.pipeline.embedder.embed(["Leeds half marathon knee"])
    params = {"namespaces": [ns], "vector": vector, **view_params(CURRENT), **filter_params(NO_FILTERS)}
    dialect = runtime.store.dialect
    # fact search did not reach the memory: its evidence is its facts most similar to the query
    evidence = runtime.store.read(lambda tx: _evidence(tx, dialect, [ns], vector, params, [marathon], {}))
    facts = evidence[marathon]
    assert 1 <= len(facts) <= 3 and all(f.citation.document_id == marathon and f.score == 0 for f in facts)
    assert all(TURN[f.citation.start:f.citation.end] == f.text for f in facts)
    assert facts == sorted(facts, key=lambda f: -f.similarity)


def test_stored_neighbours_bring_in_the_answer_to_a_question(runtime: Runtime, service: MemoryService,
                                                             ctx: CallerContext, ns: str) -> None:
    other = CallerContext.for_namespaces(f"{ns}-b")
    first = add(service, ctx, ns, "Ilse (8:40 pm on 17 August 2025): Welcome back from Copenhagen!").id
    batch = [c.document for c in service.add_memories(ctx, ns, [DocumentInput(content=c) for c in (
        "Ilse (8:40 pm on 17 August 2025): Every bakery?? How many bakeries was that?",
        "Kofi (8:40 pm on 17 August 2025): Eleven.",
        "Kofi (8:40 pm on 17 August 2025): It rained four days out of five.")])]
    add(service, other, f"{ns}-b", "Sam: the other namespace stores its own turns.")
    question, answer, rain = (d.id for d in batch)
    with graph_driver(runtime) as driver:
        links = query(driver, "MATCH (d:Document)-[:FOLLOWS]->(p:Document) WHERE d.namespace = $ns "
                              "RETURN d.id AS d, p.id AS p", ns=ns)
    assert {(r["d"], r["p"]) for r in links} == {(question, first), (answer, question), (rain, answer)}
    hits = service.search_memories(ctx, SearchRequest(query="How many bakeries?", limit=4, explain=True,
                                                       namespaces=[ns]))
    ranked = [h.document_id for h in hits]
    assert ranked[0] == question and answer in ranked
    found = next(h for h in hits if h.document_id == answer)
    assert Signal.memory_context in {s.signal for s in found.signals or []}
    # a forgotten neighbour stays out, and the link leads nowhere outside the view
    service.forget(ctx, answer, ForgetRequest(mode=ForgetMode.soft))
    assert answer not in [h.document_id for h in service.search_memories(
        ctx, SearchRequest(query="How many bakeries?", limit=4, namespaces=[ns]))]
    # notes are not turns: stored order links them, but a note's neighbours are not brought in
    notes = f"{ns}-notes"
    note_ctx = CallerContext.for_namespaces(notes)
    service.add_memories(note_ctx, notes, [DocumentInput(content=c) for c in (
        "How many bakeries are there in Leeds?", "Eleven.", "The river path is closed.")])
    hits = service.search_memories(note_ctx, SearchRequest(query="How many bakeries?", limit=3, explain=True,
                                                            namespaces=[notes]))
    assert hits and all(Signal.memory_context not in {s.signal for s in h.signals or []} for h in hits)



def test_code_is_no_fact_but_its_chunk_finds_it() -> None:
    content = "Install it with pip.\n\n```\npip install tollgate\n```"
    chunks = chunk_spans(content, split_memory(content))
    assert [s.text for s in split_facts(content)] == ["Install it with pip."]
    (chunk,) = chunks
    assert "pip install tollgate" in chunk.text and chunk.facts == 1 and not chunk.is_one_fact
    (code,) = chunk_spans("```\nx = 1\n```", split_memory("```\nx = 1\n```"))
    assert code.facts == 0 and not code.is_one_fact  # embedded on its own: no fact's vector to share
