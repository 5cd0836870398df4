"""Load with a consistency check: many clients at once against a real ``graphmem serve``, then a check that every
write the server acknowledged is there exactly once.

What it measures. ``--clients`` closed-loop clients (each sends its next call when the last one is answered, no
think time), each with its own credential and namespace (made through ``POST /api/credentials`` with the admin
token), draw each call from a fixed mix: remember 20% (``POST /v1/remember``), search 40% (``GET
/v1/memories/search``), recall 20% (``POST /v1/recall/context``), graph export 5% (``GET /v1/graph?seed=query``),
MCP tool calls 10% (``search_memories`` or ``recall_context`` through the official ``mcp`` SDK client over
Streamable HTTP, one session per client) and GraphQL 5% (a ``search`` query). ``--updaters`` more clients (5)
share one namespace and update the same few memories with ``expected_version`` (``PATCH /v1/memories/{id}``); a
409 is the compare-and-swap they lost: they read the latest version again and retry. The figures are the
server's as the clients see them under that concurrency: p50/p95/p99 latency and answered calls per second per
operation, the errors by status and the exceptions by type, the resident memory of the app and of its engine
(the Java child of serve) at the start, the middle and the end, and the CPU seconds each of them, this load
generator and every other process on the machine spent, so a slow figure can be told from a starved generator
(the event loop's lag is printed too) or from a machine shared with other work. The clients run as asyncio tasks
in one thread (httpx): on two cores shared with the server, 50 threads would cost more CPU and GIL turns than
one event loop, and the generator is meant to take as little of the server's CPU as it can. For a serve it
started, it also counts the WARNING and ERROR lines of the server's log: failures no client answer shows.

Every remember carries a ``request_id``; a call that gets no answer (a connection error, a timeout, a 5xx) or a
429 is sent again with the same ``request_id`` (updates likewise), so a write is acknowledged once, and every
acknowledged write is recorded (id, namespace, request_id, content digest). Afterwards the consistency check,
each printed as pass or fail (the exit status is 1 when one fails; the goals below only print):

* every client finished within the run's bound (``seconds`` + ``drain_s`` + twice the call timeout + 60 s; a
  client still running then is cancelled and named with the operation it was in);
* every acknowledged memory reads back (``GET /v1/memories/{id}``) with the content it was sent with;
* exactly once: each namespace's memories, listed with its own credential, hold one memory per request and per
  content (no duplicate made by a retry);
* no forked version chain: the history of each updated memory is versions 1..n, each version's parent the one
  before it, and every acknowledged update is in it, once;
* the counts per namespace match what the clients recorded;
* in sum, 0 acknowledged memories lost and 0 duplicated (a copy beyond the first of a request or a content, or
  a version nobody acknowledged), and no write left without an answer.

By default it starts ``graphmem serve`` on 127.0.0.1 on a new data directory (the default embedder unless
``--embedder``) and stops it afterwards; ``--url`` with ``--token`` (an admin token that may create credentials)
points it at a running server instead. ``--kill-at SECONDS`` kills the serve it started with SIGKILL at that
time and starts it again on the same data directory while the clients go on (retrying with the same
request_ids). The goals printed beside the figures are those of 50 clients for 5 minutes: no errors other than
409 and 429, and less than 10% growth of the app's and the engine's resident memory from the middle to the end.

``--processes N`` runs the deployment of the README's "Several app processes" instead of one serve: the bundled
engine started once (``graphmem engine start``), a ``redis-server`` on a free port, N ``graphmem serve``
processes attached to that engine (the one serve's environment, plus the Redis URL and one shared
``GRAPHMEM_CURSOR_SECRET``) and nginx from deploy/nginx.conf with one upstream ``server`` line per process; the
load goes to nginx, and everything is stopped at the end (the engine with ``graphmem engine stop``). The rate
limits count in Redis at 1,000,000 a window (``RATE_LIMIT_NEVER``): every call pays the shared count's round
trip to Redis, as a deployment that shares its limits does, and none is refused, so a 429 cannot shape the
throughput of 1, 2 and 3 processes differently (turned off, limits would leave Redis out of the path being
measured). The CPU seconds are summed over the N app processes (and each one's share printed), beside the
engine's, nginx's (master and workers), Redis's, the generator's and every other process's, so the report
says which side takes the cores first. Use the same ``--processes`` value for 1 process too: the figures
then differ by the process count alone, not by nginx and Redis.

``--cost-seconds S`` (any mode) adds, after the consistency check, each operation of the mix alone for S
seconds with every client: the CPU per answered call of the app, the engine and the rest, which the mix
cannot give (its CPU is one sum over six kinds of call); the phase's writes are not part of the check.

    .venv/bin/python benchmarks/load.py [--clients 50] [--seconds 300] [--seed 1] [--json out.json]
        [--url http://host:port --token ADMIN_TOKEN] [--kill-at SECONDS] [--embedder hashing]
        [--processes N] [--cost-seconds S]

Other code calls ``run_load(url, token, LoadOptions(...), at_mid_run=...)`` (a load against any URL; the
callback runs at ``mid_run_at`` seconds, for a fault test to kill and restart a server) or ``serve_and_load``
(a serve of its own on a new data directory, as the command does). Both return a ``LoadResult``.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import hashlib
import json
import os
import random
import re
import secrets
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
import uuid
from collections import Counter
from collections.abc import Callable, Mapping, Sequence
from dataclasses import asdict, dataclass, field, replace
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import httpx
import psutil
from ingest import fill, sentence  # the same generated sentences as the ingest benchmark (a script beside this one)
from mcp import Client as McpClient
from mcp.client.streamable_http import streamable_http_client
from mcp.shared._httpx_utils import create_mcp_http_client

from services import clean_environment, nginx_process, redis_process  # as the tests run them (beside this one)

MIX: dict[str, float] = {"remember": 0.20, "search": 0.40, "recall": 0.20, "graph": 0.05, "mcp": 0.10,
                         "graphql": 0.05}
EXPECTED_STATUSES = (409, 429)  # a lost compare-and-swap, a rate limit: answers the clients are built for
GOAL_RSS_GROWTH = 0.10
MIB = 1024 * 1024
RATE_LIMIT_NEVER = "1000000"  # --processes: limits counted in Redis, never reached (see the docstring)

QUESTIONS = ["Who works at {o}?", "Where did {p} move?", "Which team uses {t}?", "What happened in {c}?",
             "Who leads the platform team at {o}?", "When does {o} ship the {t} release?"]
GRAPHQL_SEARCH = ("query($q: String!) { search(query: $q, first: 5) "
                  "{ edges { score node { ... on Memory { id content } } } } }")

Processes = dict[str, psutil.Process | list[psutil.Process] | None]  # role -> its process (or processes)


# ---- options and records ------------------------------------------------------------------------------------


@dataclass(frozen=True)
class LoadOptions:
    """One load's shape. ``drain_s``: how long after the end a write without an answer is still retried (a write
    given up on could be stored without the client knowing, which the count check would then flag)."""

    clients: int = 50
    seconds: float = 300.0
    seed: int = 1
    updaters: int = 5
    shared_memories: int = 3
    setup_memories: int = 2  # per client, before the clock starts: reads have something to find from the start
    timeout_s: float = 60.0
    drain_s: float = 180.0
    mid_run_at: float | None = None  # None: half of ``seconds``
    sample_every_s: float = 10.0
    cost_seconds: float = 0.0  # after the check, each operation alone this long: its CPU per call (0: none)


@dataclass(frozen=True)
class Ack:
    """An acknowledged remember."""

    id: str
    namespace: str
    request_id: str
    digest: str


@dataclass(frozen=True)
class UpdateAck:
    """An acknowledged update of a shared memory."""

    chain_id: str
    id: str
    version: int
    parent_id: str | None
    request_id: str


@dataclass
class Check:
    name: str
    passed: bool
    detail: str


@dataclass
class OpStats:
    """One operation's answered calls (2xx latencies), its other answers by status, and its exceptions."""

    latencies: list[float] = field(default_factory=list)
    statuses: Counter[int] = field(default_factory=Counter)
    exceptions: Counter[str] = field(default_factory=Counter)
    retries: int = 0

    def summary(self, seconds: float) -> dict[str, Any]:
        """Counts and percentiles; ``seconds`` 0 for calls outside the timed run (no rate)."""
        ordered = sorted(self.latencies)
        calls = len(ordered) + sum(self.statuses.values()) + sum(self.exceptions.values())
        return {"calls": calls, "ok": len(ordered), "p50_ms": _percentile(ordered, 50),
                "p95_ms": _percentile(ordered, 95), "p99_ms": _percentile(ordered, 99),
                "ok_per_s": round(len(ordered) / seconds, 2) if seconds > 0 else None,
                "statuses": {str(k): v for k, v in sorted(self.statuses.items())},
                "exceptions": dict(self.exceptions), "retries": self.retries}


