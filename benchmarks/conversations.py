"""Retrieval on the conversational development set (benchmarks/data/conversations), beside the baselines a
user would build instead: plain BM25 and plain dense retrieval over whole memories, and naive RRF of the two.

Each conversation is one namespace and each turn one memory (its header line first, no title), as the
held-out benchmark is stored. A question searches its own conversation. recall@k is the share of a question's
evidence turns among the first k memories; graphmem's rankings are ``search_documents`` (what the HTTP search
and ``search_memories`` serve) and fact ``search`` deduplicated to memories. Unanswerable questions are scored
by abstention (recall's ``answer_status``).

    .venv/bin/python benchmarks/conversations.py [--embedder minilm] [--limit 20]
"""

from __future__ import annotations

import argparse
import json
import re
import tempfile
from collections import defaultdict
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
from rank_bm25 import BM25Okapi

from graphmem.config import Settings
from graphmem.model import CallerContext, DocumentInput, RecallRequest, SearchRequest
from graphmem.results import AnswerStatus
from graphmem.runtime import Runtime
from graphmem.service import MemoryService

DATA = Path(__file__).parent / "data" / "conversations"
KS = (5, 10, 20)
KINDS = ("single-hop", "multi-hop", "temporal", "open-domain")
Ranker = Callable[[dict[str, Any]], list[str]]  # question -> turn ids, best first


def load(name: str) -> list[dict[str, Any]]:
    return [json.loads(line) for line in (DATA / name).read_text().splitlines() if line.strip()]


def namespace(conversation: str) -> str:
    return f"conv-{conversation}"


@dataclass
class DevSet:
    turns: list[dict[str, Any]]
    questions: list[dict[str, Any]]
    turn_of_doc: dict[str, str]  # document id -> turn id

    @classmethod
    def ingest(cls, service: MemoryService) -> DevSet:
        turns, questions = load("turns.jsonl"), load("questions.jsonl")
        by_conversation: dict[str, list[dict[str, Any]]] = defaultdict(list)
        for turn in turns:
            by_conversation[turn["conversation"]].append(turn)
        turn_of_doc: dict[str, str] = {}
        for conversation, items in by_conversation.items():
            ns = namespace(conversation)
            docs = [c.document for c in service.add_memories(CallerContext.for_namespaces(ns), ns, [
                DocumentInput(content=t["content"], source=f"dev:{t['id']}") for t in items])]
            turn_of_doc.update({d.id: (d.source or "")[len("dev:"):] for d in docs})
        return cls(turns, questions, turn_of_doc)


def dedup(ids: list[str]) -> list[str]:
    return list(dict.fromkeys(ids))


def words(text: str) -> list[str]:
    return re.findall(r"\w+", text.lower())


class Baselines:
    """Plain BM25 (rank_bm25's Okapi, lower-cased words) and plain dense (the same model as graphmem, one
    vector per whole memory, brute-force cosine), each over one conversation's memories."""

    def __init__(self, turns: list[dict[str, Any]], embed: Callable[[list[str]], list[list[float]]]) -> None:
        self.ids: dict[str, list[str]] = defaultdict(list)
        texts: dict[str, list[str]] = defaultdict(list)
        for turn in turns:
            self.ids[turn["conversation"]].append(turn["id"])
            texts[turn["conversation"]].append(turn["content"])
        self.bm25 = {c: BM25Okapi([words(t) for t in ts]) for c, ts in texts.items()}
        self.vectors = {c: np.asarray(embed(ts), dtype=np.float32) for c, ts in texts.items()}
        self.embed = embed

    def bm25_rank(self, q: dict[str, Any]) -> list[str]:
        scores = self.bm25[q["conversation"]].get_scores(words(q["question"]))
        return [self.ids[q["conversation"]][i] for i in np.argsort(-scores, kind="stable")]

    def dense_rank(self, q: dict[str, Any]) -> list[str]:
        vector = np.asarray(self.embed([q["question"]])[0], dtype=np.float32)
        scores = self.vectors[q["conversation"]] @ vector
        return [self.ids[q["conversation"]][i] for i in np.argsort(-scores, kind="stable")]

    def rrf_rank(self, q: dict[str, Any], k: int = 60) -> list[str]:
        fused: dict[str, float] = defaultdict(float)
        for ranking in (self.bm25_rank(q), self.dense_rank(q)):
            for rank, turn in enumerate(ranking, start=1):
                fused[turn] += 1 / (k + rank)
        return sorted(fused, key=lambda t: -fused[t])


