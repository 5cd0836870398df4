"""The ingestion pipeline, top to bottom: split → extract → embed → (resolve → write, in the transaction).

``prepare`` is the CPU part, run outside any transaction: it splits documents into sentence facts,
parses them with spaCy in bounded batches, and embeds facts and entity names, overlapping the two
(torch releases the GIL while it computes, so the next batch is parsed while this one is embedded).
``ingest.write`` then resolves entities against the graph and writes everything in one transaction.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Iterator, Sequence
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass, field

from graphmem.config import Settings
from graphmem.ingest.extract import USER, Mention, SentenceExtraction, Triple, extract
from graphmem.ingest.resolve import USER_KEY, display, normalize_name
from graphmem.ingest.split import Span, split_sentences
from graphmem.nlp.embedder import Embedder, get_embedder
from graphmem.nlp.language import get_language, parse


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


class Pipeline:
    """Loaded once per process; models load on first use, not at start-up."""

    def __init__(self, settings: Settings) -> None:
        self.settings = settings
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
        started = time.perf_counter()
        spans = [split_sentences(content) for content in contents]
        split_s = time.perf_counter() - started
        flat = [(doc, span) for doc, doc_spans in enumerate(spans) for span in doc_spans]
        extractions: list[SentenceExtraction] = []
        embeddings: list[Future[tuple[list[list[float]], float]]] = []
        extract_s = 0.0
        for batch in _batches(flat, self.settings.ingest_batch_sentences):
            # the embedding thread works on this batch while spaCy parses it here
            embeddings.append(self._embed_pool.submit(self._timed_embed, [span.text for _, span in batch]))
            t0 = time.perf_counter()
            extractions.extend(self._extract(batch))
            extract_s += time.perf_counter() - t0
        vectors: list[list[float]] = []
        embed_s = 0.0
        for future in embeddings:
            done, seconds = future.result()
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
        return documents

    def _timed_embed(self, texts: list[str]) -> tuple[list[list[float]], float]:
        t0 = time.perf_counter()
        return self.embedder.embed(texts), time.perf_counter() - t0

    def _extract(self, batch: list[tuple[int, Span]]) -> list[SentenceExtraction]:
        parsed = parse([span.text for _, span in batch], self.settings.entity_patterns_file)
        return [extract(doc, span.start) for doc, (_, span) in zip(parsed, batch, strict=True)]

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
        vectors = dict(zip(unique, self.embedder.embed(list(unique.values())), strict=True))
        for document, names in zip(documents, per_document, strict=True):
            document.entity_embeddings = {key: vectors[key] for key in names}


def _batches(items: list[tuple[int, Span]], size: int) -> Iterator[list[tuple[int, Span]]]:
    for start in range(0, len(items), size):
        yield items[start:start + size]