def _percentile(ordered: list[float], pct: float) -> float | None:
    """Nearest-rank percentile, in milliseconds."""
    if not ordered:
        return None
    rank = max(1, -(-len(ordered) * pct // 100))
    return round(ordered[int(rank) - 1] * 1000, 1)


@dataclass
class Client:
    index: int
    namespace: str
    token: str
    sequence: int = 0
    mcp: McpSession | None = None
    doing: tuple[str, float] = ("starting", 0.0)  # the operation under way and when it began (monotonic)


@dataclass
class LoadResult:
    """Everything a run measured and checked; ``passed`` is the consistency check's verdict."""

    url: str
    options: LoadOptions
    seconds: float = 0.0
    operations: dict[str, OpStats] = field(default_factory=dict)
    acks: list[Ack] = field(default_factory=list)
    updates: list[UpdateAck] = field(default_factory=list)
    unresolved: list[str] = field(default_factory=list)  # request_ids of writes never answered before giving up
    rss: dict[str, dict[str, int | None]] = field(default_factory=dict)  # sample -> role -> bytes
    rss_series: list[dict[str, Any]] = field(default_factory=list)
    cpu_s: dict[str, float] = field(default_factory=dict)
    cpu_s_each: dict[str, list[float]] = field(default_factory=dict)  # role -> each of its processes' CPU seconds
    op_cost: dict[str, dict[str, Any]] = field(default_factory=dict)  # operation alone -> rate, p95, CPU ms a call
    servers: str = ""  # what the URL is in front of, when this tool started it
    load_average_max: float | None = None  # the machine's 1-minute load average, highest sample
    setup_s: float = 0.0  # credentials and the first memories, before the clock starts
    loop_lag_ms: dict[str, float | None] = field(default_factory=dict)
    mid_run: dict[str, Any] = field(default_factory=dict)
    first_errors: dict[str, str] = field(default_factory=dict)  # "op status" -> the first answer's body
    checks: list[Check] = field(default_factory=list)
    server_log: dict[str, int] = field(default_factory=dict)  # a serve started here: its log's problems
    lost: int = 0
    duplicated: int = 0

    def timed_seconds(self, operation: str) -> float:
        """The seconds an operation's rate is over: none for the setup's calls, made before the clock."""
        return 0.0 if operation.endswith(":setup") else self.seconds

    @property
    def passed(self) -> bool:
        return bool(self.checks) and all(check.passed for check in self.checks)

    @property
    def unexpected_errors(self) -> dict[str, int]:
        """Answers other than 2xx, 409 and 429, and exceptions, per ``op status`` or ``op exception``."""
        found: dict[str, int] = {}
        for name, stats in self.operations.items():
            for status, count in stats.statuses.items():
                if status not in EXPECTED_STATUSES:
                    found[f"{name} {status}"] = count
            for kind, count in stats.exceptions.items():
                found[f"{name} {kind}"] = count
        return found

    def rss_growth(self, role: str) -> float | None:
        """Resident memory growth of ``role`` from the middle sample to the end sample."""
        middle, end = self.rss.get("middle", {}).get(role), self.rss.get("end", {}).get(role)
        return (end - middle) / middle if middle and end else None

    def goals(self) -> list[Check]:
        errors = self.unexpected_errors
        found = [Check("errors other than 409 and 429", not errors,
                       f"{sum(errors.values())} (goal 0)" + (f": {errors}" if errors else ""))]
        for role in ("app", "engine"):
            growth = self.rss_growth(role)
            found.append(Check(f"{role} RSS growth, middle to end", growth is not None and growth < GOAL_RSS_GROWTH,
                               "not measured" if growth is None else f"{growth:+.1%} (goal < {GOAL_RSS_GROWTH:.0%})"))
        return found

    def to_json(self) -> dict[str, Any]:
        return {"url": self.url, "options": asdict(self.options), "seconds": round(self.seconds, 2),
                "operations": {name: stats.summary(self.timed_seconds(name))
                               for name, stats in self.operations.items()},
                "acknowledged": {"memories": len(self.acks), "updates": len(self.updates),
                                 "unresolved": self.unresolved},
                "setup_s": self.setup_s, "rss_bytes": self.rss, "rss_series": self.rss_series, "cpu_s": self.cpu_s,
                "cpu_s_each": self.cpu_s_each, "op_cost": self.op_cost, "servers": self.servers,
                "load_average_max": self.load_average_max,
                "loop_lag_ms": self.loop_lag_ms, "mid_run": self.mid_run, "first_errors": self.first_errors,
                "unexpected_errors": self.unexpected_errors, "server_log": self.server_log,
                "goals": [asdict(goal) for goal in self.goals()],
                "checks": [asdict(check) for check in self.checks], "lost": self.lost,
                "duplicated": self.duplicated, "passed": self.passed}


# ---- generated text -------------------------------------------------------------------------------------------


def memory_text(rng: random.Random, reference: str) -> str:
    """Two or three sentences with entities in them, made unique by ``reference``: a text identical to a
    current memory is answered with that memory, which would hide a duplicate."""
    sentences = [sentence(rng) for _ in range(rng.randint(2, 3))]
    return " ".join(sentences) + f" Reference {reference}."


def question(rng: random.Random) -> str:
    return fill(rng.choice(QUESTIONS), rng)


def digest(text: str) -> str:
    return hashlib.sha256(text.encode()).hexdigest()


# ---- MCP ----------------------------------------------------------------------------------------------------


class McpSession:
    """One client's MCP session over Streamable HTTP, owned by a task of its own. The SDK runs its transport in
    an anyio task group whose failure (the server went away) cancels the task that entered it: entered in the
    client's own task, a dropped MCP connection would cancel an unrelated /v1 call in flight. Calls come in
    through a queue; a failed session is opened again for the next call."""

    def __init__(self, url: str, token: str, timeout_s: float) -> None:
        self.url = url.rstrip("/") + "/mcp"
        self.token = token
        self.timeout_s = timeout_s
        self.queue: asyncio.Queue[tuple[str, dict[str, Any], asyncio.Future[Any]] | None] = asyncio.Queue()
        self.task: asyncio.Task[None] | None = None
        self.connects = 0

    async def call(self, name: str, arguments: dict[str, Any]) -> Any:
        if self.task is None or self.task.done():
            self.task = asyncio.create_task(self._serve())
        future: asyncio.Future[Any] = asyncio.get_running_loop().create_future()
        await self.queue.put((name, arguments, future))
        return await asyncio.wait_for(asyncio.shield(future), self.timeout_s + 30)

    async def _serve(self) -> None:
        pending = await self.queue.get()
        while pending is not None:
            try:
                self.connects += 1
                async with create_mcp_http_client(headers={"Authorization": f"Bearer {self.token}"}) as http, \
                        McpClient(streamable_http_client(self.url, http_client=http),
                                  read_timeout_seconds=self.timeout_s) as client:
                    while pending is not None:
                        name, arguments, future = pending
                        result = await client.call_tool(name, arguments, read_timeout_seconds=self.timeout_s)
                        if not future.done():
                            future.set_result(result)
                        pending = await self.queue.get()
            except Exception as exc:
                if pending is not None and not pending[2].done():
                    pending[2].set_exception(exc)
                pending = await self.queue.get()

    async def close(self) -> None:
        """End the session (the SDK sends its DELETE); a session that does not end in 15 s is cancelled, and one
        that does not end 5 s after that is left behind rather than awaited: closing must not hang the run."""
        if self.task is None or self.task.done():
            return
        await self.queue.put(None)
        done, _ = await asyncio.wait({self.task}, timeout=15)
        if not done:
            self.task.cancel()
            await asyncio.wait({self.task}, timeout=5)


def _exception_name(exc: BaseException) -> str:
    """The type of an exception, or of the leaves of an exception group (what the SDK's task groups raise)."""
    if isinstance(exc, BaseExceptionGroup):
        return "+".join(sorted({_exception_name(inner) for inner in exc.exceptions}))
    return type(exc).__name__


# ---- the run ------------------------------------------------------------------------------------------------


class Run:
    """The state the clients share: the HTTP client, the clock, the statistics and the acknowledged writes."""

    def __init__(self, url: str, options: LoadOptions, http: httpx.AsyncClient) -> None:
        self.url = url
        self.options = options
        self.http = http
        self.id = uuid.uuid4().hex[:8]
        self.result = LoadResult(url=url, options=options, operations={name: OpStats() for name in [
            *MIX, "update", "update:read", "remember:setup"]})
        self.deadline = time.monotonic()  # the setup's writes give up ``drain_s`` after it begins
        self.finished_at = 0.0  # when the last client's last call ended (closing MCP sessions comes after)

    def stats(self, op: str) -> OpStats:
        return self.result.operations.setdefault(op, OpStats())

    async def call(self, op: str, method: str, path: str, token: str, **kwargs: Any) -> httpx.Response | None:
        """One HTTP call, counted under ``op``: its latency when answered 2xx, else its status or exception."""
        started = time.perf_counter()
        try:
            response = await self.http.request(method, path, headers={"Authorization": f"Bearer {token}"}, **kwargs)
        except httpx.HTTPError as exc:
            self.stats(op).exceptions[_exception_name(exc)] += 1
            return None
        elapsed = time.perf_counter() - started
        if response.status_code < 300:
            self.stats(op).latencies.append(elapsed)
        else:
            self.stats(op).statuses[response.status_code] += 1
            self.result.first_errors.setdefault(f"{op} {response.status_code}", response.text[:400])
        return response

    def give_up_at(self) -> float:
        return self.deadline + self.options.drain_s

    # -- the operations --

    async def remember(self, client: Client, rng: random.Random, op: str = "remember") -> None:
        """Remember until acknowledged: no answer, a 5xx or a 429 is sent again with the same request_id."""
        client.sequence += 1
        request_id = f"load-{self.id}-c{client.index:03d}-{client.sequence:06d}"
        content = memory_text(rng, f"{client.index}-{client.sequence}")
        body = {"content": content, "request_id": request_id, "metadata": {"load_request_id": request_id}}
        backoff, unanswered = 0.25, False
        while True:
            response = await self.call(op, "POST", "/v1/remember", client.token, json=body)
            if response is not None and response.status_code in (200, 201):
                self.result.acks.append(Ack(response.json()["id"], client.namespace, request_id, digest(content)))
                return
            if response is not None and response.status_code < 500 and response.status_code != 429:
                if unanswered:  # refused after an attempt that may have been written: not known either way
                    self.result.unresolved.append(request_id)
                return  # a definite refusal: nothing was written (the status is counted)
            unanswered = unanswered or response is None or response.status_code >= 500
            if time.monotonic() > self.give_up_at():
                self.result.unresolved.append(request_id)
                return
            self.stats(op).retries += 1
            await asyncio.sleep(_retry_after(response, backoff))
            backoff = min(backoff * 2, 5.0)

    async def search(self, client: Client, rng: random.Random) -> None:
        await self.call("search", "GET", "/v1/memories/search", client.token,
                        params={"query": question(rng), "limit": 5})

    async def recall(self, client: Client, rng: random.Random) -> None:
        await self.call("recall", "POST", "/v1/recall/context", client.token,
                        json={"query": question(rng), "max_items": 8, "max_tokens": 1000})

    async def graph(self, client: Client, rng: random.Random) -> None:
        await self.call("graph", "GET", "/v1/graph", client.token,
                        params={"seed": "query", "query": fill("{o}", rng), "depth": 2, "max_nodes": 200})

    async def graphql(self, client: Client, rng: random.Random) -> None:
        response = await self.call("graphql", "POST", "/graphql", client.token,
                                   json={"query": GRAPHQL_SEARCH, "variables": {"q": question(rng)}})
        if response is not None and response.status_code == 200 and response.json().get("errors"):
            # answered, but with errors: counted by their code instead of as a success
            self.stats("graphql").latencies.pop()
            codes = {str((e.get("extensions") or {}).get("code")) for e in response.json()["errors"]}
            self.stats("graphql").exceptions[f"GraphQL {'+'.join(sorted(codes))}"] += 1
            self.result.first_errors.setdefault("graphql errors", response.text[:400])

    async def mcp(self, client: Client, rng: random.Random) -> None:
        if client.mcp is None:
            client.mcp = McpSession(self.url, client.token, self.options.timeout_s)
        name, arguments = (("search_memories", {"query": question(rng), "limit": 5}) if rng.random() < 0.5 else
                           ("recall_context", {"query": question(rng), "max_items": 8, "max_tokens": 1000}))
        started = time.perf_counter()
        try:
            result = await client.mcp.call(name, arguments)
        except Exception as exc:
            self.stats("mcp").exceptions[_exception_name(exc)] += 1
            self.result.first_errors.setdefault(f"mcp {_exception_name(exc)}", repr(exc)[:400])
            return
        if result.is_error:
            text = " ".join(getattr(block, "text", "") for block in result.content)
            if text.startswith("rate limited"):  # the tool's answer to a rate limit: counted as the 429 it is
                self.stats("mcp").statuses[429] += 1
            else:
                self.stats("mcp").exceptions["tool error"] += 1
            self.result.first_errors.setdefault(f"mcp {text[:12]}", text[:400])
        else:
            self.stats("mcp").latencies.append(time.perf_counter() - started)

    async def latest(self, token: str, chain_id: str) -> tuple[str, int] | None:
        """The latest version of a chain: (id, version)."""
        response = await self.call("update:read", "GET", f"/v1/memories/{chain_id}/history", token,
                                   params={"limit": 1})
        if response is None or response.status_code != 200:
            return None
        newest = response.json()["items"][0]
        return str(newest["id"]), int(newest["version"])

    async def update(self, client: Client, rng: random.Random, chain_id: str) -> None:
        """One acknowledged update of a shared memory, or a give-up: a 409 (the compare-and-swap lost) reads the
        latest version again and retries; no answer retries the same request."""
        latest = await self.latest(client.token, chain_id)
        while latest is not None and time.monotonic() < self.deadline:
            client.sequence += 1
            request_id = f"load-{self.id}-u{client.index:03d}-{client.sequence:06d}"
            body = {"content": memory_text(rng, f"shared {chain_id[:8]} by {client.index}-{client.sequence}"),
                    "expected_version": latest[1], "request_id": request_id}
            backoff = 0.25
            while True:
                response = await self.call("update", "PATCH", f"/v1/memories/{latest[0]}", client.token, json=body)
                if response is not None and response.status_code == 200:
                    answer = response.json()
                    self.result.updates.append(UpdateAck(chain_id, answer["id"], answer["version"],
                                                         answer.get("parentMemoryId"), request_id))
                    return
                if response is not None and response.status_code == 409:
                    break  # lost the compare-and-swap: read again
                if response is not None and response.status_code < 500 and response.status_code != 429:
                    return
                if time.monotonic() > self.give_up_at():
                    self.result.unresolved.append(request_id)
                    return
                self.stats("update").retries += 1
                await asyncio.sleep(_retry_after(response, backoff))
                backoff = min(backoff * 2, 5.0)
            latest = await self.latest(client.token, chain_id)

    # -- the clients --

    async def client_loop(self, client: Client, mix: Mapping[str, float] = MIX) -> None:
        """Calls drawn from ``mix`` until the deadline (the cost phase passes one operation alone)."""
        rng = random.Random(f"{self.options.seed}-client-{client.index}")
        operations: dict[str, Callable[[Client, random.Random], Any]] = {
            "remember": self.remember, "search": self.search, "recall": self.recall, "graph": self.graph,
            "mcp": self.mcp, "graphql": self.graphql}
        names, weights = list(mix), list(mix.values())
        backoff = 0.0
        try:
            while time.monotonic() < self.deadline:
                before = self._failures()
                name = rng.choices(names, weights)[0]
                client.doing = (name, time.monotonic())
                await operations[name](client, rng)
                # a call that failed without an answer (the server is down): wait a little, not a busy loop
                backoff = min(max(backoff * 2, 0.2), 2.0) if self._failures() > before else 0.0
                if backoff:
                    await asyncio.sleep(backoff)
            self.finished_at = max(self.finished_at, time.monotonic())
        finally:
            if client.mcp is not None:
                client.doing = ("closing its MCP session", time.monotonic())
                await client.mcp.close()
            client.doing = ("done", time.monotonic())

    def _failures(self) -> int:
        return sum(sum(s.exceptions.values()) + sum(n for st, n in s.statuses.items() if st >= 500)
                   for s in self.result.operations.values())

    async def updater_loop(self, client: Client, chains: list[str]) -> None:
        rng = random.Random(f"{self.options.seed}-updater-{client.index}")
        while time.monotonic() < self.deadline:
            before = self._failures()
            client.doing = ("update", time.monotonic())
            await self.update(client, rng, rng.choice(chains))
            if self._failures() > before:
                await asyncio.sleep(0.5)
        self.finished_at = max(self.finished_at, time.monotonic())
        client.doing = ("done", time.monotonic())


def _retry_after(response: httpx.Response | None, backoff: float) -> float:
    """The server's Retry-After (capped at 10 s), else the backoff with jitter."""
    if response is not None and "retry-after" in response.headers:
        with contextlib.suppress(ValueError):
            return min(float(response.headers["retry-after"]), 10.0)
    return backoff * random.uniform(0.5, 1.5)


async def _gather_limited(calls: list[Any], limit: int) -> list[Any]:
    """Await coroutines at most ``limit`` at a time, in order."""
    gate = asyncio.Semaphore(limit)

    async def one(call: Any) -> Any:
        async with gate:
            return await call

    return list(await asyncio.gather(*(one(call) for call in calls)))


async def _credential(run: Run, admin_token: str, name: str, namespace: str) -> str:
    response = await run.http.post("/api/credentials", headers={"Authorization": f"Bearer {admin_token}"},
                                   json={"name": name, "access": "read_write", "namespaces": [namespace]})
    if response.status_code != 201:
        raise RuntimeError(f"could not create a credential ({response.status_code}): {response.text[:300]}")
    return str(response.json()["token"])


# ---- resident memory and CPU ---------------------------------------------------------------------------------


class Meter:
    """Resident memory of the app and the engine at named moments, and the CPU seconds of every process that
    held a role during the run (a restarted server is a new process: its CPU is added), next to the whole
    machine's busy CPU seconds: on a shared machine, what other processes took is CPU the server did not get."""

    def __init__(self, processes: Callable[[], Processes] | None) -> None:
        self.processes = processes
        self.cpu: dict[tuple[str, int], tuple[float, float]] = {}  # (role, pid) -> (first, last) CPU seconds
        self.machine: tuple[float, float] | None = None  # (first, last) busy CPU seconds, every core
        self.load_averages: list[float] = []

    def sample(self) -> dict[str, int | None]:
        found: dict[str, int | None] = {"app": None, "engine": None}
        current = self.processes() if self.processes is not None else {}
        current = {**current, "load generator": psutil.Process()}
        for role, held in current.items():
            for process in held if isinstance(held, list) else [held] if held is not None else []:
                try:
                    rss, times = process.memory_info().rss, process.cpu_times()
                except psutil.Error:
                    continue
                found[role] = (found.get(role) or 0) + rss  # a role of several processes: their sum
                used = float(times.user + times.system)
                first, _ = self.cpu.get((role, process.pid), (used, used))
                self.cpu[(role, process.pid)] = (first, used)
        busy = psutil.cpu_times()
        busy_s = float(sum(busy) - busy.idle - getattr(busy, "iowait", 0.0))
        self.machine = (self.machine[0] if self.machine else busy_s, busy_s)
        self.load_averages.append(os.getloadavg()[0])
        return found

    def cpu_seconds(self) -> dict[str, float]:
        totals: dict[str, float] = {}
        for (role, _), (first, last) in self.cpu.items():
            totals[role] = round(totals.get(role, 0.0) + last - first, 1)
        if self.machine is not None:
            totals["other processes"] = round(max(0.0, self.machine[1] - self.machine[0] - sum(totals.values())), 1)
        return totals

    def cpu_seconds_each(self) -> dict[str, list[float]]:
        """Each process's CPU seconds, per role: whether one of several app processes took a whole core."""
        each: dict[str, list[float]] = {}
        for (role, _), (first, last) in self.cpu.items():
            each.setdefault(role, []).append(round(last - first, 1))
        return each


def local_processes(url: str) -> Callable[[], Processes] | None:
    """For a server on this machine: the process listening on the URL's port and its engine (a Java child whose
    command line names an ArcadeDB root path). None for another host."""
    parts = urlsplit(url)
    if parts.hostname not in ("127.0.0.1", "localhost", "::1"):
        return None
    port = parts.port or (443 if parts.scheme == "https" else 80)

    def find() -> Processes:
        app = None
        with contextlib.suppress(psutil.Error):
            for connection in psutil.net_connections("tcp"):
                if connection.status == psutil.CONN_LISTEN and connection.laddr and \
                        connection.laddr.port == port and connection.pid:
                    app = psutil.Process(connection.pid)
                    break
        return {"app": app, "engine": _engine_child(app)}

    return find


def _engine_child(app: psutil.Process | None) -> psutil.Process | None:
    if app is None:
        return None
    with contextlib.suppress(psutil.Error):
        for child in app.children(recursive=True):
            with contextlib.suppress(psutil.Error):
                if any(arg.startswith("-Darcadedb.server.rootPath=") for arg in child.cmdline()):
                    return child
    return None


# ---- the consistency check -----------------------------------------------------------------------------------


async def _pages(run: Run, token: str, path: str, params: dict[str, Any], key: str) -> list[dict[str, Any]] | None:
    """Every item of a paged list (``next_cursor``), or None when a page was not answered."""
    items: list[dict[str, Any]] = []
    cursor: str | None = None
    while True:
        response = await run.call("check", "GET", path, token, params={**params, **({"cursor": cursor} if cursor
                                                                                       else {})})
        if response is None or response.status_code != 200:
            return None
        page = response.json()
        items.extend(page[key])
        cursor = page.get("next_cursor")
        if not cursor:
            return items


async def check_consistency(run: Run, clients: list[Client], updaters: list[Client],
                            chains: list[str]) -> list[Check]:
    """Read everything back with each namespace's own credential and hold it against the acknowledged writes."""
    result = run.result
    token_of = {client.namespace: client.token for client in [*clients, *updaters]}
    namespaces = [client.namespace for client in clients]
    listed_pages = await _gather_limited([_pages(run, token_of[ns], "/v1/memories", {"scope": ns, "limit": 200},
                                                 "memories") for ns in namespaces], 8)
    listed = dict(zip(namespaces, listed_pages, strict=True))

    async def read(memory_id: str, namespace: str) -> tuple[int | None, dict[str, Any]]:
        response = await run.call("check", "GET", f"/v1/memories/{memory_id}", token_of[namespace],
                                  params={"scope": namespace})
        if response is None:
            return None, {}
        return response.status_code, response.json() if response.status_code == 200 else {}

    acked_ids = {ack.id: ack for ack in result.acks}
    extra_ids = {item["id"]: ns for ns, items in listed.items() for item in items or [] if item["id"] not in acked_ids}
    to_read = [(ack.id, ack.namespace) for ack in acked_ids.values()] + list(extra_ids.items())
    answers = await _gather_limited([read(memory_id, ns) for memory_id, ns in to_read], 8)
    read_back = {memory_id: answer for (memory_id, _), answer in zip(to_read, answers, strict=True)}
    checks: list[Check] = []

    # every acknowledged write reads back, with its content, in its namespace
    unreadable = [ack.id for ack in acked_ids.values() if read_back[ack.id][0] != 200]
    altered = [ack.id for ack in acked_ids.values() if read_back[ack.id][0] == 200 and (
        digest(read_back[ack.id][1].get("content") or "") != ack.digest
        or read_back[ack.id][1].get("namespace") != ack.namespace)]
    checks.append(Check("every acknowledged write is readable with its content",
                        not unreadable and not altered,
                        f"{len(acked_ids) - len(unreadable) - len(altered)} of {len(acked_ids)} memories"
                        + (f"; not readable: {unreadable[:5]}" if unreadable else "")
                        + (f"; other content or namespace: {altered[:5]}" if altered else "")))

    # exactly once: one memory per request and per content in each namespace; one id per acknowledged request
    duplicates: list[str] = []
    copies = 0  # memories beyond the first of their request or content (the larger of the two, per namespace)
    for ns, items in listed.items():
        if items is None:
            continue
        by_request = Counter(str((item.get("metadata") or {}).get("load_request_id")) for item in items)
        by_content = Counter(digest(read_back[item["id"]][1].get("content") or "") for item in items
                             if read_back.get(item["id"], (None, {}))[0] == 200)
        duplicates += [f"{ns}: request {key} x{n}" for key, n in by_request.items() if n > 1]
        duplicates += [f"{ns}: content {key[:12]} x{n}" for key, n in by_content.items() if n > 1]
        copies += max(sum(n - 1 for n in by_request.values()), sum(n - 1 for n in by_content.values()))
    ids_per_request: dict[str, set[str]] = {}
    for ack in result.acks:
        ids_per_request.setdefault(ack.request_id, set()).add(ack.id)
    acknowledged_twice = {rid: ids for rid, ids in ids_per_request.items() if len(ids) > 1}
    duplicates += [f"request {rid} acknowledged as {sorted(ids)}" for rid, ids in acknowledged_twice.items()]
    copies = max(copies, sum(len(ids) - 1 for ids in acknowledged_twice.values()))
    unanswered = [ns for ns, items in listed.items() if items is None]
    checks.append(Check("exactly once: one memory per request and per content in every namespace",
                        not duplicates and not unanswered,
                        f"{sum(len(items or []) for items in listed.values())} memories listed in "
                        f"{len(listed)} namespaces" + (f"; duplicates: {duplicates[:5]}" if duplicates else "")
                        + (f"; not listed (no answer): {unanswered[:5]}" if unanswered else "")))

    # the counts per namespace are what the clients recorded
    mismatched: list[str] = []
    unlisted: set[str] = set()
    for ns, items in listed.items():
        recorded = {ack.id for ack in result.acks if ack.namespace == ns}
        stored = {item["id"] for item in items or []}
        if items is None or stored != recorded or len(items) != len(recorded):
            unlisted |= recorded - stored
            mismatched.append(f"{ns}: {len(items or [])} stored, {len(recorded)} recorded "
                              f"({len(recorded - stored)} missing, {len(stored - recorded)} unacknowledged)")
    checks.append(Check("the counts per namespace match the clients' records", not mismatched,
                        f"{len(listed) - len(mismatched)} of {len(listed)} namespaces"
                        + (f"; {mismatched[:5]}" if mismatched else "")))

    # no forked version chain; every acknowledged update is in its chain, once
    forks: list[str] = []
    lost_updates = extra_versions = versions = 0
    shared_token = updaters[0].token if updaters else ""
    for chain_id in chains:
        history = await _pages(run, shared_token, f"/v1/memories/{chain_id}/history", {"limit": 1000}, "items")
        if history is None:
            forks.append(f"{chain_id}: history not answered")
            continue
        ordered = sorted(history, key=lambda item: item.get("version") or 0)
        versions += len(ordered)
        numbers = [item.get("version") for item in ordered]
        if numbers != list(range(1, len(ordered) + 1)):
            forks.append(f"{chain_id}: versions {numbers[:10]}...")
        parents = [item.get("parentMemoryId") for item in ordered]
        expected_parents = [None] + [item["id"] for item in ordered[:-1]]
        if parents != expected_parents:
            forks.append(f"{chain_id}: a version's parent is not the version before it")
        if [bool(item.get("isLatest")) for item in ordered] != [False] * (len(ordered) - 1) + [True]:
            forks.append(f"{chain_id}: not exactly the newest version is the latest")
        if {item.get("chain_id") for item in ordered} != {chain_id}:
            forks.append(f"{chain_id}: versions of another chain")
        by_version = {item.get("version"): item["id"] for item in ordered}
        acked = [update for update in result.updates if update.chain_id == chain_id]
        lost_updates += sum(by_version.get(update.version) != update.id for update in acked)
        extra_versions += max(0, len(ordered) - 1 - len({update.id for update in acked}))
        if len({update.version for update in acked}) != len(acked):
            forks.append(f"{chain_id}: two acknowledged updates at one version")
    shared_listed = await _pages(run, shared_token, "/v1/memories", {"limit": 200}, "memories")
    if shared_listed is None or len(shared_listed) != len(chains):
        forks.append(f"shared namespace: {len(shared_listed or [])} memories, {len(chains)} expected")
    checks.append(Check("no forked version chain: versions 1..n, each parent the one before, every acknowledged "
                        "update in place", not forks and not lost_updates and not extra_versions,
                        f"{len(chains)} chains, {versions} versions, {len(result.updates)} acknowledged updates"
                        + (f"; {forks[:5]}" if forks else "")
                        + (f"; {lost_updates} acknowledged updates missing" if lost_updates else "")
                        + (f"; {extra_versions} versions nobody acknowledged" if extra_versions else "")))

    result.lost = len(set(unreadable) | set(altered) | unlisted) + lost_updates
    result.duplicated = copies + extra_versions
    checks.append(Check("0 acknowledged memories lost and 0 duplicated", not result.lost and not result.duplicated
                        and not result.unresolved,
                        f"{result.lost} lost, {result.duplicated} duplicated"
                        + (f", {len(result.unresolved)} writes never answered" if result.unresolved else "")))
    return checks


# ---- running a load ------------------------------------------------------------------------------------------


async def _load(url: str, token: str, options: LoadOptions, at_mid_run: Callable[[], object] | None,
                processes: Callable[[], Processes] | None) -> LoadResult:
    limits = httpx.Limits(max_connections=None, max_keepalive_connections=options.clients + options.updaters + 16)
    async with httpx.AsyncClient(base_url=url, timeout=options.timeout_s, limits=limits) as http:
        run = Run(url, options, http)
        result = run.result

        # setup: credentials, each client's first memories, the shared memories
        setup_began = time.monotonic()
        names = [f"load-{run.id}-c{i:03d}" for i in range(options.clients)]
        shared = f"load-{run.id}-shared"
        tokens = await _gather_limited([_credential(run, token, ns, ns) for ns in names] +
                                       [_credential(run, token, f"{shared}-u{i}", shared)
                                        for i in range(options.updaters)], 8)
        clients = [Client(i, ns, tokens[i]) for i, ns in enumerate(names)]
        updaters = [Client(i, shared, tokens[options.clients + i]) for i in range(options.updaters)]
        await _gather_limited([run.remember(client, random.Random(f"{options.seed}-setup-{client.index}"),
                                            "remember:setup")
                               for client in clients for _ in range(options.setup_memories)], 8)
        chains: list[str] = []
        if updaters:
            seeding = Client(-1, shared, updaters[0].token)
            for _ in range(options.shared_memories):
                before = len(result.acks)
                await run.remember(seeding, random.Random(f"{options.seed}-shared-{len(chains)}"), "remember:setup")
                if len(result.acks) > before:
                    chains.append(result.acks.pop().id)  # updated later: checked as a chain, not as a memory

        result.setup_s = round(time.monotonic() - setup_began, 1)
        meter = Meter(processes)
        result.rss["start"] = meter.sample()
        started = time.monotonic()
        run.deadline = started + options.seconds
        mid_at = options.mid_run_at if options.mid_run_at is not None else options.seconds / 2
        lags: list[float] = []
        stop = asyncio.Event()

        async def timeline() -> None:
            """Samples every ``sample_every_s``; at ``mid_at`` the middle sample, then the callback (in a thread:
            a kill and a restart block for seconds, the clients go on meanwhile)."""
            next_sample = started
            mid_done = False
            while not stop.is_set():
                now = time.monotonic()
                if now >= next_sample:
                    sample = await asyncio.to_thread(meter.sample)
                    result.rss_series.append({"t_s": round(now - started, 1), **sample})
                    next_sample += options.sample_every_s
                if not mid_done and now >= started + mid_at:
                    mid_done = True
                    result.rss["middle"] = await asyncio.to_thread(meter.sample)
                    if at_mid_run is not None:
                        began = time.monotonic()
                        result.mid_run["at_s"] = round(began - started, 1)
                        result.mid_run["acknowledged_before"] = len(result.acks)
                        try:
                            await asyncio.to_thread(at_mid_run)
                            result.mid_run["ok"] = True
                        except Exception as exc:
                            result.mid_run["ok"] = False
                            result.mid_run["error"] = repr(exc)[:400]
                        result.mid_run["took_s"] = round(time.monotonic() - began, 1)
                with contextlib.suppress(TimeoutError):
                    await asyncio.wait_for(stop.wait(), 0.5)

        async def lag_monitor() -> None:
            """How late the event loop wakes a sleeper: the generator's own saturation."""
            while not stop.is_set():
                before = time.perf_counter()
                await asyncio.sleep(0.1)
                lags.append(time.perf_counter() - before - 0.1)

        background = [asyncio.create_task(timeline()), asyncio.create_task(lag_monitor())]
        loops = [asyncio.create_task(run.client_loop(client)) for client in clients] + \
            [asyncio.create_task(run.updater_loop(updater, chains)) for updater in updaters if chains]
        # every call is bounded by timeout_s and every write gives up drain_s after the end: past that (and the
        # MCP sessions' closing) a client is stuck, which is a finding to name, not a reason to wait forever
        bound = options.seconds + options.drain_s + 2 * options.timeout_s + 60
        _, stuck = await asyncio.wait(loops, timeout=bound)
        for task in stuck:
            task.cancel()
        if stuck:
            await asyncio.wait(stuck, timeout=10)
        now = time.monotonic()
        hanging = [f"{'updater' if client in updaters else 'client'} {client.index}: {client.doing[0]}"
                   + (f" for {now - client.doing[1]:.0f} s" if client.doing[1] else " (never began)")
                   for client in [*clients, *updaters] if client.doing[0] != "done"]
        result.seconds = (run.finished_at or now) - started
        stop.set()
        await asyncio.gather(*background)
        result.rss["end"] = meter.sample()
        result.cpu_s = meter.cpu_seconds()
        result.cpu_s_each = meter.cpu_seconds_each()
        result.load_average_max = round(max(meter.load_averages), 1) if meter.load_averages else None
        ordered = sorted(lags)
        result.loop_lag_ms = {"p50": _percentile(ordered, 50), "p99": _percentile(ordered, 99),
                              "max": round(ordered[-1] * 1000, 1) if ordered else None}
        finished = Check("every client finished within the run's bound", not hanging,
                         f"{bound:.0f} s after the start" + (f"; cancelled: {hanging[:8]}" if hanging else ""))
        result.checks = [finished, *await check_consistency(run, clients, updaters, chains)]
        result.operations.pop("check", None)
        if options.cost_seconds > 0:
            result.op_cost = await _cost_per_operation(url, options, http, clients, processes)
        return result


async def _cost_per_operation(url: str, options: LoadOptions, http: httpx.AsyncClient, clients: list[Client],
                              processes: Callable[[], Processes] | None) -> dict[str, dict[str, Any]]:
    """Each operation of the mix alone, ``cost_seconds`` with every client, one after the other: its answered
    calls a second, p95, and CPU milliseconds per answered call of each role. In the mix the CPU is one sum over
    six kinds of call; alone, an operation's cost is its own. The phase's writes are not checked."""
    costs: dict[str, dict[str, Any]] = {}
    for name in MIX:
        phase = Run(url, replace(options, seconds=options.cost_seconds), http)
        meter = Meter(processes)
        await asyncio.to_thread(meter.sample)
        began = time.monotonic()
        phase.deadline = began + options.cost_seconds
        await asyncio.gather(*(phase.client_loop(client, {name: 1.0}) for client in clients))
        elapsed = (phase.finished_at or time.monotonic()) - began  # without the MCP sessions' closing
        await asyncio.to_thread(meter.sample)
        stats = phase.stats(name)
        answered = len(stats.latencies)
        costs[name] = {"seconds": round(elapsed, 1), **stats.summary(elapsed), "cpu_ms_per_call": {
            role: round(seconds * 1000 / answered, 1) if answered else None
            for role, seconds in meter.cpu_seconds().items()}}
    return costs


def run_load(url: str, token: str, options: LoadOptions = LoadOptions(), *,
             at_mid_run: Callable[[], object] | None = None,
             processes: Callable[[], Processes] | None = None) -> LoadResult:
    """Run a load against ``url`` with an admin ``token`` (one that may create credentials), then the consistency
    check. ``at_mid_run`` is called once, in a thread, at ``options.mid_run_at`` seconds (a fault test kills and
    restarts the server there). ``processes`` names the app's and the engine's processes for the resident
    memory samples (default: found by the URL's port, on this machine)."""
    loop = asyncio.new_event_loop()
    try:
        return loop.run_until_complete(_load(url.rstrip("/"), token, options, at_mid_run,
                                             processes if processes is not None else local_processes(url)))
    finally:
        # asyncio.run would wait for every leftover task to end, and an MCP session that swallowed its
        # cancellation never would: the leftovers get 10 s, then the loop closes without them
        leftovers = [task for task in asyncio.all_tasks(loop) if not task.done()]
        for task in leftovers:
            task.cancel()
        if leftovers:
            loop.run_until_complete(asyncio.wait(leftovers, timeout=10))
        loop.run_until_complete(asyncio.wait({loop.create_task(loop.shutdown_asyncgens())}, timeout=10))
        loop.run_until_complete(loop.shutdown_default_executor())
        loop.close()


# ---- a serve of its own ----------------------------------------------------------------------------------------


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def serve_env(embedder: str | None = None, env: Mapping[str, str] | None = None) -> dict[str, str]:
    """The environment of what this tool starts: ``clean_environment``'s, with ``embedder`` and ``env`` on top."""
    found = clean_environment()
    found["HF_HUB_OFFLINE"] = "1"
    if embedder:
        found["GRAPHMEM_EMBEDDER"] = embedder
    found.update(env or {})
    return found


def engine_process(data_dir: Path) -> psutil.Process | None:
    """The engine of a data directory, found by its command line (as the tests find it)."""
    for process in psutil.process_iter(["cmdline"]):
        cmdline = process.info.get("cmdline") or []
        if any(arg.startswith(f"-Darcadedb.server.rootPath={data_dir}") for arg in cmdline):
            return process
    return None


class Serve:
    """``graphmem serve`` on 127.0.0.1 on a data directory: started, killed with SIGKILL and started again on the
    same directory and port, stopped. Its environment is ``serve_env``'s. ``owns_engine`` False: it attaches to
    an engine started before it (``graphmem engine start``), which its stop leaves running."""

    def __init__(self, data_dir: Path, *, embedder: str | None = None, env: Mapping[str, str] | None = None,
                 port: int | None = None, log: Path | None = None, owns_engine: bool = True,
                 args: Sequence[str] = ()) -> None:
        self.data_dir = data_dir
        self.port = port or free_port()
        self.url = f"http://127.0.0.1:{self.port}"
        self.log = log or data_dir / "serve.log"
        self.env = serve_env(embedder, env)
        self.owns_engine = owns_engine
        self.args = list(args)  # more of serve's options (--workers N)
        self.process: subprocess.Popen[bytes] | None = None
        self.began = 0.0
        self.starts: list[float] = []  # seconds each start took until it answered

    def start(self, timeout_s: float = 600) -> None:
        """Start and wait for /ready (after a restart under load: until only the engine's index builds are left,
        which may wait for the writes to pause)."""
        self.launch()
        self.wait_ready(timeout_s)

    def launch(self) -> None:
        """Start the process, not waiting for it: several serves start side by side, then each is waited for."""
        self.data_dir.mkdir(parents=True, exist_ok=True)
        self.began = time.monotonic()
        with self.log.open("ab") as out:
            self.process = subprocess.Popen(
                [sys.executable, "-m", "graphmem.cli", "serve", "--port", str(self.port), "--data-dir",
                 str(self.data_dir), "--log-level", "warning", *self.args], env=self.env, stdout=out,
                stderr=subprocess.STDOUT)

    def wait_ready(self, timeout_s: float = 600) -> None:
        """Wait for /ready; a serve that exits or does not answer in time is killed and raises."""
        assert self.process is not None
        began = self.began
        try:
            while True:
                with contextlib.suppress(httpx.HTTPError, ValueError):
                    answer = httpx.get(f"{self.url}/ready", timeout=5)
                    if answer.status_code == 200 or set(answer.json().get("waiting_for", ["?"])) <= {"indexes"}:
                        break
                if self.process.poll() is not None or time.monotonic() - began > timeout_s:
                    raise RuntimeError(f"graphmem serve did not become ready:\n{self.log_tail()}")
                time.sleep(0.3)
        except BaseException:  # also an interrupt: no half-started serve (and engine) is left behind
            self.process.kill()
            self.process.wait()
            raise
        self.starts.append(round(time.monotonic() - began, 1))

    @property
    def token(self) -> str:
        return (self.data_dir / "owner-token").read_text().strip()

    def engine(self) -> psutil.Process | None:
        return engine_process(self.data_dir)

    def app(self) -> psutil.Process | None:
        """The serve's process, while it runs."""
        if self.process is not None and self.process.poll() is None:
            with contextlib.suppress(psutil.Error):
                return psutil.Process(self.process.pid)
        return None

    def processes(self) -> Processes:
        return {"app": self.app(), "engine": self.engine()}

    def kill_and_restart(self) -> None:
        """SIGKILL the app (its engine, asked to die with it, gets SIGTERM from the kernel) and start it again."""
        assert self.process is not None
        os.kill(self.process.pid, signal.SIGKILL)
        self.process.wait()
        self.start()

    def stop(self) -> None:
        if self.process is not None and self.process.poll() is None:
            self.process.send_signal(signal.SIGTERM)
            try:
                self.process.wait(timeout=60)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait()
        deadline = time.monotonic() + 30
        while self.owns_engine and (engine := self.engine()) is not None:
            if time.monotonic() > deadline:
                engine.kill()
            time.sleep(0.2)

    def log_errors(self) -> dict[str, int]:
        """The log's WARNING, ERROR and CRITICAL lines, grouped by their first 200 characters with the time, refs
        and numbers left out: what the server reported about itself under the load, which no client answer
        shows."""
        found: Counter[str] = Counter()
        if self.log.exists():
            for line in self.log.read_text(errors="replace").splitlines():
                words = line.split(" ", 3)
                if len(words) == 4 and words[2] in ("WARNING", "ERROR", "CRITICAL"):
                    text = re.sub(r"\b\d+\b", "N", re.sub(r" \(ref \w+\)", "", words[3]))
                    found[f"{words[2]} {text[:200]}"] += 1
                elif line.startswith("Traceback"):
                    found["Traceback"] += 1
        return dict(found)

    def log_tail(self, chars: int = 3000) -> str:
        return self.log.read_text(errors="replace")[-chars:] if self.log.exists() else ""


def serve_and_load(data_dir: Path, options: LoadOptions = LoadOptions(), *, kill_at: float | None = None,
                   embedder: str | None = None, env: Mapping[str, str] | None = None) -> tuple[LoadResult, Serve]:
    """Start a serve on ``data_dir`` (new), run the load against it (with ``kill_at``: SIGKILL it at that second
    and start it again), stop it. Returns the result and the stopped serve (its log, its start times)."""
    serve = Serve(data_dir, embedder=embedder, env=env)
    serve.start()
    if kill_at is not None:
        options = replace(options, mid_run_at=kill_at)
    try:
        result = run_load(serve.url, serve.token, options, processes=serve.processes,
                          at_mid_run=serve.kill_and_restart if kill_at is not None else None)
    finally:
        serve.stop()
    result.mid_run["serve_starts_s"] = serve.starts
    result.server_log = serve.log_errors()
    return result, serve


class Cluster:
    """``--processes N``: the bundled engine started once, a redis-server, N serves attached to the engine and
    nginx from deploy/nginx.conf in front of them, all in ``directory`` (the module's docstring says why the rate
    limits are what they are). ``start`` leaves nothing running when it fails; ``stop`` stops all of it."""

    def __init__(self, directory: Path, count: int, *, embedder: str | None = None,
                 env: Mapping[str, str] | None = None) -> None:
        self.directory = directory
        self.data_dir = directory / "data"
        self.count = count
        self.port = free_port()
        self.url = f"http://127.0.0.1:{self.port}"
        self.redis_port = free_port()
        self.env = serve_env(embedder, {
            "GRAPHMEM_RATE_LIMIT_STORAGE": f"redis://127.0.0.1:{self.redis_port}",
            "GRAPHMEM_RATE_LIMIT_READS": RATE_LIMIT_NEVER, "GRAPHMEM_RATE_LIMIT_WRITES": RATE_LIMIT_NEVER,
            "GRAPHMEM_CURSOR_SECRET": secrets.token_hex(32), **(env or {})})
        self.serves: list[Serve] = []
        self.redis: subprocess.Popen[bytes] | None = None
        self.nginx: subprocess.Popen[bytes] | None = None
        self.stack = contextlib.ExitStack()

    def _graphmem(self, *args: str) -> None:
        subprocess.run([sys.executable, "-m", "graphmem.cli", *args, "--data-dir", str(self.data_dir)],
                       env=self.env, check=True, capture_output=True, timeout=300)

    def start(self) -> None:
        self.data_dir.mkdir(parents=True, exist_ok=True)
        with contextlib.ExitStack() as stack:
            self._graphmem("engine", "start")
            stack.callback(self._graphmem, "engine", "stop")
            self.redis = stack.enter_context(redis_process(self.directory, self.redis_port))
            self.serves = [Serve(self.data_dir, env=self.env, log=self.directory / f"serve-{n}.log",
                                 owns_engine=False) for n in range(1, self.count + 1)]
            for serve in self.serves:  # side by side: their warm-ups share the cores as they would in production
                stack.callback(serve.stop)
                serve.launch()
            for serve in self.serves:
                serve.wait_ready()
            self.nginx = stack.enter_context(nginx_process(
                self.directory / "nginx", self.port, [f"127.0.0.1:{serve.port}" for serve in self.serves]))
            self.stack = stack.pop_all()

    def stop(self) -> None:
        self.stack.close()

    @property
    def token(self) -> str:
        return (self.data_dir / "owner-token").read_text().strip()

    def processes(self) -> Processes:
        """Every app process, the engine, nginx's master and workers, Redis: each role metered as one sum."""
        nginx: list[psutil.Process] = []
        if self.nginx is not None and self.nginx.poll() is None:
            with contextlib.suppress(psutil.Error):
                master = psutil.Process(self.nginx.pid)
                nginx = [master, *master.children()]
        redis = None
        if self.redis is not None and self.redis.poll() is None:
            with contextlib.suppress(psutil.Error):
                redis = psutil.Process(self.redis.pid)
        return {"app": [app for serve in self.serves if (app := serve.app()) is not None],
                "engine": engine_process(self.data_dir), "nginx": nginx, "redis": redis}

    def log_errors(self) -> dict[str, int]:
        """The serves' WARNING and ERROR lines (summed over them) and nginx's [warn] and worse ones."""
        found: Counter[str] = Counter()
        for serve in self.serves:
            found.update(serve.log_errors())
        log = self.directory / "nginx" / "nginx.log"
        if log.exists():
            for line in log.read_text(errors="replace").splitlines():
                level = re.search(r" \[(warn|error|crit|alert|emerg)\] \d+#\d+: (?:\*\d+ )?(.*)", line)
                if level:
                    text = re.sub(r"\b\d+\b", "N", level[2])
                    found[f"nginx {level[1]} {text[:200]}"] += 1
        return dict(found)


def cluster_and_load(directory: Path, count: int, options: LoadOptions = LoadOptions(), *,
                     embedder: str | None = None,
                     env: Mapping[str, str] | None = None) -> tuple[LoadResult, Cluster]:
    """Start a ``Cluster`` of ``count`` serves in ``directory`` (new), run the load against its nginx, stop it.
    Returns the result and the stopped cluster (its logs, its serves' start times)."""
    cluster = Cluster(directory, count, embedder=embedder, env=env)
    cluster.start()
    try:
        result = run_load(cluster.url, cluster.token, options, processes=cluster.processes)
    finally:
        cluster.stop()
    result.servers = (f"nginx before {count} graphmem serve processes on one engine (graphmem engine start), "
                      f"rate limits in Redis")
    result.server_log = cluster.log_errors()
    return result, cluster


# ---- the report ------------------------------------------------------------------------------------------------


def report(result: LoadResult) -> str:
    options = result.options
    lines = [f"{options.clients} clients + {options.updaters} updaters for {result.seconds:.0f} s against "
             f"{result.url}, seed {options.seed} (setup before the clock: {result.setup_s:.0f} s)",
             *([result.servers] if result.servers else []),
             f"{'operation':<16} {'calls':>7} {'ok':>7} {'p50 ms':>8} {'p95 ms':>8} {'p99 ms':>8} {'ok/s':>7}  "
             f"other answers and exceptions"]
    for name, stats in result.operations.items():
        row = stats.summary(result.timed_seconds(name))
        if not row["calls"]:
            continue
        other = ", ".join([f"{status} x{n}" for status, n in row["statuses"].items()] +
                          [f"{kind} x{n}" for kind, n in row["exceptions"].items()] +
                          ([f"{row['retries']} retried"] if row["retries"] else []))

        def ms(value: float | None) -> str:
            return "-" if value is None else f"{value:.0f}"

        lines.append(f"{name:<16} {row['calls']:>7} {row['ok']:>7} {ms(row['p50_ms']):>8} {ms(row['p95_ms']):>8} "
                     f"{ms(row['p99_ms']):>8} {row['ok_per_s'] or '-':>7}  {other}")
    timed = [stats for name, stats in result.operations.items() if name in MIX]
    lines.append(f"all mixed operations: {sum(len(s.latencies) for s in timed) / result.seconds:.1f} answered "
                 f"calls/s; {len(result.acks)} memories and {len(result.updates)} updates acknowledged")
    lines.append(f"{'resident memory MiB':<20} {'start':>8} {'middle':>8} {'end':>8} {'middle→end':>11}")
    for role in ("app", "engine", *(["nginx", "redis"] if "nginx" in result.cpu_s else []), "load generator"):
        values = [result.rss.get(moment, {}).get(role) for moment in ("start", "middle", "end")]
        growth = result.rss_growth(role)
        lines.append(f"{role:<20} " + " ".join(f"{v / MIB:8.0f}" if v else f"{'-':>8}" for v in values)
                     + f" {'-' if growth is None else f'{growth:+.1%}':>11}")
    cpu = ", ".join(f"{role} {seconds:.0f} s ({seconds / result.seconds:.0%} of a core)"
                    for role, seconds in result.cpu_s.items()) if result.seconds else ""
    lines.append(f"CPU over the run: {cpu}; the machine's load average up to {result.load_average_max} on "
                 f"{psutil.cpu_count()} cores")
    lines += cpu_verdict(result)
    lines.append(f"the load generator's event loop woke sleepers late by p50 {result.loop_lag_ms.get('p50')} ms, "
                 f"p99 {result.loop_lag_ms.get('p99')} ms, max {result.loop_lag_ms.get('max')} ms")
    if result.op_cost:
        roles = [role for role in ("app", "engine", "nginx", "redis", "load generator", "other processes")
                 if any(role in cost["cpu_ms_per_call"] for cost in result.op_cost.values())]
        lines.append(f"each operation alone, {options.cost_seconds:.0f} s with {options.clients} clients: CPU ms "
                     f"per answered call")
        lines.append(f"{'operation':<12} {'ok/s':>7} {'p95 ms':>8} " + " ".join(f"{role:>15}" for role in roles))
        for name, cost in result.op_cost.items():
            lines.append(f"{name:<12} {cost['ok_per_s'] or '-':>7} {cost['p95_ms'] or '-':>8} "
                         + " ".join(f"{_or_dash(cost['cpu_ms_per_call'].get(role)):>15}" for role in roles))
    if result.mid_run:
        lines.append(f"mid-run: {result.mid_run}")
    if result.server_log:
        lines.append("the server's log, WARNING and ERROR lines:")
        lines += [f"  {count} x {text}" for text, count in result.server_log.items()]
    if result.first_errors:
        lines.append("first answer of each kind of error:")
        lines += [f"  {key}: {text[:200]}" for key, text in result.first_errors.items()]
    lines.append("goals (50 clients for 5 minutes):")
    lines += [f"  {'met' if goal.passed else 'NOT MET':<8}{goal.name}: {goal.detail}" for goal in result.goals()]
    lines.append("consistency:")
    lines += [f"  {'PASS' if check.passed else 'FAIL':<6}{check.name}: {check.detail}" for check in result.checks]
    return "\n".join(lines)


def _or_dash(value: float | None) -> str:
    return "-" if value is None else str(value)


def cpu_verdict(result: LoadResult) -> list[str]:
    """Each role's share of the machine's CPU over the run, each app process's share of a core, the app's CPU
    per answered call (an average over the mix), and which side takes the cores first: with the cores full, the
    side with the larger share; with cores idle, an app process at a whole core (one event loop, one GIL)."""
    cores = psutil.cpu_count() or 1
    if not result.seconds or not result.cpu_s:
        return []
    share = {role: seconds / (result.seconds * cores) for role, seconds in result.cpu_s.items()}
    busy = sum(share.values())
    apps = [seconds / result.seconds for seconds in result.cpu_s_each.get("app", [])]
    answered = sum(len(stats.latencies) for name, stats in result.operations.items() if ":setup" not in name)
    lines = [f"share of the machine's CPU ({cores} cores): " + ", ".join(f"{role} {value:.0%}"
                                                                       for role, value in share.items())
             + f"; busy {busy:.0%}",
             "each app process: " + ", ".join(f"{value:.0%} of a core" for value in apps)]
    if answered:
        lines.append(f"CPU per answered call, averaged over the mix ({answered} calls, updates and their reads "
                     f"included): app {result.cpu_s.get('app', 0) * 1000 / answered:.1f} ms, engine "
                     f"{result.cpu_s.get('engine', 0) * 1000 / answered:.1f} ms")
    app, engine = share.get("app", 0.0), share.get("engine", 0.0)
    if busy >= 0.9:
        first = "the app" if app >= engine else "the engine"
        lines.append(f"saturates first: the machine's cores ({busy:.0%} busy); of them {first} takes the larger "
                     f"share (app {app:.0%}, engine {engine:.0%})")
    elif apps and max(apps) >= 0.9:
        lines.append(f"saturates first: the app (a process at {max(apps):.0%} of a core, cores left idle)")
    else:
        lines.append(f"saturates first: neither (the machine {busy:.0%} busy): the calls wait on something other "
                     f"than CPU")
    return lines


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--clients", type=int, default=50)
    parser.add_argument("--seconds", type=float, default=300)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--json", type=Path, help="write the figures and checks here")
    parser.add_argument("--url", help="a running server (default: start graphmem serve on a new data directory)")
    parser.add_argument("--token", help="with --url: an admin token that may create credentials")
    parser.add_argument("--kill-at", type=float, help="SIGKILL the serve started here at this second, restart it")
    parser.add_argument("--embedder", help="the serve started here: GRAPHMEM_EMBEDDER (default: the server's)")
    parser.add_argument("--updaters", type=int, default=5)
    parser.add_argument("--timeout", type=float, default=60, help="seconds a call may take")
    parser.add_argument("--processes", type=int, help="this many serves on one engine, behind nginx, with Redis")
    parser.add_argument("--cost-seconds", type=float, default=0,
                        help="after the check, each operation alone this long: its CPU per call")
    args = parser.parse_args()
    options = LoadOptions(clients=args.clients, seconds=args.seconds, seed=args.seed, updaters=args.updaters,
                          timeout_s=args.timeout, cost_seconds=args.cost_seconds)
    if args.processes is not None and (args.processes < 1 or args.url or args.kill_at is not None):
        parser.error("--processes needs a count of 1 or more, and neither --url nor --kill-at")
    if args.url:
        if not args.token or args.kill_at is not None:
            parser.error("--url needs --token, and --kill-at only works on the serve this tool starts")
        result = run_load(args.url, args.token, options)
    elif args.processes:
        directory = Path(tempfile.mkdtemp(prefix="graphmem-load-"))
        print(f"starting the engine, Redis, {args.processes} serves and nginx in {directory}", file=sys.stderr)
        result, cluster = cluster_and_load(directory, args.processes, options, embedder=args.embedder)
        print(f"serves started in {[serve.starts for serve in cluster.serves]} s", file=sys.stderr)
        if result.passed:
            shutil.rmtree(directory, ignore_errors=True)
        else:
            print(f"kept for inspection: {directory}", file=sys.stderr)
    else:
        directory = Path(tempfile.mkdtemp(prefix="graphmem-load-"))
        print(f"starting graphmem serve on {directory}", file=sys.stderr)
        result, serve = serve_and_load(directory / "data", options, kill_at=args.kill_at, embedder=args.embedder)
        print(f"serve started in {serve.starts} s", file=sys.stderr)
        if result.passed:
            shutil.rmtree(directory, ignore_errors=True)
        else:
            print(f"kept for inspection: {directory}", file=sys.stderr)
    print(report(result))
    if args.json:
        args.json.write_text(json.dumps(result.to_json(), indent=2))
    sys.exit(0 if result.passed else 1)


if __name__ == "__main__":
    main()
