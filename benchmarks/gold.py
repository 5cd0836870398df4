"""The gold set of benchmarks/data, and the runner of its update scenarios (used by quality.py and by
tests/test_real_models.py, so the benchmark and the test judge the scenarios the same way)."""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from graphmem.model import CallerContext
from graphmem.service import MemoryService
from graphmem.store.views import View

DATA = Path(__file__).parent / "data"


def load_jsonl(name: str) -> list[dict[str, Any]]:
    return [json.loads(line) for line in (DATA / name).read_text().splitlines() if line.strip()]


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
                doc = service.add_document(ctx, namespace, step["content"])
                chains[ref] = [doc.id]
                times.append(doc.recorded_at)
            elif step["op"] == "update":
                doc = service.update_document(ctx, chains[ref][-1], step["content"])
                chains[ref].append(doc.id)
                times.append(doc.recorded_at)
            else:
                service.forget(ctx, chains[ref][-1], step.get("mode", "soft"))
                times.append(service.clock())
            label.update({doc_id: f"{r}@{n}" for r, ids in chains.items() for n, doc_id in enumerate(ids, 1)})
            for check in (c for c in scenario["checks"] if c["after_step"] == step_number):
                view_spec = check["view"]
                view = View() if view_spec == "current" else View(
                    as_of=times[view_spec["as_of_step"]], include_forgotten=view_spec.get("include_forgotten", False))
                hits = service.search(ctx, check["question"], view=view, limit=10)
                got = [label.get(h.citation.document_id, "?") for h in hits]
                top_ok = check["expect"] is None or (bool(got) and got[0] == check["expect"])
                forbidden = set(got) & set(check.get("forbid", []))
                results.append(CheckResult(scenario["id"], check, top_ok and not forbidden, got))
    return results
