"""Adding memories: one or a batch in one transaction, as a queued job, or from files (each item on its own).

Text identical (white space folded) to a current memory of the namespace returns that memory instead of a
second copy; ``request_id`` makes an add retry-safe (the same request returns the first result, another
request under the same id is a conflict, also after the memory was deleted).
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import AsyncIterator, Callable
from dataclasses import dataclass
from typing import Any

from graphmem import records
from graphmem.errors import Conflict, GraphmemError, InvalidInput, Unavailable
from graphmem.ingest.jobs import MAX_JOB_BYTES, get_job, job_record
from graphmem.ingest.pipeline import PreparedDocument, Progress
from graphmem.ingest.write import write_documents
from graphmem.model import CallerContext, DocumentInput, IngestItem, UpdateInput, check_id, checked
from graphmem.records import content_hash, document_record, tombstone_key
from graphmem.results import Change, Document, ErrorReport, IngestOutcome, JobInfo, JobStatus
from graphmem.service.access import writable
from graphmem.service.documents import Documents
from graphmem.service.shared import Core, check_same_request, fetch_document
from graphmem.store.driver import Tx

AfterWrite = Callable[[Tx, list[Document]], None]  # runs inside the add's transaction (a job's done mark)


@dataclass
class _AddPlan:
    """An add, validated and prepared, waiting for its transaction."""

    namespace: str
    inputs: list[DocumentInput]
    requests: list[tuple[str | None, str | None]]
    hashes: list[str]
    prepared: dict[str, PreparedDocument]


class Adding:
    def __init__(self, core: Core, documents: Documents) -> None:
        self.core = core
        self.documents = documents

    def add(self, ctx: CallerContext, namespace: str, items: list[DocumentInput],
            after_write: AfterWrite | None = None, progress: Progress | None = None) -> list[tuple[Document, Change]]:
        """Store up to ``limits.batch_max`` new memories in one transaction (UNWIND statements), each with
        what happened to it (created, or unchanged: a retry or text already current). An item whose
        request_id was used for a different request makes the whole batch a conflict: nothing is written.
        ``after_write`` runs inside the same transaction, after the writes."""
        return self._commit(self._plan(ctx, namespace, items, progress), after_write)

    def _plan(self, ctx: CallerContext, namespace: str, items: list[DocumentInput],
              progress: Progress | None) -> _AddPlan:
        """Everything before the transaction: validation, request keys, hashes, and the NLP work, which
        is skipped for text already current in the namespace (the transaction checks again and decides)."""
        ns = writable(ctx, namespace)
        limit = self.core.limits.batch_max
        if not 1 <= len(items) <= limit:
            raise InvalidInput(f"a batch holds 1 to {limit} documents", field="items")
        inputs = [checked(item, self.core.limits) for item in items]
        request_ids = [i.request_id for i in inputs if i.request_id]
        if len(set(request_ids)) != len(request_ids):
            raise InvalidInput("a request_id appears twice in one batch", field="request_id")
        requests = [_add_request(ns, i) for i in inputs]
        hashes = [content_hash(ns, i.content) for i in inputs]
        known = self.core.store.read(lambda tx: _current_by_hash(tx, ns, hashes))
        fresh: dict[str, int] = {}
        for position, digest in enumerate(hashes):
            if digest not in known:
                fresh.setdefault(digest, position)
        prepared = dict(zip(fresh, self.core.pipeline.prepare([inputs[i].content for i in fresh.values()],
                                                              progress), strict=True))
        return _AddPlan(ns, inputs, requests, hashes, prepared)

    def _commit(self, plan: _AddPlan, after_write: AfterWrite | None) -> list[tuple[Document, Change]]:
        ns, prepared, core = plan.namespace, plan.prepared, self.core

        def write(tx: Tx) -> tuple[list[tuple[Document, Change]], str, list[str]]:
            keys = [key for key, _ in plan.requests if key]
            by_request = {row["request_key"]: row for row in
                          tx.run("documents_by_request_keys", request_keys=keys, namespace=ns)} if keys else {}
            deleted = [key for key in keys if key not in by_request]
            if deleted and tx.run("tombstones_for_request_keys", namespace=ns,
                                  request_keys=[tombstone_key(key) for key in deleted]):
                raise Conflict("a request_id of this batch created a memory that has since been deleted",
                               next_step="send new content with a new request_id")
            current = _current_by_hash(tx, ns, plan.hashes)
            late: dict[str, str] = {}
            for data, digest in zip(plan.inputs, plan.hashes, strict=True):
                if digest not in current and digest not in prepared:
                    late.setdefault(digest, data.content)  # the first text of a hash, as in planning
            if late:  # current when planned, gone since (updated or forgotten meanwhile): a rare race
                prepared.update(zip(late, core.pipeline.prepare(list(late.values())), strict=True))
            results: list[tuple[Document | str, Change]] = []
            batch: list[tuple[dict[str, Any], PreparedDocument]] = []
            now = core.clock()
            for data, (request_key, request_hash), digest in zip(plan.inputs, plan.requests, plan.hashes,
                                                                 strict=True):
                if request_key in by_request:
                    check_same_request(by_request[request_key]["request_hash"], request_hash, data.request_id)
                    results.append((by_request[request_key]["id"], Change.unchanged))
                elif digest in current:  # identical to a current memory of the namespace: that one
                    results.append((current[digest], Change.unchanged))
                else:
                    document = document_record(
                        now=now, namespace=ns, content=data.content, digest=digest, chain_id=None, version=1,
                        created_at=None, title=data.title, source=data.source,
                        metadata=json.dumps(data.metadata, sort_keys=True, ensure_ascii=False)
                        if data.metadata else None, path=data.path,
                        request_key=request_key, request_hash=request_hash,
                        fact_count=len(prepared[digest].facts))
                    current[digest] = str(document["id"])  # the same text twice in one batch: one memory
                    batch.append((document, prepared[digest]))
                    results.append((Document.model_validate({**document, "latest_id": document["id"]}),
                                    Change.created))
            entity_keys = write_documents(tx, ns, batch, now, core.write_options) if batch else []
            done = [(r if isinstance(r, Document) else fetch_document(tx, r, [ns]), change) for r, change in results]
            if after_write is not None:
                after_write(tx, [document for document, _ in done])
            return done, ns, entity_keys

        return core.write_labelled(write)

    # ---- asynchronous ingestion -------------------------------------------------------------------------

    def submit(self, ctx: CallerContext, namespace: str, items: list[DocumentInput]) -> JobInfo:
        """Queue documents for ingestion and return the job at once; a worker applies it exactly once."""
        ns = writable(ctx, namespace)
        limit = self.core.limits.batch_max
        if not 1 <= len(items) <= limit:
            raise InvalidInput(f"a batch holds 1 to {limit} documents", field="items")
        inputs = [checked(item, self.core.limits) for item in items]
        record = job_record(ns, [i.model_dump(exclude_none=True) for i in inputs], self.core.clock())
        size = len(str(record["payload"]).encode())
        if size > MAX_JOB_BYTES:
            raise InvalidInput(f"a job holds at most {MAX_JOB_BYTES} bytes of memories as JSON; this one has {size}: "
                               "submit it as several jobs", field="items")
        self.core.store.write(lambda tx: tx.run("job_create", job=record))
        return get_job(self.core.store, ctx, str(record["id"]))

    def job_status(self, ctx: CallerContext, job_id: str) -> JobInfo:
        """A job of a namespace the caller can read; any other id is not found."""
        return get_job(self.core.store, ctx, check_id(job_id))

    async def watch(self, ctx: CallerContext, job_id: str, poll_s: float) -> AsyncIterator[JobInfo]:
        """The job now, then again each time its state changes, ending with the state it ends in (done or
        failed). Its status is read every ``poll_s`` seconds in a worker thread (the driver blocks)."""
        seen: tuple[object, ...] | None = None
        while True:
            job = await asyncio.to_thread(self.job_status, ctx, job_id)
            state = (job.status, job.attempts, job.started_at, job.finished_at)
            if state != seen:
                seen = state
                yield job
            if job.status in (JobStatus.done, JobStatus.failed):
                return
            await asyncio.sleep(poll_s)

    # ---- files ------------------------------------------------------------------------------------------

    def ingest(self, ctx: CallerContext, namespace: str, items: list[IngestItem],
               progress: Progress | None = None) -> list[IngestOutcome]:
        """Ingest many items, each succeeding or failing on its own (the CLI's path).

        A ``versioned`` item (a file: its source is its identity) whose source is a current memory with
        other content updates that memory; two current memories with that source make it an error rather
        than a guess. Other items are added in one batch, or one by one when the batch as a whole is
        refused (retried items are not counted twice by ``progress``). Sources of unversioned items (JSONL
        lines) are provenance only: many lines may share one."""
        ns = writable(ctx, namespace)
        sources = sorted({i.document.source for i in items if i.versioned and i.document.source is not None})
        latest: dict[str, list[dict[str, str]]] = {}
        if sources:
            for row in self.core.store.read(lambda tx: tx.run("documents_latest_by_sources", sources=sources,
                                                              namespace=ns)):
                latest.setdefault(row["source"], []).append(row)
        outcomes: list[IngestOutcome | None] = [None] * len(items)
        adds: list[int] = []
        for position, item in enumerate(items):
            document = item.document
            current = latest.get(document.source or "", []) if item.versioned else []
            if len(current) > 1:
                outcomes[position] = _failed(Conflict(
                    f"{len(current)} current memories have source {document.source!r}",
                    next_step="forget all but one of them, then ingest again"))
            elif current and current[0]["content_hash"] != content_hash(ns, document.content):
                outcomes[position] = _attempt(self._new_version, ctx, current[0]["id"], document)
            else:
                adds.append(position)
        if adds:
            try:
                added = [IngestOutcome(change=change, document=document) for document, change in
                         self.add(ctx, ns, [items[i].document for i in adds], progress=progress)]
            except GraphmemError as exc:  # the batch as a whole was refused: each item on its own
                if isinstance(exc, Unavailable):
                    raise
                added = [_attempt(self._add_alone, ctx, ns, items[i].document) for i in adds]
            for position, outcome in zip(adds, added, strict=True):
                outcomes[position] = outcome
        return [o for o in outcomes if o is not None]

    def _new_version(self, ctx: CallerContext, doc_id: str, document: DocumentInput) -> tuple[Document, Change]:
        """A changed file: its memory's next version (``Documents.update`` says whether it wrote one)."""
        update = UpdateInput(content=document.content, title=document.title, metadata=document.metadata,
                             path=document.path, request_id=document.request_id)
        changed = self.documents.update(ctx, doc_id, update)
        return changed.document, changed.change

    def _add_alone(self, ctx: CallerContext, namespace: str, document: DocumentInput) -> tuple[Document, Change]:
        return self.add(ctx, namespace, [document])[0]


def _current_by_hash(tx: Tx, namespace: str, hashes: list[str]) -> dict[str, str]:
    rows = tx.run("documents_by_current_hash", hash_keys=sorted(set(hashes)), namespace=namespace)
    return {row["hash_key"]: row["id"] for row in rows}


def _add_request(namespace: str, data: DocumentInput) -> tuple[str | None, str | None]:
    """(request_key, request_hash) of an add; both None without a request_id."""
    if not data.request_id:
        return None, None
    payload = {"op": "add", "namespace": namespace, "content": data.content, "title": data.title,
               "source": data.source, "metadata": data.metadata, "path": data.path}
    return records.request_key(namespace, data.request_id), records.request_hash(payload)


def _failed(error: GraphmemError) -> IngestOutcome:
    return IngestOutcome(change=Change.failed,
                         error=ErrorReport(code=error.code, message=error.message, details=error.details))


def _attempt(call: Callable[..., tuple[Document, Change]], *args: object) -> IngestOutcome:
    """One item's outcome: its document, or the error that belongs to it alone (an unreachable database
    belongs to every item: it stops the run)."""
    try:
        document, change = call(*args)
    except Unavailable:
        raise
    except GraphmemError as exc:
        return _failed(exc)
    return IngestOutcome(change=change, document=document)
