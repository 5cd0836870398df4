"""Durable asynchronous ingestion: a write returns a job id at once; a worker applies it later, exactly once.

* Jobs are ``Job`` nodes of the reserved namespace ``_system``, each for one caller namespace, so they
  survive restarts and any process attached to the database can work on them.
* A worker claims the oldest claimable job (per namespace, strictly in submission order) with a lease and
  keeps it alive with a heartbeat. A job whose worker died is claimed again once the lease runs out.
* The documents of a job and its ``done`` mark commit in one transaction, and the mark requires the
  worker to still hold the lease: a job is never applied twice, even when two workers overlap.
* A failing job is retried up to ``job_max_attempts`` times, then ``failed`` with the error; a failed job
  does not block the jobs after it. Finished jobs are purged after ``job_retention_days``.
"""

from __future__ import annotations

import json
import logging
import os
import socket
import sys
import threading
import time
import uuid
from collections.abc import Callable
from typing import Any

from graphmem.config import Settings
from graphmem.errors import GraphmemError, NotFound
from graphmem.model import CallerContext, DocumentInput, parse
from graphmem.records import now_ms
from graphmem.results import Document, JobInfo, JobStatus
from graphmem.store.driver import GraphStore, Tx

log = logging.getLogger(__name__)

# A job's payload is one property written by one statement: it stays well under the bundled engine's 16 MiB
# Bolt message cap (a larger batch is several jobs).
MAX_JOB_BYTES = 8 * 1024 * 1024


class LeaseLost(Exception):
    """The worker no longer holds the job's lease: its transaction must not commit."""


def job_record(namespace: str, items: list[dict[str, Any]], now_ms: int) -> dict[str, Any]:
    return {"id": str(uuid.uuid4()), "namespace": "_system", "job_namespace": namespace,
            "status": JobStatus.queued.value, "payload": json.dumps(items, ensure_ascii=False),
            "items": len(items), "attempts": 0, "submitted_at": now_ms}


def get_job(store: GraphStore, ctx: CallerContext, job_id: str) -> JobInfo:
    row = store.read(lambda tx: tx.single("job_get", id=job_id, namespaces=ctx.readable))
    if row is None:
        raise NotFound(f"no job with id {job_id!r}", id=job_id)
    return JobInfo.model_validate(row)


# The function that applies a job's items: the service's add path, given a callback that must run in
# the same transaction as the documents it writes.
Apply = Callable[[CallerContext, str, list[DocumentInput], Callable[[Tx, list[Document]], None]], object]


class JobWorker:
    """Claims and applies jobs in a background thread until stopped."""

    def __init__(self, store: GraphStore, settings: Settings, apply: Apply,
                 clock: Callable[[], int] = now_ms, models: Callable[[], object] = lambda: None) -> None:
        """``models``: loads the models, however long that takes; called before the first claim, so that a
        job claimed at a cold start does not spend an attempt on a model still loading."""
        self.store = store
        self.settings = settings
        self.apply = apply
        self.models = models
        self.clock = clock
        self.worker_id = f"{socket.gethostname()}:{os.getpid()}:{uuid.uuid4().hex[:8]}"
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None
        self._last_purge = 0.0

    @property
    def lease_ms(self) -> int:
        return int(self.settings.job_lease_s * 1000)

    def start(self) -> None:
        self._thread = threading.Thread(target=self._loop, name="graphmem-jobs", daemon=True)
        self._thread.start()

    def stop(self, timeout: float = 30.0) -> None:
        self._stop.set()
        if self._thread is not None:
            self._thread.join(timeout)

    def _loop(self) -> None:
        try:
            self.models()
        except Exception:  # a model that cannot load fails each job with its reason instead
            log.exception("job worker: the models did not load")
        while not self._stop.is_set():
            try:
                worked = self.run_once()
            except GraphmemError as exc:  # the database is away: wait and try again
                log.warning("job worker: %s", exc.message)
                worked = False
            if not worked:
                self._stop.wait(self.settings.job_poll_s)

    def run_once(self) -> bool:
        """Claim and apply one job. Returns False when no job was claimable."""
        if time.monotonic() - self._last_purge > 3600:
            self.purge()
        job = self.store.write(self._claim)
        if job is None:
            return False
        self._process(job)
        return True

    def purge(self) -> int:
        self._last_purge = time.monotonic()
        before = self.clock() - int(self.settings.job_retention_days * 86_400_000)
        row = self.store.write(lambda tx: tx.single("jobs_purge", before=before))
        return int(row["purged"]) if row else 0

    def _claim(self, tx: Tx) -> dict[str, Any] | None:
        now = self.clock()
        tx.run("jobs_fail_abandoned", now=now, max_attempts=self.settings.job_max_attempts)
        head = tx.single("job_next", now=now)
        if head is None:
            return None
        return tx.single("job_claim", id=head["id"], token=uuid.uuid4().hex, now=now, worker=self.worker_id,
                         lease_until=now + self.lease_ms)

    def _process(self, job: dict[str, Any]) -> None:
        lost = threading.Event()
        beating = threading.Event()
        heartbeat = threading.Thread(target=self._heartbeat, args=(job["id"], beating, lost), daemon=True,
                                     name="graphmem-job-heartbeat")
        heartbeat.start()
        try:
            items = [parse(DocumentInput, item) for item in json.loads(job["payload"])]
            ctx = CallerContext.for_namespaces(job["job_namespace"])

            def finish(tx: Tx, documents: list[Document]) -> None:
                self._fault("job-before-commit")
                if lost.is_set() or tx.single("job_finish", id=job["id"], worker=self.worker_id,
                                              now=self.clock(), document_ids=[d.id for d in documents]) is None:
                    raise LeaseLost(job["id"])

            self.apply(ctx, job["job_namespace"], items, finish)
        except LeaseLost:
            log.warning("job %s: lease lost to another worker; not applied here", job["id"])
        except Exception as exc:
            message = exc.message if isinstance(exc, GraphmemError) else f"{type(exc).__name__}: {exc}"
            row = self.store.write(lambda tx: tx.single(
                "job_fail", id=job["id"], worker=self.worker_id, now=self.clock(), error=message[:2000],
                max_attempts=self.settings.job_max_attempts))
            log.warning("job %s attempt %s failed (%s): %s", job["id"], job["attempts"],
                        row["status"] if row else "lease lost", message)
        finally:
            beating.set()
            heartbeat.join(5)

    def _heartbeat(self, job_id: str, done: threading.Event, lost: threading.Event) -> None:
        while not done.wait(self.settings.job_lease_s / 3):
            now = self.clock()

            def extend(tx: Tx, now: int = now) -> dict[str, Any] | None:
                return tx.single("job_heartbeat", id=job_id, worker=self.worker_id, now=now,
                                 lease_until=now + self.lease_ms)

            try:
                row = self.store.write(extend)
            except GraphmemError:
                continue
            if row is None:
                lost.set()
                return

    def _fault(self, point: str) -> None:
        """Crash-test hook: stop dead here and wait to be killed (``GRAPHMEM_FAULT_POINT``)."""
        if self.settings.fault_point == point:
            print(f"fault point reached: {point}", file=sys.stdout, flush=True)
            time.sleep(3600)
