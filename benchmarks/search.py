"""Search speed at scale: 10k, then 100k synthetic facts in one namespace of the bundled engine.

What is measured at each size (``--sizes``, loaded one after the other into the same namespace):

* load: facts/s through the real write path (``ingest.write.write_documents`` in ``store.write``
  transactions of ~``--batch-facts`` facts, then ``sync_type_labels``, as the service does), with the
  seconds per Cypher statement, the commits and the rest (Python and the driver); the benchmark's own
  generation of the synthetic documents is timed apart;
* ``service.search(ctx, query)`` p50/p95 (hybrid, the query embedded by the real model) over ``--queries``
  queries after ``--warmup`` warm-up queries, and the first (cold) search after the load; then the same
  queries with ``limit=100`` and through ``search_documents`` (what the HTTP search serves), and the ratio
  of ``limit=100`` to ``limit=10``. ``--budget``
  bounds the seconds the timed loops of one size may take: when calls are slow a loop stops early (never
  before 20 searches, or 5 calls in the other loops) and says so;
* query embedding alone p50/p95 (``pipeline.embedder.embed([query])``);
* where each search spends its time, per statement (a second pass of up to 50 queries), and whether the vector
  index answers (index top 30 vs the exact scan, recall@30 and the time of each);
* ``service.recall`` (8 items, 1,500 tokens) and ``service.export`` (max_nodes 1,000, depth 3; seeded by a
  query or a hub entity; with the reachable documents counted, the default, and with ``count_reachable``
  false) p50/p95 over ``--calls`` calls, with the nodes an export returns; one hub export repeated (the same
  work each call): its p95 / p50, and each call over the one before it, the spread under any p95 and ratio; and
  what its slow calls spent that the others did not (the app's and the engine's CPU, Python's collector, stolen
  CPU);
* resident memory of the app process and of the engine: idle with the models loaded, after each load, after
  the searches; and the seconds from the end of a load until the engine's background index builds are done
  (``runtime.settling``: what ``/ready`` waits for), before the first search is measured;
* later pages of one export against its first (pages of 200 nodes, up to 6, not counted);
* after the last size, the server and its engine are stopped and started again on the same data: the time
  until ``/ready``, resident memory, the first search pass and the exports again;
* a second namespace of 10 real facts (spaCy + the model, ``service.add_documents``): do its searches
  still find their facts among the big namespace's?

Then the growth of every metric from the first size to the last (ratio).

The bulk data is synthetic (spaCy would take hours for 100k facts). Topics: ``--topics`` topics of four
pseudo-words each; a topic's centroid is the real model's embedding of its four words. A fact's vector is
its topic's centroid plus gaussian noise (``--noise`` per dimension), normalised: 384-dimensional unit
vectors, cosine ~0.7 to their centroid, ~0.5 to each other within a topic. A fact's text is two of its
topic's words, 6-12 words of a 5,000-word pseudo vocabulary and the names of the entities it mentions (0-3,
drawn with weight 1/(rank + 10) from sizes/5 entities: a few hubs in thousands of facts, a long tail in one
or two). Facts with two entities relate them by a triple half of the time. Documents hold 5-20 facts, most
on one topic, and chunks as ingestion cuts them (``synthetic_chunks``).
Queries are two words of one topic, one in four with an entity's name too (drawn with the
same skew). The database records the configured model as its embedder; the synthetic vectors have its 384
dimensions.

    .venv/bin/python benchmarks/search.py [--sizes 10000,100000] [--embedder onnx|minilm] [--heap 4g]
        [--engine-gc auto|parallel|g1]
"""

from __future__ import annotations

import argparse
import bisect
import gc
import itertools
import os
import random
import re
import statistics
import tempfile
import threading
import time
from collections import Counter, defaultdict
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from functools import partial
from pathlib import Path
from typing import Any, TypeVar

import disk
import neo4j
import numpy as np
import psutil
from numpy.typing import NDArray

from graphmem.config import EmbedderChoice, EngineCollector, Settings
from graphmem.ingest.chunks import CHUNK_CHARS
from graphmem.ingest.extract import Mention, Triple
from graphmem.ingest.names import ExtractedEntity
from graphmem.ingest.pipeline import PreparedChunk, PreparedDocument, PreparedFact, StageTimes
from graphmem.ingest.resolve import normalize_name
from graphmem.ingest.split import FactKind
from graphmem.ingest.write import SIMILAR_READERS, WriteOptions, sync_type_labels, write_documents
from graphmem.model import (
    CURRENT,
    CallerContext,
    DocumentInput,
    EntitySeed,
    ExportCaps,
    ExportRequest,
    QuerySeed,
    RecallRequest,
    SearchRequest,
)
from graphmem.nlp.embedder import DIMENSIONS
from graphmem.records import content_hash, document_record, now_ms
from graphmem.results import ExportResult, FactHit
from graphmem.runtime import Runtime
from graphmem.store import views
from graphmem.store.dialect import SearchIndex
from graphmem.store.driver import GraphStore, Tx
from graphmem.store.engine import collector_options

BIG = "bench-big"
SMALL = "bench-small"
BESIDE_THE_WRITE = ("entities_similar",)  # statements read in transactions of their own (ingest/write.py)
EXPORT_DEPTH = 3  # at depth 2 the fan-out cap (50 a node) stops most exports near 300 nodes; 3 reaches 1,000
PAGE_NODES, PAGES = 200, 6  # later pages against the first: pages of 200 nodes, up to 6 of one export
SAME_EXPORT_CALLS = 25  # one export repeated: the spread of the run
SLOW_CALL = 1.4  # a call of the repeated export is slow over this many times its p50
TYPES = ["Person", "Organization", "Place", "Technology", "Product"]
PREDICATES = ["work with", "use", "depend on", "be in", "own", "lead", "replace", "report to"]
MENTIONS_PER_FACT = ([0, 1, 2, 3], [0.15, 0.45, 0.30, 0.10])
ANN_K, ANN_TOP = 120, 30  # what vector_candidates asks first for limit 10 (pool 30, over-fetch 4)

Vector = NDArray[np.float64]
Embed = Callable[[list[str]], list[list[float]]]
T = TypeVar("T")


