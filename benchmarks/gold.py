"""The gold set of benchmarks/data, and the runner of its update scenarios (used by quality.py and by
tests/test_real_models.py, so the benchmark and the test judge the scenarios the same way)."""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from graphmem.model import (
    CURRENT,
    CallerContext,
    DocumentInput,
    ForgetMode,
    ForgetRequest,
    RecallRequest,
    SearchRequest,
    UpdateInput,
    View,
)
from graphmem.results import AnswerStatus
from graphmem.service import MemoryService

DATA = Path(__file__).parent / "data"


def load_jsonl(name: str) -> list[dict[str, Any]]:
    return [json.loads(line) for line in (DATA / name).read_text().splitlines() if line.strip()]


def load_gold(service: MemoryService, namespace: str) -> dict[str, str]:
    """Add the gold memories to ``namespace`` in one batch; returns gold memory id by document id."""
    memories = load_jsonl("memories.jsonl")
    docs = [c.document for c in service.add_memories(CallerContext.for_namespaces(namespace), namespace, [
        DocumentInput(content=m["content"], title=m["title"], source=f"gold:{m['id']}") for m in memories])]
    return {d.id: (d.source or "")[len("gold:"):] for d in docs}


def document_ranking(document_ids: list[str], gold_of_doc: dict[str, str]) -> list[str]:
    """Gold memory ids in the order their documents first appear."""
    seen: list[str] = []
    for doc in document_ids:
        gold = gold_of_doc.get(doc)
        if gold is not None and gold not in seen:
            seen.append(gold)
    return seen


def metrics(rankings: list[tuple[list[str], set[str]]]) -> tuple[float, float, float]:
    """recall@5, recall@10 and MRR over (ranking, relevant set) pairs."""
    r5 = sum(len(set(r[:5]) & rel) / len(rel) for r, rel in rankings) / len(rankings)
    r10 = sum(len(set(r[:10]) & rel) / len(rel) for r, rel in rankings) / len(rankings)
    mrr = sum(next((1 / (i + 1) for i, d in enumerate(r) if d in rel), 0.0) for r, rel in rankings) / len(rankings)
    return r5, r10, mrr


def pipeline_rankings(service: MemoryService, namespace: str, gold_of_doc: dict[str, str],
                      limit: int) -> list[tuple[list[str], set[str]]]:
    """The full pipeline (``service.search``, default options) on every answerable question."""
    ctx = CallerContext.for_namespaces(namespace)
    out = []
    for q in (q for q in load_jsonl("questions.jsonl") if q["answers"]):
        hits = service.search(ctx, SearchRequest(query=q["question"], limit=limit))
        out.append((document_ranking([h.citation.document_id for h in hits], gold_of_doc), set(q["answers"])))
    return out


def abstention(service: MemoryService, namespace: str, questions: list[dict[str, Any]]) -> tuple[int, int]:
    """(correct, total): recall should find answerable questions and abstain on the others."""
    ctx = CallerContext.for_namespaces(namespace)
    correct = sum((service.recall(ctx, RecallRequest(query=q["question"])).answer_status is AnswerStatus.found)
                  == bool(q["answers"]) for q in questions)
    return correct, len(questions)


def scenarios() -> list[dict[str, Any]]:
    return list(json.loads((DATA / "updates.json").read_text())["scenarios"])


@dataclass
class CheckResult:
    scenario: str
    check: dict[str, Any]
    passed: bool
    got: list[str]


def run_update_scenarios(service: MemoryService, prefix: str) -> list[CheckResult]:
    """Run every scenario in a namespace of its own; each check after its step, with as-of times captured
    during the run."""
    results = []
    for scenario in scenarios():
        namespace = f"{prefix}-{scenario['id']}"
        ctx = CallerContext.for_namespaces(namespace)
        chains: dict[str, list[str]] = {}
        label: dict[str, str] = {}
        times: list[int] = []
        for step_number, step in enumerate(scenario["steps"]):
            ref = step["ref"]
            if step["op"] == "add":
                doc = service.add_memory(ctx, namespace, DocumentInput(content=step["content"])).document
                chains[ref] = [doc.id]
                times.append(doc.recorded_at)
            elif step["op"] == "update":
                doc = service.update_memory(ctx, chains[ref][-1], UpdateInput(content=step["content"])).document
                chains[ref].append(doc.id)
                times.append(doc.recorded_at)
            else:
                service.forget(ctx, chains[ref][-1], ForgetRequest(mode=ForgetMode(step.get("mode", "soft"))))
                times.append(service.core.clock())
            label.update({doc_id: f"{r}@{n}" for r, ids in chains.items() for n, doc_id in enumerate(ids, 1)})
            for check in (c for c in scenario["checks"] if c["after_step"] == step_number):
                view_spec = check["view"]
                view = CURRENT if view_spec == "current" else View(
                    as_of=times[view_spec["as_of_step"]], include_forgotten=view_spec.get("include_forgotten", False))
                hits = service.search(ctx, SearchRequest(query=check["question"], view=view, limit=10))
                got = [label.get(h.citation.document_id, "?") for h in hits]
                top_ok = check["expect"] is None or (bool(got) and got[0] == check["expect"])
                forbidden = set(got) & set(check.get("forbid", []))
                results.append(CheckResult(scenario["id"], check, top_ok and not forbidden, got))
    return results
