"""Retrieval quality on the gold set in benchmarks/data (real model, bundled engine).

Prints recall@5, recall@10 and MRR over the answerable questions for full text alone, vector alone,
naive RRF (vector + full text, equal weights) and the full pipeline (adds graph expansion), and how many
checks of the update scenarios hold (current and as-of views, forgetting; times captured during the run).
Not yet here (the rest of the search issue): abstention accuracy.

A question's relevant set is its gold memories; a ranking is the order in which their documents first
appear among the fact hits. recall@k = share of the relevant memories in the first k documents.

    .venv/bin/python benchmarks/quality.py [--embedder minilm]
"""

from __future__ import annotations

import argparse
import tempfile
from collections.abc import Callable
from pathlib import Path
from typing import Any

from gold import load_jsonl, run_update_scenarios

from graphmem.config import Settings
from graphmem.model import CallerContext
from graphmem.runtime import Runtime
from graphmem.search.fuse import rrf
from graphmem.search.hybrid import SearchOptions, search_facts
from graphmem.search.retrieve import fulltext_candidates, vector_candidates
from graphmem.store.driver import Tx
from graphmem.store.views import View

POOL = 30


def ranking(fact_ids: list[str], doc_of: dict[str, str]) -> list[str]:
    seen: list[str] = []
    for fact_id in fact_ids:
        doc = doc_of.get(fact_id)
        if doc is not None and doc not in seen:
            seen.append(doc)
    return seen


def metrics(rankings: list[tuple[list[str], set[str]]]) -> tuple[float, float, float]:
    r5 = sum(len(set(r[:5]) & rel) / len(rel) for r, rel in rankings) / len(rankings)
    r10 = sum(len(set(r[:10]) & rel) / len(rel) for r, rel in rankings) / len(rankings)
    mrr = sum(next((1 / (i + 1) for i, d in enumerate(r) if d in rel), 0.0) for r, rel in rankings) / len(rankings)
    return r5, r10, mrr


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--embedder", default="minilm")
    args = parser.parse_args()
    memories = load_jsonl("memories.jsonl")
    questions = [q for q in load_jsonl("questions.jsonl") if q["answers"]]
    with tempfile.TemporaryDirectory(prefix="graphmem-quality-") as tmp:
        settings = Settings(_env_file=None, neo4j_uri=None, data_dir=Path(tmp), embedder=args.embedder)  # type: ignore[call-arg]
        runtime = Runtime.open(settings)
        try:
            service, store = runtime.service, runtime.store
            ctx = CallerContext.for_namespaces("gold")
            docs = service.add_documents(ctx, "gold", [{"content": m["content"], "title": m["title"],
                                                        "source": f"gold:{m['id']}"} for m in memories])
            gold_of_doc = {d.id: (d.source or "")[5:] for d in docs}
            embedder = service.pipeline.embedder
            vectors = embedder.embed([q["question"] for q in questions])
            view, dialect = View(), store.dialect

            def signal(fn: Callable[[Tx, dict[str, Any], list[float]], list[str]]) -> list[tuple[list[str], set[str]]]:
                out = []
                for q, v in zip(questions, vectors, strict=True):
                    fact_ids = store.read(lambda tx, q=q, v=v: fn(tx, q, v))
                    rows = store.read(lambda tx, ids=fact_ids: tx.run("facts_hydrate", fact_ids=ids,
                                                                      namespaces=["gold"]))
                    gold_of_fact = {r["id"]: gold_of_doc[r["document_id"]] for r in rows}
                    out.append((ranking(fact_ids, gold_of_fact), set(q["answers"])))
                return out

            configs = {
                "full text": lambda tx, q, v: [c.fact_id for c in fulltext_candidates(
                    tx, dialect, ["gold"], view, q["question"], POOL)],
                "vector": lambda tx, q, v: [c.fact_id for c in vector_candidates(tx, dialect, ["gold"], view, v, POOL)],
                "naive RRF": lambda tx, q, v: [f.fact_id for f in rrf({
                    "vector": vector_candidates(tx, dialect, ["gold"], view, v, POOL),
                    "fulltext": fulltext_candidates(tx, dialect, ["gold"], view, q["question"], POOL)}, {})],
                "full pipeline": lambda tx, q, v: [h.fact_id for h in search_facts(
                    tx, dialect, ["gold"], q["question"], v, SearchOptions(limit=POOL), 0)],
            }
            print(f"gold set: {len(memories)} memories, {len(questions)} answerable questions; "
                  f"embedder {runtime.versions['embedder']} ({args.embedder})")
            print(f"{'signal':<14} {'recall@5':>9} {'recall@10':>10} {'MRR':>7}")
            for name, fn in configs.items():
                r5, r10, mrr = metrics(signal(fn))
                print(f"{name:<14} {r5:9.3f} {r10:10.3f} {mrr:7.3f}")
            checks = run_update_scenarios(service, "updates")
            print(f"update scenarios: {sum(c.passed for c in checks)}/{len(checks)} checks hold")
            for failed in (c for c in checks if not c.passed):
                print(f"  FAILED {failed.scenario}: {failed.check} got {failed.got}")
        finally:
            runtime.close()


if __name__ == "__main__":
    main()
