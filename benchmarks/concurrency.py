"""Concurrency benchmark: many writers, and writers beside readers, against a real ``graphmem serve``.

Built on ``benchmarks/load.py`` (its serve, its clients, its statistics). Rate limits are off. First a warm-up
of ``--warm-up`` seconds (60) of the mixed phase's load, reported but not judged: a new engine compiles its hot
code for minutes (the JIT's compiler threads took most of the engine's CPU in the first hundreds of writes).
Then four phases, each on fresh namespaces of the same server, in this order:

1. ``idle``: one client remembers ``--idle`` memories one after the other: a lone caller's latency.
2. ``writers``: ``--writers`` clients (16) each remember one memory at a time, closed loop, for ``--seconds``,
   each in its own namespace (``--one-namespace``: all in one; a shared pass writes one transaction a namespace).
3. ``jobs``: as many memories as the writers got acknowledged, of the same kind, sent as ``POST /v1/jobs`` of 64
   memories by 4 clients at once, timed until every job is done: what batching gives on the same server.
4. ``mixed``: ``--mixed-writers`` (8) remember while ``--readers`` (8) search (``GET /v1/memories/search``),
   for ``--seconds``.

For each phase: p50/p95 and acknowledged calls per second per operation, the CPU seconds of the app and of the
engine (their share of the phase), and the sizes of the NLP passes the server's coalescer formed (from
``/metrics``; "n/a" on a server without one). The goals printed are those of the concurrency issue: writers'
throughput at least 80% of the jobs', remember p95 at most 1 s with 16 writers, search p95 at most 150 ms in the
mixed phase.

    .venv/bin/python benchmarks/concurrency.py [--writers 16] [--readers 8] [--seconds 60] [--json out.json]
        [--warm-up 60] [--phases idle,writers,jobs,mixed] [--one-namespace]
        [--url http://host:port --token ADMIN_TOKEN] [--embedder onnx]
"""

from __future__ import annotations

import argparse
import asyncio
import json
import random
import re
import tempfile
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import httpx
import psutil

from load import (
    Client,
    LoadOptions,
    Meter,
    Processes,
    Run,
    Serve,
    _credential,
    _gather_limited,
    local_processes,
    memory_text,
)

JOB_SIZE = 64
JOB_CLIENTS = 4
PASS_METRIC = "graphmem_remember_pass_memories"
PHASES = ("idle", "writers", "jobs", "mixed")


@dataclass
class Phase:
    name: str
    seconds: float = 0.0
    operations: dict[str, dict[str, Any]] = field(default_factory=dict)
    cpu_s: dict[str, float] = field(default_factory=dict)
    passes: dict[str, float] | None = None  # count, sum, mean, and the share of memories by pass size

    def line(self, op: str) -> str:
        s = self.operations[op]
        return (f"  {op:<10} {s['ok']:>6} ok  p50 {s['p50_ms']!s:>8} ms  p95 {s['p95_ms']!s:>8} ms  "
                f"{s['ok_per_s']!s:>7}/s  errors {s['statuses'] or 0} {s['exceptions'] or ''}")


def pass_histogram(url: str) -> dict[str, float] | None:
    """The coalescer's pass sizes so far: bucket bound (and "sum", "count") → value; None without the metric."""
    text = httpx.get(f"{url}/metrics", timeout=30).text
    found: dict[str, float] = {}
    pattern = re.compile(rf'{PASS_METRIC}_(?:bucket{{le="([^"]+)"}}|(sum|count)) (\S+)')
    for line in text.splitlines():
        if m := pattern.match(line):
            found[m.group(1) or m.group(2)] = float(m.group(3))
    return found or None


def pass_delta(before: dict[str, float] | None, after: dict[str, float] | None) -> dict[str, float] | None:
    if before is None or after is None:
        return None
    delta = {key: after[key] - before.get(key, 0.0) for key in after}
    count = delta.get("count", 0.0)
    return {**delta, "mean": round(delta["sum"] / count, 1) if count else 0.0}


async def _closed_loop(run: Run, clients: list[Client], op: str, seconds: float, seed: int) -> None:
    run.deadline = time.monotonic() + seconds

    async def loop(client: Client) -> None:
        rng = random.Random(f"{seed}-{op}-{client.index}")
        while time.monotonic() < run.deadline:
            if op == "remember":
                await run.remember(client, rng)
            else:
                await run.search(client, rng)

    await asyncio.gather(*(loop(client) for client in clients))


