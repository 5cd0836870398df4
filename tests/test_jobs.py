"""Durable ingestion jobs on the real engine: exactly once, in order, retried, namespace-checked, and a
worker process killed between claim and commit."""

from __future__ import annotations

import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import neo4j
import pytest

from graphmem.errors import NotFound
from graphmem.ingest.jobs import JobWorker
from graphmem.model import CallerContext, DocumentInput, ForgetMode, ForgetRequest
from graphmem.results import JobStatus
from graphmem.runtime import Runtime
from graphmem.service import MemoryService
from helpers import child_environment, counts, query, store_address


def doc(content: str, **fields: Any) -> DocumentInput:
    return DocumentInput(content=content, **fields)


def drain(worker: JobWorker, limit: int = 20) -> int:
    done = 0
    while done < limit and worker.run_once():
        done += 1
    return done


@pytest.fixture
def worker(runtime: Runtime) -> JobWorker:
    return runtime.job_worker()


def test_job_applies_once_and_reports(service: MemoryService, ctx: CallerContext, ns: str, worker: JobWorker,
                                      graph: neo4j.Driver) -> None:
    job = service.submit_memories(ctx, ns, [doc("Alice Johnson works at Microsoft.", title="a"),
                                             doc("Bob moved to Berlin.")])
    assert job.status is JobStatus.queued and job.items == 2 and job.attempts == 0
    assert counts(graph, ns) == (1, 0)  # the namespace's StoredTail only: no memory before a worker applies it
    drain(worker)
    done = service.job_status(ctx, job.id)
    assert done.status is JobStatus.done and done.attempts == 1 and done.finished_at
    assert done.document_ids is not None and len(done.document_ids) == 2
    assert service.get_version(ctx, done.document_ids[0]).title == "a"
    before = counts(graph, ns)
    again = service.submit_memories(ctx, ns, [doc("Alice Johnson works at Microsoft.")])
    drain(worker)
    assert service.job_status(ctx, again.id).document_ids == done.document_ids[:1]
    assert counts(graph, ns) == before  # re-ingestion through the job path changes nothing


def test_job_status_is_namespace_checked(service: MemoryService, ctx: CallerContext, ns: str) -> None:
    job = service.submit_memories(ctx, ns, [doc("Private.")])
    with pytest.raises(NotFound):
        service.job_status(CallerContext.for_namespaces(f"{ns}-other"), job.id)
    with pytest.raises(NotFound):
        service.job_status(ctx, "00000000-0000-4000-8000-000000000000")


def test_jobs_of_a_namespace_apply_in_order_and_failures_do_not_block(
        service: MemoryService, ctx: CallerContext, ns: str, worker: JobWorker) -> None:
    gone = service.add_memory(ctx, ns, doc("Deleted before its retry.", request_id="job-tomb-01")).document
    service.forget(ctx, gone.id, ForgetRequest(mode=ForgetMode.hard))
    first = service.submit_memories(ctx, ns, [doc("First memory.")])
    failing = service.submit_memories(ctx, ns, [doc("Deleted before its retry.",
                                                      request_id="job-tomb-01")])  # a conflict every time
    last = service.submit_memories(ctx, ns, [doc("Last memory.")])
    drain(worker)
    statuses = [service.job_status(ctx, j.id) for j in (first, failing, last)]
    assert [s.status for s in statuses] == [JobStatus.done, JobStatus.failed, JobStatus.done]
    assert statuses[1].attempts == 3 and statuses[1].error and "deleted" in statuses[1].error
    assert statuses[0].finished_at is not None and statuses[2].finished_at is not None
    assert statuses[0].finished_at <= statuses[1].finished_at <= statuses[2].finished_at  # type: ignore[operator]


