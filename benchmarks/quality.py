"""Retrieval quality on the gold set in benchmarks/data and on the conversational development set in
benchmarks/data/conversations (real model, bundled engine), beside the baselines a user would build instead.

Gold set: recall@5, recall@10 and MRR over the answerable questions for graphmem's fact signals alone (full
text, vector, their naive RRF with equal weights and k = 60), the full pipeline (``service.search`` with its
defaults: weighted RRF, graph expansion, memory prior), ``search_documents`` (limit 10), and plain BM25, plain
dense and their naive RRF over whole memories; then recall's abstention accuracy and the update scenarios
(current and as-of views, forgetting; times captured during the run). Development set: ``conversations.run``
(its docstring says what it prints).

A question's relevant set is its gold memories; a ranking is the order in which their documents first
appear among the fact hits. recall@k = share of the relevant memories in the first k documents. Abstention:
``recall`` should answer ``found`` on the answerable questions and ``no_confirmed_answer`` on the
unanswerable ones; it is also run on off-topic probes written here (not part of the gold set).

    .venv/bin/python benchmarks/quality.py [--embedder minilm] [--misses]
"""

from __future__ import annotations

import argparse
import tempfile
from collections.abc import Callable
from pathlib import Path
from typing import Any

import conversations

from gold import abstention, document_ranking, load_gold, load_jsonl, metrics, pipeline_rankings, run_update_scenarios
from graphmem.config import Settings
from graphmem.model import CURRENT, CallerContext, SearchRequest
from graphmem.results import Signal
from graphmem.runtime import Runtime
from graphmem.search.fuse import rrf
from graphmem.search.retrieve import Candidate, fulltext_candidates, vector_candidates
from graphmem.service import MemoryService
from graphmem.store.driver import Tx