def graphmem_rankers(service: MemoryService, dev: DevSet, limit: int) -> dict[str, Ranker]:
    def documents(q: dict[str, Any]) -> list[str]:
        ns = namespace(q["conversation"])
        hits = service.search_memories(CallerContext.for_namespaces(ns),
                                        SearchRequest(query=q["question"], limit=limit, namespaces=[ns]))
        return [dev.turn_of_doc[h.document_id] for h in hits]

    def facts(q: dict[str, Any]) -> list[str]:
        ns = namespace(q["conversation"])
        hits = service.search(CallerContext.for_namespaces(ns),
                              SearchRequest(query=q["question"], limit=100, namespaces=[ns]))
        return dedup([dev.turn_of_doc[h.citation.document_id] for h in hits])

    return {"graphmem search_documents": documents, "graphmem search (facts)": facts}


def recall_at(ranking: list[str], relevant: set[str], k: int) -> float:
    return len(set(ranking[:k]) & relevant) / len(relevant)


def table(rankers: dict[str, Ranker], questions: list[dict[str, Any]]) -> dict[str, dict[str, list[float]]]:
    """Per ranker: recall@5/10/20 overall and per kind."""
    answerable = [q for q in questions if q["answers"]]
    out: dict[str, dict[str, list[float]]] = {}
    for name, rank in rankers.items():
        rankings = [(rank(q), set(q["answers"]), q["kind"]) for q in answerable]
        rows = {"all": [sum(recall_at(r, rel, k) for r, rel, _ in rankings) / len(rankings) for k in KS]}
        for kind in KINDS:
            chosen = [(r, rel) for r, rel, kd in rankings if kd == kind]
            rows[kind] = [sum(recall_at(r, rel, 10) for r, rel in chosen) / len(chosen)] if chosen else [0.0]
        out[name] = rows
    return out


def print_table(title: str, results: dict[str, dict[str, list[float]]]) -> None:
    print(title)
    print(f"{'retriever':<28} {'r@5':>6} {'r@10':>6} {'r@20':>6}   " + " ".join(f"{k:>11}" for k in KINDS)
          + "   (per kind: recall@10)")
    for name, rows in results.items():
        print(f"{name:<28} " + " ".join(f"{v:6.3f}" for v in rows["all"]) + "   "
              + " ".join(f"{rows[k][0]:11.3f}" for k in KINDS))


def abstention(service: MemoryService, questions: list[dict[str, Any]]) -> tuple[int, int]:
    """Unanswerable questions on which recall abstains (answer_status no_confirmed_answer)."""
    unanswerable = [q for q in questions if not q["answers"]]
    abstained = 0
    for q in unanswerable:
        ns = namespace(q["conversation"])
        result = service.recall(CallerContext.for_namespaces(ns), RecallRequest(query=q["question"],
                                                                                namespaces=[ns]))
        abstained += result.answer_status is AnswerStatus.no_confirmed_answer
    return abstained, len(unanswerable)


def run(runtime: Runtime, limit: int = 20) -> dict[str, dict[str, list[float]]]:
    """Ingest the set into ``runtime``, print the table and abstention; returns the table."""
    service = runtime.service
    dev = DevSet.ingest(service)
    baselines = Baselines(dev.turns, service.pipeline.embedder.embed)
    rankers: dict[str, Ranker] = {"plain BM25 (whole memories)": baselines.bm25_rank,
                                  "plain dense (whole memories)": baselines.dense_rank,
                                  "naive RRF of the two (k=60)": baselines.rrf_rank,
                                  **graphmem_rankers(service, dev, limit)}
    results = table(rankers, dev.questions)
    answerable = sum(1 for q in dev.questions if q["answers"])
    print_table(f"development set: {len(dev.turns)} memories in {len({t['conversation'] for t in dev.turns})} "
                f"namespaces, {answerable} answerable questions", results)
    abstained, total = abstention(service, dev.questions)
    print(f"abstention on the {total} unanswerable questions: {abstained}/{total}")
    return results


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--embedder", default="minilm")
    parser.add_argument("--limit", type=int, default=20)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="graphmem-conversations-") as tmp:
        settings = Settings(_env_file=None, neo4j_uri=None, data_dir=Path(tmp), embedder=args.embedder)  # type: ignore[call-arg]
        with Runtime.open(settings) as runtime:
            run(runtime, args.limit)


if __name__ == "__main__":
    main()
