"""Ingest benchmark: N sixty-word memories through the service layer on the bundled engine.

For each embedder it prints memories/s end to end and each stage's own rate measured in the same run:
split, NER+parse (spaCy), embedding, write (the graph transaction). A stage's own rate is items divided by
the seconds spent in that stage alone; the end-to-end rate is what a caller sees. The CPU time of the app
and engine processes over the run gives the machine's ceiling: memories/s with every core busy all the time.

    .venv/bin/python benchmarks/ingest.py [--memories 1000] [--batch 64] [--embedders minilm,hashing]
"""

from __future__ import annotations

import argparse
import random
import tempfile
import time
import uuid
from pathlib import Path
from typing import Any

import psutil
from search import engine_process

from graphmem.config import Settings
from graphmem.model import CallerContext, DocumentInput
from graphmem.runtime import Runtime

PEOPLE = ["Alice Johnson", "Bob Smith", "Carol Diaz", "Dave Miller", "Erin Brown", "Frank Lee", "Grace Kim"]
ORGS = ["Microsoft", "Google", "Spotify", "Acme Corp", "Initech", "Globex", "Stark Industries"]
PLACES = ["Lisbon", "Berlin", "Seattle", "Tokyo", "Oslo", "Boston", "Madrid"]
TECH = ["PostgreSQL", "Neo4j", "Kubernetes", "Python", "Redis", "Kafka", "React"]
TEMPLATES = [
    "{p} works at {o} in {c} and leads the platform team there.",
    "Last spring {p} moved to {c} after {o} opened a new office.",
    "The team at {o} decided to migrate the billing service to {t}.",
    "{p} does not like {t} because the upgrades were painful.",
    "I met {p} at a conference in {c} where we talked about {t}.",
    "The design review was written by {p}, who joined {o} last year.",
    "My favorite database is {t}, and {p} agrees with me.",
]


def fill(template: str, rng: random.Random) -> str:
    """``template`` with a person {p}, an organisation {o}, a place {c} and a technology {t}
    (``benchmarks/load.py`` writes and asks with these too)."""
    return template.format(p=rng.choice(PEOPLE), o=rng.choice(ORGS), c=rng.choice(PLACES), t=rng.choice(TECH))


def sentence(rng: random.Random) -> str:
    """One sentence of a template, with real entities in it."""
    return fill(rng.choice(TEMPLATES), rng)


def memory(rng: random.Random) -> str:
    """About sixty words in four or five sentences with real entities in them."""
    words: list[str] = []
    sentences = []
    while len(words) < 60:
        sentences.append(sentence(rng))
        words.extend(sentences[-1].split())
    return " ".join(sentences)


def cpu_seconds(process: psutil.Process) -> float:
    """User and system CPU time of a process and its threads, in core-seconds."""
    times = process.cpu_times()
    return float(times.user + times.system)


def run(embedder: str, texts: list[str], batch: int) -> dict[str, Any]:
    with tempfile.TemporaryDirectory(prefix="graphmem-bench-") as tmp:
        settings = Settings(_env_file=None, neo4j_uri=None, data_dir=Path(tmp), embedder=embedder)
        runtime = Runtime.open(settings)
        try:
            service = runtime.service
            service.pipeline.warm_up()
            ns = f"bench-{uuid.uuid4().hex[:8]}"
            ctx = CallerContext.for_namespaces(ns)
            write_seconds = 0.0
            original_write = runtime.store.write

            def timed_write(fn: Any) -> Any:
                nonlocal write_seconds
                t0 = time.perf_counter()
                try:
                    return original_write(fn)
                finally:
                    write_seconds += time.perf_counter() - t0

            runtime.store.write = timed_write  # type: ignore[method-assign]
            times = service.pipeline.times
            times.split = times.extract = times.embed = 0.0
            engine = engine_process(runtime)
            processes = [psutil.Process(), *([engine] if engine is not None else [])]
            cpu_before = sum(cpu_seconds(p) for p in processes)
            started = time.perf_counter()
            # Batches run one after the other: spaCy and the embedder overlap inside each batch, but
            # overlapping a batch's write with the next batch's NLP measured slower on 2 cores (the
            # engine needs CPU for the write too): 36.9 vs 43.4 memories/s with onnx.
            for i in range(0, len(texts), batch):
                service.add_memories(ctx, ns, [DocumentInput(content=t) for t in texts[i:i + batch]])
            total = time.perf_counter() - started
            cpu = sum(cpu_seconds(p) for p in processes) - cpu_before
            counts = service.namespace_counts(ctx, ns)
            return {"embedder": f"{runtime.versions['embedder']} ({embedder})", "seconds": total,
                    "memories": len(texts), "split": times.split, "extract": times.extract, "embed": times.embed,
                    "write": write_seconds, "cpu": cpu, **counts.model_dump()}
        finally:
            runtime.close()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--memories", type=int, default=1000)
    parser.add_argument("--batch", type=int, default=64)
    parser.add_argument("--embedders", default="minilm,onnx,hashing")
    args = parser.parse_args()
    rng = random.Random(11)
    texts = [memory(rng) for _ in range(args.memories)]
    words = sum(len(t.split()) for t in texts) / len(texts)
    print(f"{args.memories} memories of ~{words:.0f} words, batches of {args.batch}, bundled engine, 2 cores")
    for embedder in args.embedders.split(","):
        r = run(embedder, texts, args.batch)
        n = r["memories"]
        print(f"\nembedder {r['embedder']}: {n / r['seconds']:.1f} memories/s end to end ({r['seconds']:.1f} s)")
        print(f"  wrote {r['documents']} documents, {r['facts']} facts, {r['entities']} entities, "
              f"{r['triples']} triples")
        for stage in ("split", "extract", "embed", "write"):
            seconds = r[stage]
            rate = n / seconds if seconds else float("inf")
            label = {"extract": "NER+parse"}.get(stage, stage)
            print(f"  {label:<10} {seconds:7.2f} s  {rate:9.1f} memories/s on its own")
        slowest = min(n / r[s] for s in ("split", "extract", "embed", "write") if r[s])
        print(f"  end to end = {100 * (n / r['seconds']) / slowest:.0f}% of the slowest stage's own rate")
        cores = psutil.cpu_count() or 1
        print(f"  CPU: {r['cpu']:.1f} core-seconds (app and engine processes), {r['cpu'] / n * 1000:.0f} ms a memory: "
              f"on {cores} cores fully busy, at most {n / (r['cpu'] / cores):.1f} memories/s; the run used "
              f"{100 * r['cpu'] / (cores * r['seconds']):.0f}% of the cores")


if __name__ == "__main__":
    main()