def synthetic_chunks(content: str, facts: list[PreparedFact]) -> list[PreparedChunk]:
    """A synthetic document's chunks as ingestion cuts them (whole facts, at most ``CHUNK_CHARS``), each with
    the normalised mean of its facts' vectors as its vector (what the model would give, roughly)."""
    groups: list[list[PreparedFact]] = []
    for fact in facts:
        if groups and fact.end - groups[-1][0].start <= CHUNK_CHARS:
            groups[-1].append(fact)
        else:
            groups.append([fact])
    return [PreparedChunk(g[0].start, g[-1].end, content[g[0].start:g[-1].end],
                          unit(np.mean([f.embedding for f in g], axis=0)[None, :])[0].tolist()) for g in groups]


def percentile(values: Sequence[float], q: float) -> float:
    return sorted(values)[min(len(values) - 1, int(q * len(values)))]


def ms(values: Sequence[float], q: float) -> float:
    return 1000 * percentile(values, q)


def pseudo_words(rng: random.Random, n: int, taken: set[str]) -> list[str]:
    """Pronounceable nonsense words, distinct from each other and from ``taken`` (which grows)."""
    consonants, vowels = "bdfgklmnprstvz", "aeiou"
    out: list[str] = []
    while len(out) < n:
        word = "".join(rng.choice(consonants) + rng.choice(vowels) for _ in range(rng.randint(2, 3)))
        if rng.random() < 0.5:
            word += rng.choice(consonants)
        if word not in taken:
            taken.add(word)
            out.append(word)
    return out


def unit(rows: Vector) -> Vector:
    normalised: Vector = rows / np.linalg.norm(rows, axis=-1, keepdims=True)
    return normalised


# ---- synthetic corpus ------------------------------------------------------------------------------


@dataclass
class LoadStats:
    facts: int = 0
    documents: int = 0
    mentions: int = 0
    triples: int = 0
    generate_s: float = 0.0
    write_s: float = 0.0
    labels_s: float = 0.0
    batch_write_s: list[float] = field(default_factory=list)
    batch_facts: list[int] = field(default_factory=list)
    statements: dict[str, float] = field(default_factory=lambda: defaultdict(float))
    similar_wait_s: float = 0.0  # what the writes waited for the similarity reads beside them
    commit_s: float = 0.0  # the loading thread's commits, write and label transactions (the engine updates its indexes)


class Corpus:
    """Deterministic synthetic documents, prepared as the pipeline would prepare them."""

    def __init__(self, seed: int, topics: int, entities: int, noise: float, embed: Embed) -> None:
        self.rng = random.Random(seed)
        self.np_rng = np.random.default_rng(seed)
        self.noise = noise
        taken: set[str] = set()
        self.topic_words = [pseudo_words(self.rng, 4, taken) for _ in range(topics)]
        self.centroids: Vector = unit(np.array(embed([" ".join(words) for words in self.topic_words]),
                                               dtype=np.float64))
        self.vocabulary = pseudo_words(self.rng, 5000, taken)
        first = [w.capitalize() for w in pseudo_words(self.rng, 300, taken)]
        last = [w.capitalize() for w in pseudo_words(self.rng, 2000, taken)]
        names: set[str] = set()
        while len(names) < entities:
            names.add(f"{self.rng.choice(first)} {self.rng.choice(last)}")
        self.entities = [ExtractedEntity(name, TYPES[rank % len(TYPES)]) for rank, name in enumerate(sorted(names))]
        self.rng.shuffle(self.entities)  # rank = position: rank 0 is the biggest hub
        self.ranks = {entity: rank for rank, entity in enumerate(self.entities)}
        self.cumulative = list(np.cumsum([1 / (rank + 10) for rank in range(entities)]))
        self._entity_vectors: Vector = unit(self.np_rng.normal(size=(entities, DIMENSIONS)))
        self.facts_mentioning: Counter[int] = Counter()  # entity rank → facts that mention it
        self.documents = 0

    def entity_rank(self) -> int:
        return bisect.bisect_left(self.cumulative, self.rng.random() * self.cumulative[-1])

    def entity_vector(self, rank: int) -> list[float]:
        """A new list each time, not a cache: the benchmark runs in the server's process, whose cyclic
        collector walks every list it holds on a full pass. A cache of these lists (8,000 of 384 floats
        after 20k facts) made a full pass take 47 ms, and at 100k facts the repeated export's slow calls spent
        81-83 ms in the collector against 1 ms for the others: the benchmark's own data, not graphmem's (after a
        load of 20k facts, with the corpus deleted, ``gc.get_objects()`` counted 462 unfrozen objects)."""
        return [float(x) for x in self._entity_vectors[rank]]

    def query(self) -> str:
        words = self.rng.sample(self.rng.choice(self.topic_words), 2)
        if self.rng.random() < 0.25:
            words.append(self.entities[self.entity_rank()].name)
        return " ".join(words)

    def batch(self, namespace: str, facts: int, now: int, stats: LoadStats) -> list[tuple[dict[str, Any],
                                                                                           PreparedDocument]]:
        """Documents of 5-20 facts, about ``facts`` facts in all (the last document may be cut short)."""
        sizes: list[int] = []
        while sum(sizes) < facts:
            sizes.append(min(self.rng.randint(5, 20), facts - sum(sizes)))
        topics: list[int] = []
        for size in sizes:
            main = self.rng.randrange(len(self.topic_words))
            topics += [main if self.rng.random() < 0.7 else self.rng.randrange(len(self.topic_words))
                       for _ in range(size)]
        noise = self.np_rng.normal(scale=self.noise, size=(len(topics), DIMENSIONS))
        vectors = unit(self.centroids[topics] + noise).tolist()
        out = []
        position = 0
        for size in sizes:
            texts: list[str] = []
            prepared_facts: list[PreparedFact] = []
            entity_embeddings: dict[str, list[float]] = {}
            offset = 0
            for _ in range(size):
                text, mentions, triples = self._fact(topics[position], offset)
                for mention in mentions:
                    entity_embeddings[normalize_name(mention.entity.name)] = self.entity_vector(
                        self.ranks[mention.entity])
                prepared_facts.append(PreparedFact(text, offset, offset + len(text), FactKind.sentence, None,
                                                   vectors[position], [], mentions, triples))
                texts.append(text)
                offset += len(text) + 1
                position += 1
                stats.mentions += len(mentions)
                stats.triples += len(triples)
            content = " ".join(texts)
            self.documents += 1
            document = document_record(
                now=now, namespace=namespace, content=content, digest=content_hash(namespace, content),
                chain_id=None, version=1, created_at=None, title=f"Synthetic note {self.documents}",
                source=f"synthetic:{self.documents}", metadata=None, path=None, request_key=None, request_hash=None,
                fact_count=size)
            out.append((document, PreparedDocument(content, prepared_facts, entity_embeddings=entity_embeddings,
                                                   chunks=synthetic_chunks(content, prepared_facts))))
        stats.facts += facts
        stats.documents += len(sizes)
        return out

    def _fact(self, topic: int, offset: int) -> tuple[str, list[Mention], list[Triple]]:
        """One sentence starting at ``offset`` of its document: words, entity names, mentions, triples."""
        count = self.rng.choices(*MENTIONS_PER_FACT)[0]
        ranks = list(dict.fromkeys(self.entity_rank() for _ in range(count)))
        self.facts_mentioning.update(ranks)
        tokens = self.rng.sample(self.topic_words[topic], 2) + self.rng.choices(self.vocabulary,
                                                                                 k=self.rng.randint(6, 12))
        self.rng.shuffle(tokens)
        tokens[0] = tokens[0].capitalize()
        slots = sorted(self.rng.sample(range(1, len(tokens) + 1), len(ranks)), reverse=True)
        for slot, rank in zip(slots, ranks, strict=True):
            tokens.insert(slot, self.entities[rank].name)  # insertion from the back keeps the slots valid
        mentions, position = [], offset
        named = {self.entities[rank].name: self.entities[rank] for rank in ranks}
        for token in tokens:
            if token in named:
                mentions.append(Mention(named[token], position, position + len(token)))
            position += len(token) + 1
        triples = []
        if len(ranks) >= 2 and self.rng.random() < 0.5:
            triples.append(Triple(self.entities[ranks[0]], self.rng.choice(PREDICATES), self.entities[ranks[1]],
                                  negated=self.rng.random() < 0.05))
        return " ".join(tokens) + ".", mentions, triples


