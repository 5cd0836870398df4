"""``/metrics`` (Prometheus): requests by route template, method and status; request latency; ingestion jobs
by state; whether the graph database answers; the memories each shared pass of remembers took. Labels never
carry a namespace, an id, a token or user text: the route is its template (``/v1/memories/{memory_id}``),
unmatched paths are one label."""

from __future__ import annotations

import os
import time
from collections.abc import Callable, Iterator

from prometheus_client import CollectorRegistry, Counter, Histogram, generate_latest
from prometheus_client.core import GaugeMetricFamily, HistogramMetricFamily, Metric
from prometheus_client.multiprocess import MultiProcessCollector
from prometheus_client.registry import Collector
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from graphmem.errors import GraphmemError
from graphmem.runtime import Runtime

CONTENT_TYPE = "text/plain; version=0.0.4; charset=utf-8"
MULTIPROCESS_DIR = "PROMETHEUS_MULTIPROC_DIR"  # read by prometheus-client when it is first imported


class _Store(Collector):
    """Read at scrape time: jobs by state and whether the database answers."""

    def __init__(self, runtime: Callable[[], Runtime | None]) -> None:
        self._runtime = runtime

    def collect(self) -> Iterator[Metric]:
        runtime = self._runtime()
        reachable = GaugeMetricFamily("graphmem_database_reachable", "1 when the graph database answers")
        jobs = GaugeMetricFamily("graphmem_jobs", "ingestion jobs by state", labels=["state"])
        if runtime is not None:
            try:
                counts = runtime.service.jobs_by_status()
                reachable.add_metric([], 1)
                for status, count in counts.items():
                    jobs.add_metric([status], count)
            except GraphmemError:
                reachable.add_metric([], 0)
        yield reachable
        yield jobs
        if runtime is not None:
            yield _pass_sizes(runtime.service.coalescer.passes())


PASS_BUCKETS = (1, 2, 4, 8, 16, 32, 64, 128, 256, 512, 1000)


def _pass_sizes(sizes: dict[int, int]) -> HistogramMetricFamily:
    """How many memories each shared NLP pass of concurrent remembers took (``service/coalescing.py``)."""
    buckets = [(str(bound), sum(n for size, n in sizes.items() if size <= bound)) for bound in PASS_BUCKETS]
    family = HistogramMetricFamily("graphmem_remember_pass_memories", "memories per shared NLP pass of remembers")
    family.add_metric([], [*buckets, ("+Inf", sum(sizes.values()))],
                      sum_value=sum(size * n for size, n in sizes.items()))
    return family


class Metrics:
    """One registry per app (tests build many apps in one process). Under ``serve --workers`` the parent sets
    ``PROMETHEUS_MULTIPROC_DIR`` before the workers start: each worker's counts then go to files there, and a
    scrape answered by any worker sums the requests of all (prometheus-client's multiprocess mode); the jobs
    and the database's state are read from the database, the remember passes are the answering worker's."""

    def __init__(self, runtime: Callable[[], Runtime | None]) -> None:
        self.registry = CollectorRegistry()
        self.exposed = self.registry
        if os.environ.get(MULTIPROCESS_DIR):
            self.exposed = CollectorRegistry()
            MultiProcessCollector(self.exposed)  # type: ignore[no-untyped-call]
        self.requests = Counter("graphmem_http_requests", "HTTP requests", ["route", "method", "status"],
                                registry=self.registry)
        self.latency = Histogram("graphmem_http_request_seconds", "HTTP request latency", ["route", "method"],
                                 registry=self.registry,
                                 buckets=(0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30))
        self.exposed.register(_Store(runtime))

    def exposition(self) -> bytes:
        return generate_latest(self.exposed)


class MetricsMiddleware:
    def __init__(self, app: ASGIApp, metrics: Metrics) -> None:
        self.app = app
        self.metrics = metrics

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        started = time.perf_counter()
        status = 500

        async def sending(message: Message) -> None:
            nonlocal status
            if message["type"] == "http.response.start":
                status = int(message["status"])
            await send(message)

        try:
            await self.app(scope, receive, sending)
        finally:
            route = scope.get("route")
            template = getattr(route, "path", None) or "unmatched"
            method = scope.get("method", "")
            self.metrics.requests.labels(template, method, str(status)).inc()
            self.metrics.latency.labels(template, method).observe(time.perf_counter() - started)
