"""What the HTTP layer costs: ``POST /v1/remember`` and ``GET /v1/memories/search`` through a real uvicorn server
(``graphmem serve`` in its own process, as deployed; httpx, one connection kept alive), next to the same service
calls in this process on the same engine, call by call, in one run.

The same data, the same embedder (hashing by default: the model's cost is the same on both paths and would
only hide the layer's; ``--embedder minilm`` measures the real thing). Each add is a different text, so
both paths do the same ingestion work.

    .venv/bin/python benchmarks/http_overhead.py [--calls 200] [--embedder hashing]

(Named ``http_overhead``, not ``http``: a script's folder comes first on the import path, and a ``http.py``
there would shadow the standard library's for every benchmark.)
"""

from __future__ import annotations

import argparse
import os
import socket
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

import httpx

from graphmem.config import Settings
from graphmem.identity import OPERATOR, NewCredential, Scope
from graphmem.model import CallerContext, DocumentInput, SearchRequest
from graphmem.runtime import Runtime

NAMESPACE = "bench"
QUERIES = ["Who moved to Leeds?", "billing events", "the lighthouse keeper", "Kafka topics", "quarterly report"]


def percentiles(samples: list[float]) -> tuple[float, float]:
    ordered = sorted(samples)
    return statistics.median(ordered) * 1000, ordered[int(len(ordered) * 0.95) - 1] * 1000


def paired(calls: int, local: Callable[[int], object], remote: Callable[[int], object]) -> tuple[list[float],
                                                                                                list[float]]:
    """Both paths call by call, alternating which goes first, so they see the same data and the same load."""
    times: tuple[list[float], list[float]] = ([], [])
    for number in range(calls):
        order = [(0, local), (1, remote)] if number % 2 else [(1, remote), (0, local)]
        for index, call in order:
            started = time.perf_counter()
            call(number)
            times[index].append(time.perf_counter() - started)
    return times


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--calls", type=int, default=200)
    parser.add_argument("--embedder", default="hashing")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="graphmem-http-") as tmp:
        settings = Settings(_env_file=None, neo4j_uri=None, data_dir=Path(tmp), embedder=args.embedder,  # type: ignore[call-arg]
                            rate_limit_reads=0, rate_limit_writes=0)
        with Runtime.open(settings) as runtime:
            runtime.service.warm_up()
            service, ctx = runtime.service, CallerContext.for_namespaces(NAMESPACE)
            _, token = runtime.identity.create(NewCredential(name="bench", scopes=[Scope.read, Scope.write],
                                                             namespaces=[NAMESPACE]), by=OPERATOR)
            with socket.socket() as sock:
                sock.bind(("127.0.0.1", 0))
                port = int(sock.getsockname()[1])
            environ = {**{k: v for k, v in os.environ.items() if not k.startswith("GRAPHMEM_")},
                       "GRAPHMEM_EMBEDDER": args.embedder, "GRAPHMEM_RATE_LIMIT_READS": "0",
                       "GRAPHMEM_RATE_LIMIT_WRITES": "0", "GRAPHMEM_JOBS_ENABLED": "false"}
            server = subprocess.Popen([sys.executable, "-m", "graphmem.cli", "serve", "--port", str(port),
                                       "--data-dir", tmp, "--log-level", "warning"], env=environ)
            client = httpx.Client(base_url=f"http://127.0.0.1:{port}", timeout=60,
                                  headers={"Authorization": f"Bearer {token}"})
            deadline = time.monotonic() + 120
            while True:
                try:
                    if client.get("/health").status_code == 200:
                        break
                except httpx.TransportError:
                    pass
                if time.monotonic() > deadline or server.poll() is not None:
                    raise SystemExit("graphmem serve did not start")
                time.sleep(0.3)
            text = "Memory {n} of the {path} run: Priya Raman moved the billing events to Kafka topic {n}."
            client.get("/v1/memories")  # the credential lookup, cached for later requests
            remember = paired(args.calls, lambda n: service.add_memory(
                ctx, NAMESPACE, DocumentInput(content=text.format(n=n, path="service"))), lambda n: client.post(
                "/v1/remember", json={"content": text.format(n=n, path="http")}).raise_for_status())
            search = paired(args.calls, lambda n: service.search_memories(
                ctx, SearchRequest(query=QUERIES[n % len(QUERIES)], namespaces=[NAMESPACE], limit=5)),
                lambda n: client.get("/v1/memories/search",
                                     params={"query": QUERIES[n % len(QUERIES)]}).raise_for_status())
            rows = {"remember, in process": remember[0], "remember, HTTP": remember[1],
                    "search, in process": search[0], "search, HTTP": search[1]}
            client.close()
            server.terminate()
            server.wait(60)
    print(f"{args.calls} calls each, embedder {args.embedder}, bundled engine, one keep-alive connection")
    print(f"{'call':<22} {'p50 ms':>8} {'p95 ms':>8}")
    results = {name: percentiles(samples) for name, samples in rows.items()}
    for name, (p50, p95) in results.items():
        print(f"{name:<22} {p50:8.2f} {p95:8.2f}")
    for call, (local, remote) in (("remember", remember), ("search", search)):
        extra = sorted(r - lo for r, lo in zip(remote, local, strict=True))
        print(f"HTTP layer on {call}: {statistics.median(extra) * 1000:+.2f} ms at p50 of the paired differences "
              f"(p50 {results[f'{call}, HTTP'][0] - results[f'{call}, in process'][0]:+.2f} ms apart)")


if __name__ == "__main__":
    main()