# ---- instrumentation -------------------------------------------------------------------------------


class StatementTimer:
    """Seconds per named statement while ``recording`` (wraps ``Tx.run``; ``Tx.single`` goes through it)."""

    def __init__(self) -> None:
        self.seconds: dict[str, float] = defaultdict(float)
        self.calls: Counter[str] = Counter()

    def reset(self) -> None:
        self.seconds.clear()
        self.calls.clear()

    @contextmanager
    def recording(self) -> Iterator[StatementTimer]:
        original = Tx.run

        def timed(tx: Tx, name: str, /, **params: Any) -> list[dict[str, Any]]:
            t0 = time.perf_counter()
            try:
                return original(tx, name, **params)
            finally:
                self.seconds[name] += time.perf_counter() - t0
                self.calls[name] += 1

        Tx.run = timed  # type: ignore[method-assign]
        try:
            yield self
        finally:
            Tx.run = original  # type: ignore[method-assign]


def engine_process(runtime: Runtime) -> psutil.Process | None:
    """The bundled engine's process, while it runs."""
    state = runtime.engine.status().state if runtime.engine is not None else None
    return psutil.Process(state.pid) if state is not None and state.pid else None


class CallCosts:
    """Per timed call: its seconds, the CPU seconds of the app process (Python's collector included) and of the
    engine process, the seconds of this process's cyclic garbage collections (generations 1 and 2), and the
    machine's stolen CPU seconds (``/proc/stat``, all cores): what a slow call spent that a fast one did not.
    The CPU figures come in the kernel's ticks of 10 ms."""

    COLUMNS = ("seconds", "app CPU", "engine CPU", "Python gc", "stolen")
    TICK_S = 1 / os.sysconf("SC_CLK_TCK")

    def __init__(self, runtime: Runtime) -> None:
        engine = engine_process(runtime)
        assert engine is not None, "the benchmark runs the bundled engine"
        self.engine = engine
        self.app = psutil.Process()
        self.rows: list[tuple[float, ...]] = []
        self._gc_s = 0.0
        self._gc_started = 0.0

    def _gc(self, phase: str, info: dict[str, int]) -> None:
        if phase == "start":
            self._gc_started = time.perf_counter()
        elif info["generation"] >= 1:
            self._gc_s += time.perf_counter() - self._gc_started

    def _costs(self) -> tuple[float, ...]:
        app, engine = self.app.cpu_times(), self.engine.cpu_times()
        with open("/proc/stat", encoding="ascii") as stat:
            steal = int(stat.readline().split()[8]) * self.TICK_S
        return app.user + app.system, engine.user + engine.system, self._gc_s, steal

    def measure(self, fn: Callable[..., Any], *args: Any) -> float:
        """``fn(*args)``'s seconds, timed as ``timed`` times them (the costs are read outside that time)."""
        gc.callbacks.append(self._gc)
        try:
            before = self._costs()
            started = time.perf_counter()
            fn(*args)
            seconds = time.perf_counter() - started
            after = self._costs()
        finally:
            gc.callbacks.remove(self._gc)
        self.rows.append((seconds, *(b - a for a, b in zip(before, after, strict=True))))
        return seconds

    def print_slow(self, slow_s: float) -> None:
        slow = [row for row in self.rows if row[0] > slow_s]
        rest = [row for row in self.rows if row[0] <= slow_s]
        if not slow:
            return

        def means(rows: list[tuple[float, ...]]) -> str:
            return " / ".join(f"{1000 * statistics.mean(column):.0f}" for column in zip(*rows, strict=True))

        print(f"    its {len(slow)} slow calls (over x{SLOW_CALL} its p50), ms each, {' / '.join(self.COLUMNS)} "
              f"(CPU in ticks of 10 ms): {means(slow)}; the other calls: {means(rest)}")


# ---- loading ---------------------------------------------------------------------------------------


@contextmanager
def timing_commits(stats: LoadStats) -> Iterator[None]:
    """Adds the seconds of the loading thread's commits to ``stats.commit_s`` (not the similarity readers')."""
    original = neo4j.Transaction.commit
    loader = threading.current_thread()

    def commit(tx: neo4j.Transaction) -> None:
        t0 = time.perf_counter()
        try:
            original(tx)
        finally:
            if threading.current_thread() is loader:
                stats.commit_s += time.perf_counter() - t0

    neo4j.Transaction.commit = commit  # type: ignore[method-assign,assignment]
    try:
        yield
    finally:
        neo4j.Transaction.commit = original  # type: ignore[method-assign]