def test_finished_jobs_are_purged_after_retention(service: MemoryService, ctx: CallerContext, ns: str,
                                                  runtime: Runtime) -> None:
    job = service.submit_memories(ctx, ns, [doc("Old news.")])
    drain(runtime.job_worker())
    eight_days = 8 * 86_400_000
    later = JobWorker(runtime.store, runtime.settings, lambda *a: None,
                      clock=lambda: time.time_ns() // 1_000_000 + eight_days)
    assert later.purge() >= 1
    with pytest.raises(NotFound):
        service.job_status(ctx, job.id)


def test_worker_killed_between_claim_and_commit(runtime: Runtime, service: MemoryService, ctx: CallerContext,
                                                ns: str, graph: neo4j.Driver, tmp_path: Path) -> None:
    """A worker process attached by URI stops at a fixed point inside the job's transaction and is
    SIGKILLed; another worker takes over after the lease: one document, job done."""
    job = service.submit_memories(ctx, ns, [doc("Crash-proof memory. Written exactly once.")])
    env = child_environment(**store_address(runtime), embedder="hashing", job_lease_s="2",
                            fault_point="job-before-commit")
    process = subprocess.Popen([sys.executable, "-m", "graphmem.cli", "worker", "--data-dir", str(tmp_path),
                                "--log-level", "warning"], env=env, stdout=subprocess.PIPE, text=True)
    try:
        assert process.stdout is not None
        deadline = time.monotonic() + 90
        line = ""
        while "fault point reached" not in line:
            line = process.stdout.readline()
            assert line or process.poll() is None, "the worker exited before the fault point"
            assert time.monotonic() < deadline
        claimed = service.job_status(ctx, job.id)
        assert claimed.status is JobStatus.running and claimed.attempts == 1
        process.send_signal(signal.SIGKILL)
        process.wait(10)
    finally:
        if process.poll() is None:
            process.kill()
    assert query(graph, "MATCH (d:Document) WHERE d.namespace = $ns RETURN count(d) AS c", ns=ns) == [{"c": 0}]

    # the takeover's clock is set against the lease the dead worker left (a real clock gave it the lease's
    # 2 s less what the kill and the checks took, little on a busy machine)
    (lease,) = [row["until"] for row in query(graph, "MATCH (j:Job {id: $id}) RETURN j.lease_until AS until",
                                              id=job.id)]
    clock = [lease - 500]
    takeover = JobWorker(runtime.store, runtime.settings, runtime.job_worker().apply, clock=lambda: clock[0])
    assert not takeover.run_once()  # the dead worker's lease still holds
    clock[0] = lease + 1
    assert takeover.run_once()
    finished = service.job_status(ctx, job.id)
    assert finished.status is JobStatus.done and finished.attempts == 2
    assert query(graph, "MATCH (d:Document) WHERE d.namespace = $ns RETURN count(d) AS c", ns=ns) == [{"c": 1}]
    assert query(graph, "MATCH (f:Fact) WHERE f.namespace = $ns RETURN count(f) AS c", ns=ns) == [{"c": 2}]


def test_a_job_that_keeps_killing_its_workers_fails_and_unblocks(runtime: Runtime, service: MemoryService,
                                                                  ctx: CallerContext, ns: str) -> None:
    """Workers that die mid-job never reach job_fail; the claim counts their attempts instead."""
    doomed = service.submit_memories(ctx, ns, [doc("This job's workers all die.")])
    after = service.submit_memories(ctx, ns, [doc("The job after it.")])
    lease = int(runtime.settings.job_lease_s * 1000)
    clock = [time.time_ns() // 1_000_000]
    dying = JobWorker(runtime.store, runtime.settings, lambda *a: None, clock=lambda: clock[0])
    for attempt in range(1, 4):
        claimed = runtime.store.write(dying._claim)  # claimed, then the worker "dies": no finish, no fail
        assert claimed is not None and claimed["id"] == doomed.id and claimed["attempts"] == attempt
        clock[0] += lease + 1
    survivor = JobWorker(runtime.store, runtime.settings, runtime.job_worker().apply, clock=lambda: clock[0])
    assert survivor.run_once()
    failed = service.job_status(ctx, doomed.id)
    assert failed.status is JobStatus.failed and failed.error and "3 attempts" in failed.error
    assert service.job_status(ctx, after.id).status is JobStatus.done


def test_a_running_head_blocks_its_namespace_only(runtime: Runtime, service: MemoryService, ns: str) -> None:
    ctx = CallerContext.for_namespaces(ns, f"{ns}-other")
    head = service.submit_memories(ctx, ns, [doc("Head of the queue.")])
    behind = service.submit_memories(ctx, ns, [doc("Behind the head.")])
    elsewhere = service.submit_memories(ctx, f"{ns}-other", [doc("Another namespace.")])
    holder = runtime.job_worker()
    claimed = runtime.store.write(holder._claim)
    assert claimed is not None and claimed["id"] == head.id  # oldest first; its lease is still valid
    other = runtime.job_worker()
    drain(other)
    assert service.job_status(ctx, elsewhere.id).status is JobStatus.done
    assert service.job_status(ctx, behind.id).status is JobStatus.queued  # waits for its namespace's head
    assert service.job_status(ctx, head.id).status is JobStatus.running
