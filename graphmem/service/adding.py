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

JOB_POLL_S = 0.25  # how often watching a job reads its status
AfterWrite = Callable[[Tx, list[Document]], None]  # runs inside the add's transaction (a job's done mark)


@dataclass(frozen=True)
class NewMemory:
    """One memory to add, checked for its caller (access, bounds) and keyed: what an add plans with, and what
    the coalescer (``service/coalescing.py``) gathers from many callers."""

    namespace: str
    input: DocumentInput
    request_key: str | None
    request_hash: str | None
    digest: str  # content_hash: the namespace and the text, white space folded


Outcome = tuple[Document, Change] | GraphmemError  # one memory's answer when each stands alone


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
        limit = self.core.limits.batch_max
        if not 1 <= len(items) <= limit:
            writable(ctx, namespace)
            raise InvalidInput(f"a batch holds 1 to {limit} documents", field="items")
        memories = [self.checked(ctx, namespace, item) for item in items]
        request_ids = [m.input.request_id for m in memories if m.input.request_id]
        if len(set(request_ids)) != len(request_ids):
            raise InvalidInput("a request_id appears twice in one batch", field="request_id")
        outcomes = self._commit(memories, self.prepare(memories, progress), after_write, each=False)
        return [outcome for outcome in outcomes if not isinstance(outcome, GraphmemError)]

    def checked(self, ctx: CallerContext, namespace: str, item: DocumentInput) -> NewMemory:
        """One memory checked for its caller: write access to the namespace, and the operator's bounds."""
        ns = writable(ctx, namespace)
        data = checked(item, self.core.limits)
        request_key, request_hash = _add_request(ns, data)
        return NewMemory(ns, data, request_key, request_hash, content_hash(ns, data.content))

    def prepare(self, memories: list[NewMemory], progress: Progress | None = None) -> dict[str, PreparedDocument]:
        """The NLP work of ``memories`` (of any namespaces) in one pass, by digest; text already current in
        its namespace is skipped (the transaction checks again and decides)."""
        def known(tx: Tx) -> set[str]:
            return {digest for ns in dict.fromkeys(m.namespace for m in memories)
                    for digest in _current_by_hash(tx, ns, [m.digest for m in memories if m.namespace == ns])}

        current = self.core.store.read(known)
        fresh: dict[str, str] = {}
        for memory in memories:
            if memory.digest not in current:
                fresh.setdefault(memory.digest, memory.input.content)
        return dict(zip(fresh, self.core.pipeline.prepare(list(fresh.values()), progress), strict=True))

    def add_each(self, memories: list[NewMemory], prepared: dict[str, PreparedDocument]) -> list[Outcome]:
        """Memories of one namespace, prepared, in one transaction, each standing alone: a memory whose
        request_id conflicts gets its error and the others are written (the coalescer's write)."""
        return self._commit(memories, prepared, None, each=True)

    def _commit(self, memories: list[NewMemory], prepared: dict[str, PreparedDocument],
                after_write: AfterWrite | None, each: bool) -> list[Outcome]:
        """The transaction of an add. A request_id already used is answered by the memory it created (the
        same request) or a conflict (another request, or its memory deleted); with ``each`` false a
        conflict refuses the whole batch before anything is written. A request_id sent twice within the
        batch (two callers of the coalescer) is a retry of its first."""
        ns, core = memories[0].namespace, self.core

        def write(tx: Tx) -> tuple[list[Outcome], str, list[str]]:
            keys = list(dict.fromkeys(m.request_key for m in memories if m.request_key))
            by_request = {row["request_key"]: row for row in
                          tx.run("documents_by_request_keys", request_keys=keys, namespace=ns)} if keys else {}
            deleted = [key for key in keys if key not in by_request]
            tombstoned = {row["request_key"] for row in tx.run(
                "tombstones_for_request_keys", namespace=ns,
                request_keys=[tombstone_key(key) for key in deleted])} if deleted else set()
            current = _current_by_hash(tx, ns, [m.digest for m in memories])
            late: dict[str, str] = {}
            for memory in memories:
                if memory.digest not in current and memory.digest not in prepared:
                    late.setdefault(memory.digest, memory.input.content)  # the first text of a hash, as planned
            if late:  # current when planned, gone since (updated or forgotten meanwhile): a rare race
                prepared.update(zip(late, core.pipeline.prepare(list(late.values())), strict=True))
            results: list[tuple[Document | str, Change] | GraphmemError] = []
            batch: list[tuple[dict[str, Any], PreparedDocument]] = []
            now = core.clock()
            for memory in memories:
                data, request_key = memory.input, memory.request_key
                try:
                    if request_key is not None and tombstone_key(request_key) in tombstoned:
                        raise Conflict(f"request_id {data.request_id!r} created a memory that has since been "
                                       "deleted", next_step="send new content with a new request_id")
                    if request_key in by_request:
                        check_same_request(by_request[request_key]["request_hash"], memory.request_hash,
                                           data.request_id)
                        results.append((by_request[request_key]["id"], Change.unchanged))
                        continue
                except Conflict as exc:
                    if not each:
                        raise
                    results.append(exc)
                    continue
                if memory.digest in current:  # identical to a current memory of the namespace: that one
                    results.append((current[memory.digest], Change.unchanged))
                else:
                    document = document_record(
                        now=now, namespace=ns, content=data.content, digest=memory.digest, chain_id=None,
                        version=1, created_at=None, title=data.title, source=data.source,
                        metadata=json.dumps(data.metadata, sort_keys=True, ensure_ascii=False)
                        if data.metadata else None, path=data.path,
                        request_key=request_key, request_hash=memory.request_hash,
                        fact_count=len(prepared[memory.digest].facts))
                    current[memory.digest] = str(document["id"])  # the same text twice in one batch: one memory
                    batch.append((document, prepared[memory.digest]))
                    results.append((Document.model_validate({**document, "latest_id": document["id"]}),
                                    Change.created))
                if request_key is not None:  # the same request_id again in this batch: a retry of this one
                    by_request[request_key] = {"id": _id_of(results[-1]), "request_hash": memory.request_hash}
            entity_keys = write_documents(tx, ns, batch, now, core.write_options) if batch else []
            done: list[Outcome] = [
                r if isinstance(r, GraphmemError) else
                (r[0] if isinstance(r[0], Document) else fetch_document(tx, r[0], [ns]), r[1]) for r in results]
            if after_write is not None:
                after_write(tx, [r[0] for r in done if not isinstance(r, GraphmemError)])
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

    async def watch(self, ctx: CallerContext, job_id: str, poll_s: float = JOB_POLL_S) -> AsyncIterator[JobInfo]:
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


def _id_of(result: tuple[Document | str, Change] | GraphmemError) -> str:
    assert not isinstance(result, GraphmemError)
    return result[0].id if isinstance(result[0], Document) else result[0]


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