def load(store: GraphStore, corpus: Corpus, facts: int, batch_facts: int, options: WriteOptions) -> LoadStats:
    stats = LoadStats()
    waited = options.times.similar
    timer = StatementTimer()
    with timer.recording(), timing_commits(stats):
        while stats.facts < facts:
            t0 = time.perf_counter()
            size = min(batch_facts, facts - stats.facts)
            now = now_ms()
            batch = corpus.batch(BIG, size, now, stats)
            t1 = time.perf_counter()
            keys = store.write(partial(write_documents, namespace=BIG, batch=batch, now=now, options=options))
            t2 = time.perf_counter()
            sync_type_labels(store, BIG, keys)
            t3 = time.perf_counter()
            stats.generate_s += t1 - t0
            stats.write_s += t2 - t1
            stats.labels_s += t3 - t2
            stats.batch_write_s.append(t2 - t1)
            stats.batch_facts.append(size)
    stats.statements.update(timer.seconds)
    stats.similar_wait_s = options.times.similar - waited
    return stats


def print_load(stats: LoadStats, total_facts: int) -> None:
    """The load's rate is graphmem's: its write transactions and its type-label transactions. The benchmark's
    own synthetic generation (the documents, their vectors and records, made in Python before each write) is
    timed apart and shown beside it, with the rate it would make if it were counted in."""
    seconds = stats.write_s + stats.labels_s
    print(f"  loaded {stats.facts} facts in {stats.documents} documents ({stats.mentions} mentions, "
          f"{stats.triples} triples) in {seconds:.1f} s of graphmem's writes: {stats.facts / seconds:.0f} facts/s "
          f"(now {total_facts} facts in the namespace)")
    print(f"    write transactions {stats.write_s:6.1f} s ({stats.facts / stats.write_s:.0f} facts/s) | type labels "
          f"{stats.labels_s:5.1f} s | besides, the benchmark's synthetic generation {stats.generate_s:.1f} s "
          f"({stats.facts / (seconds + stats.generate_s):.0f} facts/s with it)")
    batches = stats.batch_write_s
    tenth = max(1, len(batches) // 10)
    first = sum(stats.batch_facts[:tenth]) / sum(batches[:tenth])
    last = sum(stats.batch_facts[-tenth:]) / sum(batches[-tenth:])
    print(f"    {len(batches)} write transactions of ~{max(stats.batch_facts)} facts: "
          f"p50 {percentile(batches, .5):.2f} s, max {max(batches):.2f} s; "
          f"first tenth {first:.0f} facts/s, last tenth {last:.0f} facts/s")
    inside = {name: s for name, s in stats.statements.items()
              if not name.startswith("entity_labels") and name not in BESIDE_THE_WRITE}
    parts = sorted(inside.items(), key=lambda item: -item[1])
    print("    inside the transactions: " + ", ".join(f"{name} {s:.1f} s" for name, s in parts))
    beside = sum(stats.statements[name] for name in BESIDE_THE_WRITE)
    print(f"    beside them ({SIMILAR_READERS} read transactions at once, while each writes all but its SIMILAR_TO "
          f"links): {' + '.join(BESIDE_THE_WRITE)} {beside:.1f} s in all; the writes waited for them "
          f"{stats.similar_wait_s:.1f} s")
    loading = sum(s for name, s in stats.statements.items() if name not in BESIDE_THE_WRITE)
    rest = stats.write_s + stats.labels_s - loading - stats.similar_wait_s - stats.commit_s
    print(f"    commits {stats.commit_s:.1f} s (write and label transactions: the engine updates its indexes then); "
          f"the rest (records, votes, pairwise SIMILAR_TO of new entities in Python, and the driver) {rest:.1f} s")


def print_similar_limit(stats: LoadStats, new_entities: int) -> None:
    """What the SIMILAR_TO candidates cost the load: one vector-index query per new entity, read beside the
    write (``ingest/write.py``); the rate without the wait for them is what the load would reach if the engine's
    vector index answered at once (an upper bound: on 2 cores the reads also slow the writes beside them)."""
    seconds = stats.write_s + stats.labels_s
    similar = stats.statements["entities_similar"]
    print(f"    SIMILAR_TO candidates: {new_entities} new entities, {1000 * similar / max(new_entities, 1):.1f} ms of "
          f"vector-index query each ({SIMILAR_READERS} at once); without the wait for them the load would run at "
          f"{stats.facts / (seconds - stats.similar_wait_s):.0f} facts/s")


# ---- measuring -------------------------------------------------------------------------------------


def timed(fn: Callable[..., T], *args: Any, **kwargs: Any) -> tuple[float, T]:
    t0 = time.perf_counter()
    result = fn(*args, **kwargs)
    return time.perf_counter() - t0, result


def view_params() -> dict[str, Any]:
    """The current view's parameters and the (empty) filters'."""
    return {**views.view_params(CURRENT), **views.filter_params()}


def run(name: str, tx: Tx, **params: Any) -> list[dict[str, Any]]:
    return tx.run(name, **params)


def collected(name: str, tx: Tx, **params: Any) -> list[dict[str, Any]]:
    return tx.collected(name, **params)


SMALL_DOCUMENTS = [
    "Alice Johnson moved to Lisbon in March to lead the payments team. She prefers PostgreSQL for ledgers. "
    "The Lisbon office opens at eight.",
    "Bob Smith adopted a beagle named Pixel. Pixel is afraid of thunderstorms. "
    "Bob walks Pixel along the river every morning.",
    "The quarterly budget review was moved to Thursday. Carol Diaz will present the hiring plan. "
    "The {word} rollout was approved by Carol Diaz.",
]


def small_checks(corpus: Corpus) -> list[tuple[str, str]]:
    """(query, text the top 3 must hold); the last one's word is also in ~1 in 400 of the big namespace's
    facts, so the full-text index's top k is crowded with facts the caller cannot read."""
    word = corpus.topic_words[0][0]
    return [("Where did Alice move to?", "moved to Lisbon"), ("What is the name of Bob's dog?", "beagle named Pixel"),
            ("When is the budget review?", "moved to Thursday"), (f"{word} rollout approval", f"{word} rollout")]


class Bench:
    def __init__(self, runtime: Runtime, corpus: Corpus, args: argparse.Namespace) -> None:
        self.runtime = runtime
        self.service = runtime.service
        self.store = runtime.store
        self.corpus = corpus
        self.args = args
        self.ctx = CallerContext.for_namespaces(BIG)
        self.small_ctx = CallerContext.for_namespaces(SMALL)
        self.entity_ids: dict[str, str] = {}  # name → id, collected from search hits

    def measure(self) -> dict[str, float]:
        out, queries = self.first_pass("after the load")
        self.the_rest(queries, out)
        return out

    def first_pass(self, when: str) -> tuple[dict[str, float], list[str]]:
        """The first search (cold), ``--warmup`` warm-up searches, then the first timed pass: p50/p95."""
        service, args, out = self.service, self.args, {}
        queries = [self.corpus.query() for _ in range(args.queries)]
        warmup = [self.corpus.query() for _ in range(args.warmup)]
        cold, _ = timed(service.search, self.ctx, SearchRequest(query=warmup[0]))
        print(f"  first search {when} (cold): {cold * 1000:.0f} ms")
        deadline = time.monotonic() + args.budget / 5
        for done, q in enumerate(warmup[1:], start=1):
            service.search(self.ctx, SearchRequest(query=q))
            if time.monotonic() > deadline and done >= 3:
                break

        latencies: list[float] = []
        deadline = time.monotonic() + args.budget
        for q in queries:
            seconds, hits = timed(service.search, self.ctx, SearchRequest(query=q))
            latencies.append(seconds)
            self._remember(hits)
            if time.monotonic() > deadline and len(latencies) >= 20:
                print(f"  (time budget of {args.budget:.0f} s reached: {len(latencies)} of {len(queries)} queries)")
                queries = queries[: len(latencies)]
                break
        named = [s for s, q in zip(latencies, queries, strict=True) if re.search(r"[A-Z]", q)]
        plain = [s for s, q in zip(latencies, queries, strict=True) if not re.search(r"[A-Z]", q)]
        out["search p50"], out["search p95"] = ms(latencies, .5), ms(latencies, .95)
        print(f"  search (hybrid, embedding included), {len(queries)} queries: p50 {out['search p50']:.1f} ms, "
              f"p95 {out['search p95']:.1f} ms, mean {1000 * statistics.mean(latencies):.1f} ms")
        print(f"    topic words only ({len(plain)}): p50 {ms(plain, .5):.1f} ms, p95 {ms(plain, .95):.1f} ms; "
              f"with an entity name ({len(named)}): p50 {ms(named, .5):.1f} ms, p95 {ms(named, .95):.1f} ms")
        return out, queries

    def the_rest(self, queries: list[str], out: dict[str, float]) -> None:
        """Everything after the first pass, on its queries."""
        service = self.service

        for label, call, limit in (("search limit=100", service.search, 100),
                                   ("search_documents limit=10", service.search_memories, 10)):
            timings = [timed(call, self.ctx, SearchRequest(query=q, limit=limit))[0] for q in queries]
            out[f"{label} p50"], out[f"{label} p95"] = ms(timings, .5), ms(timings, .95)
            print(f"  {label}, same queries: p50 {out[f'{label} p50']:.1f} ms, p95 {out[f'{label} p95']:.1f} ms")
        print(f"  limit=100 / limit=10: p50 x{out['search limit=100 p50'] / out['search p50']:.2f}, "
              f"p95 x{out['search limit=100 p95'] / out['search p95']:.2f}")

        embedder = service.pipeline.embedder
        embeds = [timed(embedder.embed, [q])[0] for q in queries]
        out["embed p50"], out["embed p95"] = ms(embeds, .5), ms(embeds, .95)
        print(f"  query embedding alone: p50 {out['embed p50']:.1f} ms, p95 {out['embed p95']:.1f} ms")

        out.update(self.breakdown(queries[: min(50, max(10, len(queries) // 2))]))
        out.update(self.ann_check(queries[:10]))
        self.small_check()
        out.update(self.recall(queries[: self.args.calls]))
        out.update(self.export(queries[: self.args.calls]))
        out.update(self.later_pages(queries[: self.args.calls]))

    def _remember(self, hits: list[FactHit]) -> None:
        for hit in hits:
            for entity in hit.entities:
                if entity.name:
                    self.entity_ids[entity.name] = entity.id

    def breakdown(self, queries: list[str]) -> dict[str, float]:
        """Per statement: calls and milliseconds per search (a second pass, with Tx.run timed)."""
        timer = StatementTimer()
        per_search: dict[str, list[float]] = defaultdict(list)
        calls: Counter[str] = Counter()
        widened = 0
        deadline = time.monotonic() + self.args.budget / 3
        for done, q in enumerate(queries, start=1):
            if time.monotonic() > deadline and done > 5:
                queries = queries[: done - 1]
                break
            timer.reset()
            with timer.recording():
                seconds, _ = timed(self.service.search, self.ctx, SearchRequest(query=q))
            for name in timer.seconds:
                per_search[name].append(timer.seconds[name])
            calls.update(timer.calls)
            widened += timer.calls["facts_vector_search"] > 1
            per_search["(outside statements)"].append(seconds - sum(timer.seconds.values()))
            per_search["(whole search)"].append(seconds)
        n = len(queries)
        print(f"  per search, by statement ({n} searches; mean ms, p95 ms, calls per search):")
        out = {}
        padded = {name: values + [0.0] * (n - len(values)) for name, values in per_search.items()}
        for name, values in sorted(padded.items(), key=lambda item: -statistics.mean(item[1])):
            mean = 1000 * statistics.mean(values)
            out[f"· {name}"] = mean
            count = f"{calls[name] / n:6.2f}" if name in calls else ""
            print(f"    {name:<24} {mean:8.1f} {ms(values, .95):8.1f} {count}")
        if calls["facts_vector_scan"]:
            print("    vector path: exact scan (the namespace is small enough), not the index")
        if calls["facts_vector_search"]:
            print("    vector path: the vector index (facts_vector_search)")
        if widened:
            print(f"    the vector index query was widened (too few hits after filters) in {widened}/{n} searches")
        return out

    def ann_check(self, queries: list[str]) -> dict[str, float]:
        """The vector index's top 30 against the exact scan's (recall@30), and the time of each."""
        vectors = self.service.pipeline.embedder.embed(queries)
        index = self.store.dialect.index_name(SearchIndex.fact_embedding)
        recalls, index_s, exact_s, short = [], [], [], 0
        for vector in vectors:
            params = {"namespaces": [BIG], "vector": vector, "limit": ANN_TOP, **view_params()}
            seconds, approx = timed(self.store.read, partial(collected, "facts_vector_search", index=index,
                                                             k=ANN_K, **params))
            index_s.append(seconds)
            seconds, exact = timed(self.store.read, partial(run, "facts_vector_scan", **params))
            exact_s.append(seconds)
            short += len(approx) < ANN_TOP
            recalls.append(len({r["id"] for r in approx} & {r["id"] for r in exact}) / max(1, len(exact)))
        print(f"  vector index vs exact scan ({len(vectors)} queries, top {ANN_TOP} of k={ANN_K}): "
              f"recall@{ANN_TOP} {statistics.mean(recalls):.2f}; index p50 {ms(index_s, .5):.1f} ms, "
              f"exact scan p50 {ms(exact_s, .5):.1f} ms"
              + (f"; {short} returned fewer than {ANN_TOP}" if short else ""))
        return {"vector index query p50": ms(index_s, .5), "exact vector scan p50": ms(exact_s, .5)}

    def small_check(self) -> None:
        found = 0
        checks = small_checks(self.corpus)
        for query, expected in checks:
            seconds, hits = timed(self.service.search, self.small_ctx, SearchRequest(query=query, explain=True))
            rank = next((i for i, h in enumerate(hits, start=1) if expected in h.text), None)
            explain = hits[rank - 1].explain if rank else None
            signals = ",".join(sorted(s.signal for s in explain.signals)) if explain else "-"
            found += rank is not None and rank <= 3
            print(f"    {SMALL}: {query!r} → " + (f"rank {rank} (signals {signals})" if rank else
                                                   f"MISSING among {len(hits)} hits") + f", {seconds * 1000:.0f} ms")
        print(f"  small namespace ({SMALL}, 10 real facts) inside the big one: "
              f"{found}/{len(checks)} found in the top 3")

    def recall(self, queries: list[str]) -> dict[str, float]:
        recall = self.service.recall
        latencies, sizes = [], []
        deadline = time.monotonic() + self.args.budget / 3
        for q in queries:
            seconds, result = timed(recall, self.ctx, RecallRequest(query=q, max_items=8, max_tokens=1500))
            latencies.append(seconds)
            sizes.append(len(result.items))
            if time.monotonic() > deadline and len(latencies) >= 5:
                break
        out = {"recall p50": ms(latencies, .5), "recall p95": ms(latencies, .95)}
        print(f"  recall (max_items 8, max_tokens 1500), {len(latencies)} calls: p50 {out['recall p50']:.1f} ms, "
              f"p95 {out['recall p95']:.1f} ms" + f"; items p50 {percentile(sizes, .5)}")
        return out

    def export(self, queries: list[str]) -> dict[str, float]:
        export = self.service.export
        caps = ExportCaps(max_nodes=1000, depth=EXPORT_DEPTH)
        top = [self.corpus.entities[rank].name for rank, _ in self.corpus.facts_mentioning.most_common(20)]
        hubs = [name for name in top if name in self.entity_ids]
        seeds: dict[str, list[QuerySeed | EntitySeed]] = {
            "query": [QuerySeed(kind="query", query=q) for q in queries[: len(queries) // 2]]}
        if hubs:
            seeds["hub entity"] = [EntitySeed(kind="entity", id=self.entity_ids[hubs[i % len(hubs)]])
                                   for i in range(len(queries) - len(queries) // 2)]
        else:
            print("  export: no hub entity id seen in search hits; entity seeds skipped")
        out = {}
        runs = [(kind, kind_seeds, count) for kind, kind_seeds in seeds.items() for count in (True, False)]
        for kind, kind_seeds, count in runs:
            latencies, counts, edges, truncated = [], [], [], 0
            deadline = time.monotonic() + self.args.budget / 6
            name = f"export {kind}{'' if count else ' uncounted'}"
            for seed in kind_seeds:
                seconds, result = timed(export, self.ctx, BIG, ExportRequest(seed=seed, caps=caps,
                                                                             count_reachable=count))
                latencies.append(seconds)
                assert isinstance(result, ExportResult)
                counts.append(len(result.nodes))
                edges.append(len(result.edges))
                truncated += result.truncated
                if time.monotonic() > deadline and len(latencies) >= 5:
                    break
            out[f"{name} p50"], out[f"{name} p95"] = ms(latencies, .5), ms(latencies, .95)
            nodes = (f"; nodes returned p50 {percentile(counts, .5)}, max {max(counts)}; "
                     f"edges p50 {percentile(edges, .5)}; truncated {truncated}/{len(latencies)}")
            print(f"  export ({kind} seed, max_nodes 1000, depth {EXPORT_DEPTH}"
                  f"{'' if count else ', count_reachable false'}), {len(latencies)} calls: "
                  f"p50 {out[f'{name} p50']:.1f} ms, p95 {out[f'{name} p95']:.1f} ms{nodes}")
        if hubs:
            out |= self.same_export(EntitySeed(kind="entity", id=self.entity_ids[hubs[0]]), caps)
        return out

    def same_export(self, seed: EntitySeed, caps: ExportCaps) -> dict[str, float]:
        """One export (a hub seed, not counted) repeated: the same work each call (with, as in any export, the
        sweep of expired walks at most once a minute), so its spread is what the run adds to any p95 of the
        figures above: a p95 goal needs a p50 of about the goal over its p95 / p50. Each call over the
        one before it is the spread under a ratio of two calls (page k over page 1). Where the slow calls'
        time goes (``CallCosts``) is printed beside them."""
        request = ExportRequest(seed=seed, caps=caps, count_reachable=False)
        self.service.export(self.ctx, BIG, request)
        costs = CallCosts(self.runtime)
        latencies = [costs.measure(self.service.export, self.ctx, BIG, request) for _ in range(SAME_EXPORT_CALLS)]
        # each call over the one before it: the spread of a ratio of two calls that do the
        # same work (page k over page 1 compares two calls of one export)
        ratios = [later / earlier for earlier, later in itertools.pairwise(latencies)]
        out = {"same export p50": ms(latencies, .5), "same export p95": ms(latencies, .95),
               "same export call / previous p95": percentile(ratios, .95)}
        print(f"  the same export (hub entity seed, count_reachable false) {SAME_EXPORT_CALLS} times: "
              f"p50 {out['same export p50']:.1f} ms, p95 {out['same export p95']:.1f} ms "
              f"(p95 / p50 x{out['same export p95'] / out['same export p50']:.2f}), "
              f"max / min x{max(latencies) / min(latencies):.2f}; a call over the one before it: "
              f"p50 x{percentile(ratios, .5):.2f}, p95 x{out['same export call / previous p95']:.2f}")
        costs.print_slow(percentile(latencies, .5) * SLOW_CALL)
        return out

    def later_pages(self, queries: list[str]) -> dict[str, float]:
        """Page k of one export against its page 1: query seeds, pages of 200 nodes at depth 3, the reachable
        documents not counted (only a first page counts them, so page 1 would not compare like for like)."""
        caps = ExportCaps(max_nodes=PAGE_NODES, depth=EXPORT_DEPTH)
        ratios: list[float] = []
        firsts: list[float] = []
        later: list[float] = []
        deadline = time.monotonic() + self.args.budget / 3
        for query in queries:
            request = ExportRequest(seed=QuerySeed(kind="query", query=query), caps=caps, count_reachable=False)
            first, result = timed(self.service.export, self.ctx, BIG, request)
            pages = [first]
            while result.next_cursor is not None and len(pages) < PAGES:
                seconds, result = timed(self.service.export, self.ctx, BIG,
                                        request.model_copy(update={"cursor": result.next_cursor}))
                pages.append(seconds)
            firsts.append(first)
            later.extend(pages[1:])
            ratios.extend(seconds / first for seconds in pages[1:])
            if time.monotonic() > deadline and len(firsts) >= 5:
                break
        if not ratios:
            print("  export later pages: no export had a second page")
            return {}
        out = {"export page 1 p50": ms(firsts, .5), "export page k p50": ms(later, .5),
               "export page k / page 1 p50": percentile(ratios, .5),
               "export page k / page 1 p95": percentile(ratios, .95), "export page k / page 1 max": max(ratios)}
        print(f"  export pages (query seed, {PAGE_NODES} nodes a page, depth {EXPORT_DEPTH}, uncounted), "
              f"{len(firsts)} exports, up to {PAGES} pages: page 1 p50 {out['export page 1 p50']:.1f} ms, "
              f"pages 2+ p50 {out['export page k p50']:.1f} ms ({len(later)} pages); page k / page 1 of the same "
              f"export: p50 x{out['export page k / page 1 p50']:.2f}, p95 x{out['export page k / page 1 p95']:.2f}, "
              f"max x{out['export page k / page 1 max']:.2f}")
        return out


def print_growth(sizes: list[int], results: list[dict[str, float]]) -> None:
    first, last = results[0], results[-1]
    print(f"\ngrowth from {sizes[0]} to {sizes[-1]} facts ({sizes[-1] / sizes[0]:.1f}x the facts), ms unless named "
          "(· = mean per search in the by-statement pass):")
    for name in first:
        if name in last:
            ratio = last[name] / first[name] if first[name] else float("inf")
            print(f"  {name:<34} {first[name]:9.1f} → {last[name]:9.1f}   x{ratio:.2f}")


def memory(runtime: Runtime, when: str) -> dict[str, float]:
    """Resident memory of this process (the app: models, driver, service) and of the engine, in GiB."""
    app = psutil.Process().memory_info().rss / 2**30
    process = engine_process(runtime)
    engine = process.memory_info().rss / 2**30 if process is not None else 0.0
    print(f"  resident memory {when}: app process {app:.2f} GiB, engine process {engine:.2f} GiB "
          f"(heap limit {runtime.settings.engine_heap})")
    return {f"app RSS GiB {when}": app, f"engine RSS GiB {when}": engine}


def settle(runtime: Runtime, since: str = "the load") -> dict[str, float]:
    """Seconds until the engine's background index builds are done (what /ready waits for), polled."""
    assert runtime.settling is not None
    started = time.perf_counter()
    while runtime.settling.busy() and time.perf_counter() - started < 900:
        time.sleep(1)
    seconds = time.perf_counter() - started
    print(f"  background index builds settled (/ready would answer 200) {seconds:.0f} s after {since}")
    return {"settle s": seconds}


def engine_warnings(runtime: Runtime) -> None:
    if runtime.engine is None:
        return
    text = runtime.engine.log_file.read_text(encoding="utf-8", errors="replace").splitlines()
    vector = [line for line in text if "LSMVectorIndex" in line]
    print(f"\nengine log: {len(vector)} lines of the vector index (graph builds), the last 6:")
    for line in vector[-6:]:
        print(f"  {line[:240]}")
    lines = [line for line in text if re.search(r"WARN|SEVERE|ERROR|Exception", line) and line not in vector]
    print(f"engine log: {len(lines)} other warning/error lines, the last 6 distinct:")
    for line in list(dict.fromkeys(line[:200] for line in lines))[-6:]:
        print(f"  {line}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", default="10000,100000", help="namespace sizes in facts, loaded in turn")
    parser.add_argument("--embedder", choices=["onnx", "minilm"], default="onnx")
    parser.add_argument("--embed-threads", type=int, default=Settings.model_fields["embed_threads"].default)
    parser.add_argument("--heap", default="4g", help="the bundled engine's Java heap")
    parser.add_argument("--engine-gc", choices=[c.value for c in EngineCollector],
                        default=Settings.model_fields["engine_gc"].default.value,
                        help="the bundled engine's garbage collector (GRAPHMEM_ENGINE_GC)")
    parser.add_argument("--batch-facts", type=int, default=750, help="facts per write transaction")
    parser.add_argument("--queries", type=int, default=200)
    parser.add_argument("--warmup", type=int, default=20)
    parser.add_argument("--calls", type=int, default=50, help="recall and export calls per size")
    parser.add_argument("--budget", type=float, default=150.0,
                        help="seconds for the timed searches of one size (at least 20 queries are run)")
    parser.add_argument("--topics", type=int, default=200)
    parser.add_argument("--noise", type=float, default=0.05, help="gaussian noise per dimension around a centroid")
    parser.add_argument("--tx-timeout", type=float, default=120.0,
                        help="transaction timeout, s (graphmem's default is 30)")
    parser.add_argument("--seed", type=int, default=13)
    parser.add_argument("--rebuild", action="store_true",
                        help="after each size's measurements, time rebuilding the search indexes of facts and chunks")
    args = parser.parse_args()
    sizes = sorted(int(s) for s in args.sizes.split(","))
    started = time.perf_counter()
    with tempfile.TemporaryDirectory(prefix="graphmem-search-bench-") as tmp:
        settings = Settings(_env_file=None, neo4j_uri=None, data_dir=Path(tmp),
                            embedder=EmbedderChoice(args.embedder), embed_threads=args.embed_threads,
                            engine_heap=args.heap, engine_gc=EngineCollector(args.engine_gc),
                            transaction_timeout_s=args.tx_timeout)
        seconds, runtime = timed(Runtime.open, settings)
        with runtime:
            service, store = runtime.service, runtime.store
            collector = " ".join(collector_options(settings.engine_gc, settings.engine_heap)) or "the environment's"
            print(f"engine: {runtime.versions['server']} (bundled, heap {settings.engine_heap}, "
                  f"collector {settings.engine_gc.value}: {collector}), started in "
                  f"{seconds:.1f} s; {psutil.cpu_count()} cores")
            seconds, embedder = timed(lambda: service.pipeline.embedder)
            embedder.embed(["warm up"])
            threads = f"{settings.embed_threads} onnxruntime intra-op thread(s)"
            if args.embedder == "minilm":
                import torch

                threads = f"{torch.get_num_threads()} torch thread(s)"
            assert embedder.dimensions == DIMENSIONS
            print(f"embedder: {embedder.name} ({args.embedder}), {threads}, {embedder.dimensions} dimensions, "
                  f"loaded in {seconds:.1f} s; the database records {runtime.versions['embedder']}")
            corpus = Corpus(args.seed, args.topics, max(sizes) // 5, args.noise, embedder.embed)
            print(f"synthetic data: vectors are NOT the model's. {args.topics} topic centroids = the model's "
                  f"embedding of each topic's 4 pseudo-words; each fact = centroid + N(0, {args.noise}²) per "
                  f"dimension, normalised ({DIMENSIONS} dims). Texts: 2 topic words + 6-12 of 5,000 pseudo-words "
                  f"+ entity names; {len(corpus.entities)} entities drawn with weight 1/(rank+10); "
                  f"documents of 5-20 facts")

            memory(runtime, "idle, embedder loaded (spaCy loads with the first real facts)")
            small_text = [d.format(word=corpus.topic_words[0][0]) for d in SMALL_DOCUMENTS]
            seconds, _ = timed(service.add_memories, CallerContext.for_namespaces(SMALL), SMALL,
                               [DocumentInput(content=t) for t in small_text])
            counts = service.namespace_counts(CallerContext.for_namespaces(SMALL), SMALL)
            print(f"small namespace {SMALL}: {counts.facts} real facts through spaCy and the model "
                  f"({seconds:.1f} s)")
            runtime.warm_up()  # as a server does once it is up: models loaded, search indexes touched

            options = WriteOptions(user_name=settings.user_entity_name,
                                   similar_cosine=settings.similar_entity_cosine, dialect=store.dialect,
                                   times=StageTimes(), read=store.read)
            bench = Bench(runtime, corpus, args)
            results: list[dict[str, float]] = []
            loaded = 0
            for size in sizes:
                print(f"\n== {size} facts in {BIG} ==")
                entities_before = service.namespace_counts(bench.ctx, BIG).entities if loaded else 0
                stats = load(store, corpus, size - loaded, args.batch_facts, options)
                loaded = size
                print_load(stats, loaded)
                top = corpus.facts_mentioning.most_common(3)
                counts = service.namespace_counts(bench.ctx, BIG)
                print_similar_limit(stats, counts.entities - entities_before)
                print(f"  namespace: {counts.documents} documents, {counts.facts} facts, {counts.entities} "
                      f"entities, {counts.triples} triples; hubs in "
                      + ", ".join(str(n) for _, n in top) + " facts; "
                      f"{sum(1 for n in corpus.facts_mentioning.values() if n == 1)} entities in one fact only")
                measured = {**memory(runtime, "after the load"), **settle(runtime), **disk.report(runtime)}
                measured |= bench.measure()
                if args.rebuild:
                    measured |= disk.rebuild(runtime, lambda: (settle(runtime, "the rebuild"), service.search(
                        bench.ctx, SearchRequest(query=corpus.query()))))
                results.append(measured | memory(runtime, "after the searches"))
            if len(sizes) > 1:
                print_growth(sizes, results)
            engine_warnings(runtime)
        after_restart(settings, corpus, args, bench.entity_ids)
    print(f"\ntotal run time {time.perf_counter() - started:.0f} s")


def after_restart(settings: Settings, corpus: Corpus, args: argparse.Namespace, entity_ids: dict[str, str]) -> None:
    """Stop the server and its engine, start them again on the same data, wait for /ready, and measure the
    first search pass again (the largest size)."""
    print(f"\n== after a restart on the same data ({max(int(s) for s in args.sizes.split(','))} facts) ==")
    seconds, runtime = timed(Runtime.open, settings)
    with runtime:
        print(f"  engine and service up in {seconds:.1f} s")
        settle(runtime, "the start")
        seconds, _ = timed(runtime.warm_up)  # what `graphmem serve` runs before /ready answers 200
        print(f"  the server's warm-up (models, every search index touched, searches and exports): {seconds:.1f} s")
        memory(runtime, "after a restart")
        bench = Bench(runtime, corpus, args)
        bench.entity_ids = entity_ids
        _, queries = bench.first_pass("after the restart")
        bench.export(queries[: args.calls])  # the first exports after the restart (the warm-up ran some first)


if __name__ == "__main__":
    main()