async def _clients(run: Run, token: str, prefix: str, count: int, shared: bool = False) -> list[Client]:
    """``count`` clients, each with its own credential, in a namespace each (``shared``: all in one)."""
    names = [f"{prefix}-{run.id}" if shared else f"{prefix}-{run.id}-{i:03d}" for i in range(count)]
    tokens = await _gather_limited([_credential(run, token, f"{prefix}-{run.id}-{i:03d}", ns)
                                    for i, ns in enumerate(names)], 8)
    return [Client(i, ns, t) for i, (ns, t) in enumerate(zip(names, tokens, strict=True))]


async def _jobs(run: Run, client: Client, memories: int, seed: int) -> int:
    """``memories`` memories as jobs of ``JOB_SIZE``, ``JOB_CLIENTS`` at a time, each waited for until done."""
    rng = random.Random(f"{seed}-jobs")
    texts = [memory_text(rng, f"job-{i}") for i in range(memories)]
    batches = [texts[i:i + JOB_SIZE] for i in range(0, len(texts), JOB_SIZE)]
    done = 0

    async def one(batch: list[str]) -> None:
        nonlocal done
        response = await run.call("job", "POST", "/v1/jobs", client.token,
                                  json={"memories": [{"content": text} for text in batch]})
        if response is None or response.status_code != 202:
            return
        job_id = response.json()["job_id"]
        while True:
            await asyncio.sleep(0.2)
            status = await run.http.get(f"/v1/jobs/{job_id}", headers={"Authorization": f"Bearer {client.token}"})
            state = status.json().get("status")
            if state in ("done", "failed"):
                done += len(batch) if state == "done" else 0
                return

    await _gather_limited([one(batch) for batch in batches], JOB_CLIENTS)
    return done


async def _measure(url: str, token: str, args: argparse.Namespace,
                   processes: Callable[[], Processes] | None) -> list[Phase]:
    options = LoadOptions(clients=0, seconds=args.seconds, timeout_s=120, drain_s=120)
    limits = httpx.Limits(max_connections=None, max_keepalive_connections=64)
    phases: list[Phase] = []
    async with httpx.AsyncClient(base_url=url, timeout=options.timeout_s, limits=limits) as http:

        async def phase(name: str, work: Callable[[Run], Awaitable[float | None]]) -> Phase:
            run = Run(url, options, http)
            meter = Meter(processes)
            meter.sample()
            before = pass_histogram(url)
            began = time.monotonic()
            extra = await work(run)
            result = Phase(name, round(time.monotonic() - began, 1))
            meter.sample()
            result.cpu_s = meter.cpu_seconds()
            result.passes = pass_delta(before, pass_histogram(url))
            seconds = extra if isinstance(extra, float) else result.seconds
            result.operations = {op: stats.summary(seconds) for op, stats in run.result.operations.items()
                                 if stats.latencies or stats.statuses or stats.exceptions}
            phases.append(result)
            print(report(result), flush=True)
            return result

        async def idle(run: Run) -> None:
            (client,) = await _clients(run, token, "idle", 1)
            rng = random.Random(f"{args.seed}-idle")
            for _ in range(args.idle):
                await run.remember(client, rng)

        async def writers(run: Run) -> None:
            await _closed_loop(run, await _clients(run, token, "writer", args.writers, args.one_namespace), "remember",
                               args.seconds, args.seed)

        async def warm_up(run: Run) -> None:
            writing = await _clients(run, token, "warm-w", args.mixed_writers)
            reading = await _clients(run, token, "warm-r", args.readers)
            await asyncio.gather(_closed_loop(run, writing, "remember", args.warm_up, args.seed),
                                 _closed_loop(run, reading, "search", args.warm_up, args.seed))

        if args.warm_up:
            await phase("warm-up", warm_up)
        if "idle" in args.phases:
            await phase("idle", idle)
        written = await phase("writers", writers) if "writers" in args.phases else Phase("writers")

        async def jobs(run: Run) -> float:
            (client,) = await _clients(run, token, "jobs", 1)
            began = time.monotonic()
            done = await _jobs(run, client, written.operations.get("remember", {}).get("ok", 0), args.seed)
            run.stats("job memories").latencies.extend([0.0] * done)  # counted per memory, for the rate
            return time.monotonic() - began

        if "jobs" in args.phases and "writers" in args.phases:
            await phase("jobs", jobs)

        async def mixed(run: Run) -> None:
            writing = await _clients(run, token, "mixed-w", args.mixed_writers)
            reading = await _clients(run, token, "mixed-r", args.readers)
            rng = random.Random(f"{args.seed}-mixed-seed")
            await _gather_limited([run.remember(c, rng, "remember:setup") for c in reading for _ in range(3)], 8)
            run.stats("remember:setup").latencies.clear()
            await asyncio.gather(_closed_loop(run, writing, "remember", args.seconds, args.seed),
                                 _closed_loop(run, reading, "search", args.seconds, args.seed))

        if "mixed" in args.phases:
            await phase("mixed", mixed)
    return phases


