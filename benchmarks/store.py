"""Store benchmark: add 1,000 documents of ~5 sentences through the service layer, then read 1,000 by id.

Runs against the bundled engine in a fresh temporary data directory, or with ``--engine neo4j`` against a new
Neo4j Community from tools/neo4j (``mvn -q -B -f tools/neo4j/pom.xml package`` first), with the deterministic
hashing embedder so the numbers are the store's, not the model's (benchmarks/ingest.py measures the models).
spaCy still runs: every add goes through the whole ingestion pipeline. Prints one-at-a-time adds, batched
adds (one transaction of UNWIND statements per batch), and reads.

    .venv/bin/python benchmarks/store.py [--documents 1000] [--batch 100] [--engine bundled|neo4j]
"""

from __future__ import annotations

import argparse
import contextlib
import random
import statistics
import tempfile
import time
import uuid
from pathlib import Path

from graphmem.config import Settings
from graphmem.model import CallerContext, DocumentInput
from graphmem.runtime import Runtime
from graphmem.store.processes import free_port
from services import neo4j_process

WORDS = [
    "alice", "bob", "carol", "graph", "memory", "project", "decision", "meeting", "lisbon", "berlin",
    "neo4j", "python", "release", "budget", "design", "review", "team", "customer", "roadmap", "feature",
]


def sentence(rng: random.Random) -> str:
    words = rng.choices(WORDS, k=rng.randint(8, 14))
    return " ".join(words).capitalize() + "."


def document(rng: random.Random) -> str:
    return " ".join(sentence(rng) for _ in range(5))


def percentile(values: list[float], q: float) -> float:
    return sorted(values)[min(len(values) - 1, int(q * len(values)))]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--documents", type=int, default=1000)
    parser.add_argument("--batch", type=int, default=100)
    parser.add_argument("--engine", choices=["bundled", "neo4j"], default="bundled")
    args = parser.parse_args()
    rng = random.Random(7)
    with tempfile.TemporaryDirectory(prefix="graphmem-bench-") as tmp, contextlib.ExitStack() as servers:
        server = servers.enter_context(neo4j_process(Path(tmp) / "neo4j", free_port())).settings() \
            if args.engine == "neo4j" else {"neo4j_uri": None}
        settings = Settings(_env_file=None, data_dir=Path(tmp), embedder="hashing", **server)  # type: ignore[call-arg]
        runtime = Runtime.open(settings)
        try:
            service = runtime.service
            ns = f"bench-{uuid.uuid4().hex[:8]}"
            ctx = CallerContext.for_namespaces(ns, f"{ns}-batch")
            texts = [document(rng) for _ in range(args.documents)]
            service.add_memory(ctx, ns, DocumentInput(content="Warm-up document. It is not counted."))

            latencies = []
            started = time.perf_counter()
            ids = []
            for text in texts:
                t0 = time.perf_counter()
                ids.append(service.add_memory(ctx, ns, DocumentInput(content=text)).document.id)
                latencies.append(time.perf_counter() - t0)
            single = time.perf_counter() - started

            started = time.perf_counter()
            for i in range(0, len(texts), args.batch):
                service.add_memories(ctx, f"{ns}-batch", [DocumentInput(content=t) for t in texts[i:i + args.batch]])
            batched = time.perf_counter() - started

            read_latencies = []
            started = time.perf_counter()
            for doc_id in ids:
                t0 = time.perf_counter()
                service.get_version(ctx, doc_id)
                read_latencies.append(time.perf_counter() - t0)
            reads = time.perf_counter() - started

            facts = sum(1 for t in texts for _ in t.split(". "))
            n = args.documents
            memory = f"bundled, heap {runtime.settings.engine_heap}" if runtime.engine else "tools/neo4j, heap 768m"
            print(f"engine: {runtime.versions['server']} ({memory}), embedder {runtime.versions['embedder']}, "
                  "spaCy extraction on")
            print(f"documents: {n} of 5 sentences ({facts} facts), avg {statistics.mean(map(len, texts)):.0f} chars")
            print(f"add one at a time : {single:6.2f} s  {n / single:7.1f} docs/s  "
                  f"p50 {percentile(latencies, .5) * 1000:.1f} ms  p95 {percentile(latencies, .95) * 1000:.1f} ms")
            print(f"add in batches/{args.batch:<4}: {batched:6.2f} s  {n / batched:7.1f} docs/s")
            print(f"get by id         : {reads:6.2f} s  {n / reads:7.1f} reads/s  "
                  f"p50 {percentile(read_latencies, .5) * 1000:.1f} ms  "
                  f"p95 {percentile(read_latencies, .95) * 1000:.1f} ms")
        finally:
            runtime.close()


if __name__ == "__main__":
    main()
