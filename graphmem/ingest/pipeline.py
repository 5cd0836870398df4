"""The ingestion pipeline, top to bottom: split → extract → embed → (resolve → write, in the transaction).

``prepare`` is the CPU part, run outside any transaction: it splits documents into sentence facts,
parses them with spaCy in bounded batches, and embeds facts and entity names, overlapping the two
(torch releases the GIL while it computes, so the next batch is parsed while this one is embedded).
``ingest.write`` then resolves entities against the graph and writes everything in one transaction.
"""

from __future__ import annotations

import threading
from collections.abc import Iterator, Sequence
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass, field

from graphmem.config import Settings
from graphmem.ingest.extract import EXTRACTOR, USER, Mention, SentenceExtraction, Triple, extract
from graphmem.ingest.resolve import display, normalize_name
from graphmem.ingest.split import Span, split_sentences
from graphmem.nlp.embedder import Embedder, get_embedder
from graphmem.nlp.language import LANGUAGE_LOCK, get_language


@dataclass
class PreparedFact:
    text: str
    start: int
    end: int
    embedding: list[float]
    attributes: list[str]
    mentions: list[Mention]
    triples: list[Triple]


@dataclass
class PreparedDocument:
    content: str
    facts: list[PreparedFact]
    entity_embeddings: dict[str, list[float]] = field(default_factory=dict)  # normalised name → vector


@dataclass
class StageTimes:
    """Seconds spent in each stage (summed over calls), for the benchmark."""

    split: float = 0.0
    extract: float = 0.0
    embed: float = 0.0
    sentences: int = 0


class Pipeline:
    """Loaded once per process; models load on first use, not at start-up."""

    def __init__(self, settings: Settings) -> None:
        self.settings = settings
        self.extractor = EXTRACTOR
        self._embed_pool = ThreadPoolExecutor(max_workers=1, thread_name_prefix="graphmem-embed")
        self.times = StageTimes()
        self._times_lock = threading.Lock()

    @property
    def embedder(self) -> Embedder:
        return get_embedder(self.settings.embedder, self.settings.embed_threads,
                            self.settings.data_dir.resolve() / "models")

    def warm_up(self) -> None:
        get_language(self.settings.entity_patterns_file)
        self.embedder.embed(["warm up"])

    def prepare(self, contents: Sequence[str]) -> list[PreparedDocument]:
        import time

        started = time.perf_counter()
        spans = [split_sentences(content) for content in contents]
        split_s = time.perf_counter() - started
        flat = [(doc, span) for doc, doc_spans in enumerate(spans) for span in doc_spans]
        extractions: list[SentenceExtraction] = []
        vectors: list[list[float]] = []
        extract_s = embed_s = 0.0
        pending: Future[tuple[list[list[float]], float]] | None = None
        for batch in _batches(flat, self.settings.ingest_batch_sentences):
            texts = [span.text for _, span in batch]
            next_embedding = self._embed_pool.submit(self._timed_embed, texts)
            t0 = time.perf_counter()
            extractions.extend(self._extract(batch))
            extract_s += time.perf_counter() - t0
            if pending is not None:
                done, seconds = pending.result()
                vectors.extend(done)
                embed_s += seconds
            pending = next_embedding
        if pending is not None:
            done, seconds = pending.result()
            vectors.extend(done)
            embed_s += seconds

        documents = [PreparedDocument(content, []) for content in contents]
        for (doc, span), found, vector in zip(flat, extractions, vectors, strict=True):
            documents[doc].facts.append(PreparedFact(span.text, span.start, span.end, vector,
                                                     found.attributes, found.mentions, found.triples))
        t0 = time.perf_counter()
        self._embed_entities(documents)
        embed_s += time.perf_counter() - t0
        with self._times_lock:
            self.times.split += split_s
            self.times.extract += extract_s
            self.times.embed += embed_s
            self.times.sentences += len(flat)
        return documents

    def _timed_embed(self, texts: list[str]) -> tuple[list[list[float]], float]:
        import time

        t0 = time.perf_counter()
        return self.embedder.embed(texts), time.perf_counter() - t0

    def _extract(self, batch: list[tuple[int, Span]]) -> list[SentenceExtraction]:
        nlp = get_language(self.settings.entity_patterns_file)
        with LANGUAGE_LOCK:
            parsed = list(nlp.pipe([span.text for _, span in batch], batch_size=64))
        return [extract(doc, span.start) for doc, (_, span) in zip(parsed, batch, strict=True)]

    def _embed_entities(self, documents: list[PreparedDocument]) -> None:
        """An entity's embedding is the embedding of its name (the user entity: the configured name)."""
        names: dict[str, str] = {}
        for document in documents:
            for fact in document.facts:
                for mention in fact.mentions:
                    if mention.entity.type == USER:
                        continue
                    name, _ = display(mention.entity, self.settings.user_entity_name)
                    names.setdefault(normalize_name(name), name)
        names.setdefault("@user", self.settings.user_entity_name)
        keys = list(names)
        vectors = dict(zip(keys, self.embedder.embed([names[k] for k in keys]), strict=True))
        for document in documents:
            document.entity_embeddings = vectors


def _batches(items: list[tuple[int, Span]], size: int) -> Iterator[list[tuple[int, Span]]]:
    for start in range(0, len(items), size):
        yield items[start:start + size]