POOL = 60  # candidates per signal, and fact hits of the full pipeline
NAMESPACE = "gold"
OFF_TOPIC = [
    {"question": "What is the boiling point of mercury?", "answers": []},
    {"question": "Who won the 1998 football world cup?", "answers": []},
    {"question": "How do I bake sourdough bread at home?", "answers": []},
    {"question": "What is the capital of Australia?", "answers": []},
    {"question": "How many moons does Jupiter have?", "answers": []},
]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--embedder", default="minilm")
    parser.add_argument("--misses", action="store_true", help="list questions the full pipeline misses in its top 10")
    args = parser.parse_args()
    questions = load_jsonl("questions.jsonl")
    answerable = [q for q in questions if q["answers"]]
    with tempfile.TemporaryDirectory(prefix="graphmem-quality-") as tmp:
        settings = Settings(_env_file=None, neo4j_uri=None, data_dir=Path(tmp), embedder=args.embedder)  # type: ignore[call-arg]
        with Runtime.open(settings) as runtime:
            service, store = runtime.service, runtime.store
            gold_of_doc = load_gold(service, NAMESPACE)
            vectors = service.pipeline.embedder.embed([q["question"] for q in answerable])
            view, dialect = CURRENT, store.dialect

            def signal(fn: Callable[[Tx, str, list[float]], list[Candidate]]) -> list[tuple[list[str], set[str]]]:
                out = []
                for q, v in zip(answerable, vectors, strict=True):
                    fact_ids = [c.id for c in store.read(lambda tx, q=q, v=v: fn(tx, q["question"], v))]
                    rows = store.read(lambda tx, ids=fact_ids, v=v: tx.collected(
                        "facts_hydrate", fact_ids=ids, namespaces=[NAMESPACE], vector=v, with_embedding=False))
                    doc_of = {r["id"]: r["document_id"] for r in rows}
                    out.append((document_ranking([doc_of[f] for f in fact_ids], gold_of_doc), set(q["answers"])))
                return out

            def vector(tx: Tx, text: str, v: list[float]) -> list[Candidate]:
                return vector_candidates(tx, dialect, [NAMESPACE], view, v, POOL)

            def fulltext(tx: Tx, text: str, v: list[float]) -> list[Candidate]:
                return fulltext_candidates(tx, dialect, [NAMESPACE], view, text, POOL)

            def naive(tx: Tx, text: str, v: list[float]) -> list[Candidate]:
                fused = rrf({Signal.vector: vector(tx, text, v), Signal.fulltext: fulltext(tx, text, v)}, {})
                return [Candidate(f.id, f.score, rank) for rank, f in enumerate(fused, start=1)]

            results = {name: metrics(signal(fn)) for name, fn in
                       (("facts: full text", fulltext), ("facts: vector", vector), ("facts: naive RRF", naive))}
            full = pipeline_rankings(service, NAMESPACE, gold_of_doc, POOL)
            results["full pipeline"] = metrics(full)
            results["search_documents"] = metrics(document_rankings(service, NAMESPACE, gold_of_doc, answerable))
            results.update(whole_memory_baselines(service.pipeline.embedder.embed, answerable))
            print(f"gold set: {len(gold_of_doc)} memories, {len(answerable)} answerable and "
                  f"{len(questions) - len(answerable)} unanswerable questions; "
                  f"embedder {runtime.versions['embedder']} ({args.embedder})")
            print(f"{'signal':<28} {'recall@5':>9} {'recall@10':>10} {'MRR':>7}")
            for name, (r5, r10, mrr) in results.items():
                print(f"{name:<28} {r5:9.3f} {r10:10.3f} {mrr:7.3f}")
            singles = [m for name, m in results.items() if name not in ("full pipeline", "search_documents")]
            beats = all(results["full pipeline"][i] > max(m[i] for m in singles) for i in range(3))
            print(f"full pipeline beats every single signal and naive RRF on all three: {'yes' if beats else 'NO'}")
            if args.misses:
                for q, (ranking, relevant) in zip(answerable, full, strict=True):
                    ranks = sorted(ranking.index(g) + 1 if g in ranking else 999 for g in relevant)
                    if ranks[-1] > 10:
                        print(f"  miss {q['id']}: answers at document ranks {ranks}: {q['question']}")
            correct, total = abstention(service, NAMESPACE, questions)
            unanswerable = [q for q in questions if not q["answers"]]
            abstained, _ = abstention(service, NAMESPACE, unanswerable)
            probes, probe_total = abstention(service, NAMESPACE, OFF_TOPIC)
            print(f"abstention accuracy (recall answer_status): {correct}/{total} = {correct / total:.3f} "
                  f"on the gold questions; abstains on {abstained}/{len(unanswerable)} unanswerable gold "
                  f"questions and {probes}/{probe_total} off-topic probes")
            checks = run_update_scenarios(service, "updates")
            print(f"update scenarios: {sum(c.passed for c in checks)}/{len(checks)} checks hold")
            for failed in (c for c in checks if not c.passed):
                print(f"  FAILED {failed.scenario}: {failed.check} got {failed.got}")
            print()
            conversations.run(runtime)


def document_rankings(service: MemoryService, namespace: str, gold_of_doc: dict[str, str],
                      answerable: list[dict[str, Any]]) -> list[tuple[list[str], set[str]]]:
    """``service.search_documents`` (limit 10, what the HTTP search serves) on every answerable question."""
    ctx = CallerContext.for_namespaces(namespace)
    return [([gold_of_doc[h.document_id] for h in service.search_memories(
        ctx, SearchRequest(query=q["question"], limit=10, namespaces=[namespace]))], set(q["answers"]))
        for q in answerable]


def whole_memory_baselines(embed: Callable[[list[str]], list[list[float]]],
                           answerable: list[dict[str, Any]]) -> dict[str, tuple[float, float, float]]:
    """Plain BM25, plain dense and their naive RRF over whole gold memories (the development set's baselines)."""
    memories = [{"id": m["id"], "conversation": "gold", "content": m["content"]} for m in load_jsonl("memories.jsonl")]
    baselines = conversations.Baselines(memories, embed)
    asked = [{"conversation": "gold", "question": q["question"]} for q in answerable]
    rankers = {"plain BM25 (whole memories)": baselines.bm25_rank, "plain dense (whole memories)": baselines.dense_rank,
               "naive RRF of the two (k=60)": baselines.rrf_rank}
    return {name: metrics([(rank(a), set(q["answers"])) for a, q in zip(asked, answerable, strict=True)])
            for name, rank in rankers.items()}


if __name__ == "__main__":
    main()