def report(phase: Phase) -> str:
    lines = [f"\n{phase.name}: {phase.seconds} s"]
    lines += [phase.line(op) for op in phase.operations if not op.endswith(":setup")]
    total = sum(phase.cpu_s.get(role, 0.0) for role in ("app", "engine"))
    if total:
        lines.append("  CPU: " + ", ".join(f"{role} {phase.cpu_s.get(role, 0.0):.1f} s "
                                           f"({100 * phase.cpu_s.get(role, 0.0) / total:.0f}%)"
                                           for role in ("app", "engine"))
                     + f"; {total / phase.seconds / (psutil.cpu_count() or 1) * 100:.0f}% of the cores")
    if phase.passes is None:
        lines.append("  passes: n/a (the server reports no pass sizes)")
    else:
        shares = {bound: value for bound, value in phase.passes.items() if bound not in ("sum", "count", "mean")}
        lines.append(f"  passes: {phase.passes['count']:.0f}, {phase.passes['mean']} memories each on average; "
                     "passes of at most N: " + ", ".join(f"{b}: {v:.0f}" for b, v in shares.items() if v))
    return "\n".join(lines)


def goals(phases: dict[str, Phase]) -> list[str]:
    """The issue's goals, for the phases that ran."""
    found = []
    if "jobs" in phases:
        writers, jobs = phases["writers"].operations, phases["jobs"].operations
        rate, job_rate = writers["remember"]["ok_per_s"], jobs.get("job memories", {}).get("ok_per_s") or 0
        share = rate / job_rate if job_rate else 0.0
        found.append(f"writers' throughput {rate}/s = {100 * share:.0f}% of jobs' {job_rate}/s (goal: at least 80%)")
    if "writers" in phases:
        found.append(f"remember p95 among the writers: {phases['writers'].operations['remember']['p95_ms']} ms "
                     "(goal: at most 1,000)")
    if "mixed" in phases:
        found.append(f"search p95 beside writers: {phases['mixed'].operations['search']['p95_ms']} ms "
                     "(goal: at most 150)")
    if "idle" in phases:
        idle = phases["idle"].operations["remember"]
        found.append(f"idle remember p50 over {idle['ok']}: {idle['p50_ms']} ms (p95 {idle['p95_ms']} ms)")
    return found


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--writers", type=int, default=16)
    parser.add_argument("--mixed-writers", type=int, default=8)
    parser.add_argument("--readers", type=int, default=8)
    parser.add_argument("--seconds", type=float, default=60.0)
    parser.add_argument("--idle", type=int, default=100)
    parser.add_argument("--warm-up", type=float, default=60.0)
    parser.add_argument("--phases", type=lambda text: set(text.split(",")), default=set(PHASES),
                        help="which of idle,writers,jobs,mixed to run (jobs needs writers)")
    parser.add_argument("--one-namespace", action="store_true",
                        help="the writers share one namespace (by default each has its own, as load.py's clients)")
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--url")
    parser.add_argument("--token")
    parser.add_argument("--embedder")
    parser.add_argument("--json", type=Path)
    args = parser.parse_args()
    off = {"GRAPHMEM_RATE_LIMIT_READS": "0", "GRAPHMEM_RATE_LIMIT_WRITES": "0"}
    with tempfile.TemporaryDirectory(prefix="graphmem-concurrency-") as tmp:
        serve = None
        if args.url:
            url, token, processes = args.url, args.token, local_processes(args.url)
        else:
            serve = Serve(Path(tmp) / "data", embedder=args.embedder, env=off)
            serve.start()
            url, token, processes = serve.url, serve.token, serve.processes
        print(f"graphmem at {url}: phases {', '.join(p for p in PHASES if p in args.phases)}; {args.writers} "
              f"writers; jobs of {JOB_SIZE}; {args.mixed_writers} writers beside {args.readers} readers; "
              f"{args.seconds:.0f} s a phase; rate limits off", flush=True)
        try:
            measured = asyncio.run(_measure(url, token, args, processes))
        finally:
            if serve is not None:
                serve.stop()
    print("\n" + "\n".join(goals({phase.name: phase for phase in measured})))
    if args.json:
        args.json.write_text(json.dumps([phase.__dict__ for phase in measured], indent=1, default=str))


if __name__ == "__main__":
    main()
