"""The ingestion pipeline, top to bottom: split → extract → embed → (resolve → write, in the transaction).

``prepare`` is the CPU part, run outside any transaction: it splits documents into sentence facts,
parses them with spaCy in bounded batches, and embeds facts, chunks and entity names, overlapping the two
(onnxruntime and torch release the GIL while they compute, so the next batch is parsed while this one is
embedded, and a memory's chunks are embedded while its facts are parsed).
``ingest.write`` then resolves entities against the graph and writes everything in one transaction.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Iterator, Sequence
from concurrent.futures import Future, ThreadPoolExecutor
from contextlib import contextmanager
from dataclasses import dataclass, field
from functools import partial

from graphmem.config import Settings
from graphmem.ingest.chunks import Chunk, chunk_spans
from graphmem.ingest.extract import Mention, SentenceExtraction, Triple, extract
from graphmem.ingest.names import USER, ExtractedEntity, TextNames, names_in_text
from graphmem.ingest.references import as_spoken_by, resolve_pronouns
from graphmem.ingest.resolve import USER_KEY, display, normalize_name
from graphmem.ingest.split import EXTRACTED, FACTS, WITH_TRIPLES, FactKind, Span, split_memory
from graphmem.nlp.embedder import Embedder, NameVectors, embed_distinct, get_embedder
from graphmem.nlp.language import get_language, parse

Progress = Callable[[int], object]  # told how many more facts are done


@dataclass
class PreparedFact:
    text: str
    start: int
    end: int
    kind: FactKind
    section: str | None
    embedding: list[float]
    attributes: list[str]
    mentions: list[Mention]
    triples: list[Triple]
    # an agent's statement (``service/assertions.py``): "entity", "observation" or "relation"; its mentions and
    # triples are stated, not extracted, and a type it states wins over the vote
    assertion: str | None = None


@dataclass
class PreparedChunk:
    start: int
    end: int
    text: str
    embedding: list[float]


@dataclass
class PreparedDocument:
    content: str
    facts: list[PreparedFact]
    chunks: list[PreparedChunk] = field(default_factory=list)
    speaker: str | None = None  # a chat turn's speaker, when the memory starts with a turn header
    entity_embeddings: dict[str, list[float]] = field(default_factory=dict)  # normalised name → vector


@dataclass(frozen=True)
class Statement:
    """A fact an agent stated (``service/assertions.py``): its text, what kind of statement it is, the entities
    it is about (with the type the agent stated, "" for none) and, for a relation, its triple."""

    text: str
    assertion: str
    entities: tuple[ExtractedEntity, ...]
    triple: Triple | None = None


@dataclass
class StageTimes:
    """Seconds spent in each stage (summed over calls), for the benchmarks: the NLP stages here, and the
    writes (``ingest/write.py``): ``write`` is a batch's whole write, ``similar`` the part of it that waits
    for the SIMILAR_TO candidates read beside it (after everything but the SIMILAR_TO links is written)."""

    split: float = 0.0
    extract: float = 0.0
    embed: float = 0.0
    similar: float = 0.0
    write: float = 0.0

    @contextmanager
    def timing(self, stage: str) -> Iterator[None]:
        started = time.perf_counter()
        try:
            yield
        finally:
            setattr(self, stage, getattr(self, stage) + time.perf_counter() - started)


class Pipeline:
    """Loaded once per process; models load on first use, not at start-up."""

    def __init__(self, settings: Settings) -> None:
        self.settings = settings
        self._embed_pool = ThreadPoolExecutor(max_workers=1, thread_name_prefix="graphmem-embed")
        self.times = StageTimes()
        self._times_lock = threading.Lock()
        self._name_vectors = NameVectors()

    @property
    def embedder(self) -> Embedder:
        """The embedder, waiting for its first load at most ``GRAPHMEM_MODEL_WAIT_S`` (then ``ModelsLoading``)."""
        return self.embedder_within(self.settings.model_wait_s)

    def embedder_within(self, wait_s: float | None) -> Embedder:
        """The embedder, waiting for its first load at most ``wait_s`` (None: as long as it takes)."""
        return get_embedder(self.settings.embedder, self.settings.embed_threads,
                            self.settings.data_dir.resolve() / "models", wait_s)

    def warm_up(self) -> None:
        """Load both models, however long that takes."""
        get_language(self.settings.entity_patterns_file)
        self.embedder_within(None).embed(["warm up"])

    def prepare(self, contents: Sequence[str], progress: Progress | None = None) -> list[PreparedDocument]:
        """The facts of each content, parsed and embedded; ``progress`` hears how many facts each NLP batch
        finished (when both its parse and its embeddings are done)."""
        started = time.perf_counter()
        every = [split_memory(content) for content in contents]
        spans = [[span for span in doc_spans if span.kind in FACTS] for doc_spans in every]
        split_s = time.perf_counter() - started
        flat = [(doc, span) for doc, doc_spans in enumerate(spans) for span in doc_spans]
        known = [names_in_text(span.plain for span in doc_spans if span.kind in WITH_TRIPLES) for doc_spans in spans]
        extractions: list[SentenceExtraction] = []
        embeddings: list[Future[tuple[list[list[float]], float]]] = []
        extract_s = 0.0
        # chunks need only the split, so the embedding thread starts on them while spaCy parses: a chunk
        # is several facts long, and embedding them after the parse left one core idle (measured: chunks
        # took as long to embed as all the facts of a sixty-word memory)
        chunked = [(doc, chunk) for doc, (content, doc_spans) in enumerate(zip(contents, every, strict=True))
                   for chunk in chunk_spans(content, doc_spans)]
        chunk_vectors = self._embed_pool.submit(
            self._timed_embed, [chunk.embedding_text for _, chunk in chunked if not chunk.is_one_fact])
        for batch in _batches(flat, self.settings.ingest_batch_sentences):
            # the embedding thread works on this batch while spaCy parses it here
            embedded = self._embed_pool.submit(self._timed_embed, [span.embedding_text for _, span in batch])
            embeddings.append(embedded)
            t0 = time.perf_counter()
            extractions.extend(self._extract(batch, known))
            extract_s += time.perf_counter() - t0
            if progress is not None:  # reported from whichever thread finishes the batch last
                embedded.add_done_callback(partial(_report, progress, len(batch)))
        vectors: list[list[float]] = []
        embed_s = 0.0
        for future in embeddings:
            done, seconds = future.result()
            vectors.extend(done)
            embed_s += seconds

        documents = [PreparedDocument(content, [], speaker=doc_spans[0].speaker
                                      if doc_spans and doc_spans[0].header_end is not None else None)
                     for content, doc_spans in zip(contents, every, strict=True)]
        per_document: list[list[SentenceExtraction]] = [[] for _ in contents]
        for (doc, _), found in zip(flat, extractions, strict=True):
            per_document[doc].append(found)
        for sentences in per_document:
            resolve_pronouns(sentences)
        for (doc, span), found, vector in zip(flat, extractions, vectors, strict=True):
            documents[doc].facts.append(PreparedFact(span.text, span.start, span.end, span.kind, span.section,
                                                     vector, found.attributes, found.mentions, found.triples))
        longer, seconds = chunk_vectors.result()
        embed_s += seconds
        self._attach_chunks(documents, chunked, longer)
        t0 = time.perf_counter()
        self._embed_entities(documents)
        embed_s += time.perf_counter() - t0
        with self._times_lock:
            self.times.split += split_s
            self.times.extract += extract_s
            self.times.embed += embed_s
        return documents

    def prepare_stated(self, statements: Sequence[Statement]) -> PreparedDocument:
        """An agent's statements as one memory: a fact each (one line of the content), its mentions and triple
        as stated (no parse), and a chunk each that is the fact, so that forgetting one statement takes it out
        of memory-level search too."""
        vectors = self.embedder.embed([statement.text for statement in statements])
        document = PreparedDocument("\n".join(statement.text for statement in statements), [])
        start = 0
        for statement, vector in zip(statements, vectors, strict=True):
            end = start + len(statement.text)
            mentions = [Mention(entity, *_named_span(statement.text, entity.name, start))
                        for entity in statement.entities]
            document.facts.append(PreparedFact(statement.text, start, end, FactKind.sentence, None, vector, [],
                                               mentions, [statement.triple] if statement.triple else [],
                                               statement.assertion))
            document.chunks.append(PreparedChunk(start, end, statement.text, vector))
            start = end + 1
        self._embed_entities([document])
        return document

    def _timed_embed(self, texts: list[str]) -> tuple[list[list[float]], float]:
        if not texts:
            return [], 0.0
        t0 = time.perf_counter()
        return embed_distinct(self.embedder, texts), time.perf_counter() - t0

    def _extract(self, batch: list[tuple[int, Span]], known: list[TextNames]) -> list[SentenceExtraction]:
        """Entities (and, from prose and list items, triples) of the spans that are read at all; code, tables,
        HTML and front matter give nothing. spaCy reads the masked text, white space folded; its offsets are
        mapped back to the content. ``known`` holds, per document, the words it writes as names."""
        readable = [span.folded() for _, span in batch if span.kind in EXTRACTED]
        parsed = iter(zip(parse([text for text, _ in readable], self.settings.entity_patterns_file,
                                self.settings.model_wait_s),
                          (positions for _, positions in readable), strict=True))
        found: list[SentenceExtraction] = []
        for document, span in batch:
            if span.kind not in EXTRACTED:
                found.append(SentenceExtraction())
                continue
            doc, positions = next(parsed)
            doc._.names_in_text = known[document]
            extraction = extract(doc, positions)
            if span.kind not in WITH_TRIPLES:
                extraction.triples = []
            elif span.section is not None:  # a document with headings: "I" is its author, not the user
                extraction.triples = [t for t in extraction.triples if USER not in (t.subject.type, t.object.type)]
            if span.speaker is not None:
                extraction = as_spoken_by(extraction, span.speaker,
                                          span.start if span.header_end is not None else None)
            found.append(extraction)
        return found

    @staticmethod
    def _attach_chunks(documents: list[PreparedDocument], chunked: list[tuple[int, Chunk]],
                       longer: list[list[float]]) -> None:
        """Each document's chunks (``ingest/chunks.py``) with their vectors (``longer``: those of the chunks
        of more than one fact, in order); a chunk of one fact reads what that fact read, so it takes the
        fact's vector (most chat turns: no second embedding)."""
        vectors = iter(longer)
        for doc, chunk in chunked:
            document = documents[doc]
            if chunk.is_one_fact:
                vector = next(f.embedding for f in document.facts if f.start == chunk.start)
            else:
                vector = next(vectors)
            document.chunks.append(PreparedChunk(chunk.start, chunk.end, chunk.text, vector))

    def _embed_entities(self, documents: list[PreparedDocument]) -> None:
        """Each document gets the embeddings of the entities it mentions, keyed by normalised name (the
        user entity: ``@user``, embedded by its configured name). Each distinct name is embedded once."""
        per_document: list[dict[str, str]] = []
        for document in documents:
            names: dict[str, str] = {}
            for fact in document.facts:
                for mention in fact.mentions:
                    name, _ = display(mention.entity, self.settings.user_entity_name)
                    key = USER_KEY if mention.entity.type == USER else normalize_name(name)
                    names.setdefault(key, name)
            per_document.append(names)
        unique = {key: name for names in per_document for key, name in names.items()}
        vectors = self._name_vectors.embed(self.embedder, unique)
        for document, names in zip(documents, per_document, strict=True):
            document.entity_embeddings = {key: vectors[key] for key in names}


def _named_span(text: str, name: str, offset: int) -> tuple[int, int]:
    """Where a statement names its entity (an observation need not: then the whole statement)."""
    at = text.find(name)
    return (offset + at, offset + at + len(name)) if at >= 0 else (offset, offset + len(text))


def _report(progress: Progress, done: int, _: object) -> None:
    progress(done)


def _batches(items: list[tuple[int, Span]], size: int) -> Iterator[list[tuple[int, Span]]]:
    for start in range(0, len(items), size):
        yield items[start:start + size]
