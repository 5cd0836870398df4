"""The one API both front ends call. It validates input, checks the caller's namespaces, and runs each
logical operation as one transaction of named statements (all of it commits, or nothing does).

Isolation rules, applied in every method:

* a namespace the caller cannot read is ``NotFound`` (it is invisible); writing to a namespace the caller
  cannot write is ``Forbidden``; nothing is looked up to decide either;
* an id is looked up only inside the caller's readable namespaces, so an id of another namespace is
  ``NotFound`` exactly like an id that does not exist; nothing is looked up across namespaces;
* a write through an id the caller can read but not write is ``Forbidden``.

Write safety: ``request_id`` makes add, update and forget retry-safe (same request → first result;
different request under the same id → ``Conflict``); ``expected_version`` is a compare-and-swap on the
chain's latest version. Every change to a memory first locks its chain's latest version.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from graphmem import records
from graphmem.errors import Conflict, Forbidden, GraphmemError, InvalidInput, NotFound
from graphmem.export import QUERY_SEEDS, ExportRequest, ExportResult, RenderedExport, cursor_key, export_graph
from graphmem.forgetting import Forgetting
from graphmem.ingest.jobs import MAX_JOB_CHARS, JobInfo, get_job, job_record
from graphmem.ingest.pipeline import PreparedDocument
from graphmem.ingest.write import write_documents
from graphmem.model import (
    CallerContext,
    Document,
    DocumentInfo,
    DocumentInput,
    DocumentSummary,
    Page,
    UpdateInput,
    check_id,
)
from graphmem.records import content_hash, document_record, tombstone_key
from graphmem.searching import Searching
from graphmem.store.driver import Tx
from graphmem.store.views import CURRENT, View

PREVIEW_CHARS = 280
MAX_PAGE = 1_000_000_000  # keeps SKIP inside a 64-bit integer on both servers


@dataclass
class _AddPlan:
    """An add, validated and prepared, waiting for its transaction."""

    namespace: str
    inputs: list[DocumentInput]
    requests: list[tuple[str | None, str | None]]
    hashes: list[str]
    prepared: dict[str, PreparedDocument]


class MemoryService(Forgetting, Searching):
    """The one API both front ends call (see the module docstring)."""

    # ---- documents ----------------------------------------------------------------------------------

    def add_document(self, ctx: CallerContext, namespace: str, content: str, title: str | None = None,
                     source: str | None = None, metadata: dict[str, Any] | None = None,
                     request_id: str | None = None) -> Document:
        """Store a new memory (version 1) and its sentence facts, in one transaction."""
        item = {"content": content, "title": title, "source": source, "metadata": metadata,
                "request_id": request_id}
        return self.add_documents(ctx, namespace, [item])[0]

    def add_documents(self, ctx: CallerContext, namespace: str, items: list[dict[str, Any]],
                      also: Callable[[Tx, list[Document]], None] | None = None) -> list[Document]:
        """Store up to ``limits.batch_max`` new memories in one transaction (UNWIND statements).

        Each item has ``content`` and optional ``title``, ``source``, ``metadata``, ``request_id``. An item
        whose request_id was already used with the same request returns the original memory; with a
        different request the whole batch is a conflict and nothing is written. ``also`` runs inside the
        same transaction, after the writes (a job's done mark).
        """
        return self._commit_adds(self._plan_adds(ctx, namespace, items), also)

    def _plan_adds(self, ctx: CallerContext, namespace: str, items: list[dict[str, Any]]) -> _AddPlan:
        """Everything before the transaction: validation, request keys, hashes, and the NLP work, which
        is skipped for text already current in the namespace (the transaction checks again and decides)."""
        ns = self._writable(ctx, namespace)
        inputs = self._parse_items(items)
        request_ids = [i.request_id for i in inputs if i.request_id]
        if len(set(request_ids)) != len(request_ids):
            raise InvalidInput("a request_id appears twice in one batch", field="request_id")
        requests = [self._add_request(ns, i) for i in inputs]
        hashes = [content_hash(ns, i.content) for i in inputs]
        known = self._current_by_hash(ns, hashes)
        fresh: dict[str, int] = {}
        for position, digest in enumerate(hashes):
            if digest not in known:
                fresh.setdefault(digest, position)
        prepared = dict(zip(fresh, self.pipeline.prepare([inputs[i].content for i in fresh.values()]),
                            strict=True))
        return _AddPlan(ns, inputs, requests, hashes, prepared)

    def _commit_adds(self, plan: _AddPlan, also: Callable[[Tx, list[Document]], None] | None) -> list[Document]:
        ns, prepared = plan.namespace, plan.prepared

        def write(tx: Tx) -> tuple[list[Document], str, list[str]]:
            keys = [key for key, _ in plan.requests if key]
            by_request = {row["request_key"]: row for row in
                          tx.run("documents_by_request_keys", request_keys=keys, namespace=ns)} if keys else {}
            deleted = [key for key in keys if key not in by_request]
            if deleted and tx.run("tombstones_for_request_keys", namespace=ns,
                                  request_keys=[tombstone_key(key) for key in deleted]):
                raise Conflict("a request_id of this batch created a memory that has since been deleted",
                               next_step="send new content with a new request_id")
            current = {row["hash_key"]: row["id"] for row in
                       tx.run("documents_by_current_hash", hash_keys=sorted(set(plan.hashes)), namespace=ns)}
            late: dict[str, str] = {}
            for data, digest in zip(plan.inputs, plan.hashes, strict=True):
                if digest not in current and digest not in prepared:
                    late.setdefault(digest, data.content)  # the first text of a hash, as in planning
            if late:  # current when planned, gone since (updated or forgotten meanwhile): a rare race
                prepared.update(zip(late, self.pipeline.prepare(list(late.values())), strict=True))
            results: list[Document | str] = []
            batch: list[tuple[dict[str, Any], PreparedDocument]] = []
            now = self.clock()
            for data, (request_key, request_hash), digest in zip(plan.inputs, plan.requests, plan.hashes,
                                                                 strict=True):
                if request_key in by_request:
                    self._same_request(by_request[request_key]["request_hash"], request_hash, data.request_id)
                    results.append(by_request[request_key]["id"])
                elif digest in current:  # identical to a current memory of the namespace: that one
                    results.append(current[digest])
                else:
                    document = document_record(
                        now=now, namespace=ns, content=data.content, digest=digest, chain_id=None, version=1,
                        created_at=None, title=data.title, source=data.source,
                        metadata=json.dumps(data.metadata, sort_keys=True, ensure_ascii=False)
                        if data.metadata else None,
                        request_key=request_key, request_hash=request_hash,
                        fact_count=len(prepared[digest].facts))
                    current[digest] = document["id"]  # the same text twice in one batch: one memory
                    batch.append((document, prepared[digest]))
                    results.append(Document.model_validate({**document, "latest_id": document["id"]}))
            entity_keys = write_documents(tx, ns, batch, now, self._write_options) if batch else []
            documents = [r if isinstance(r, Document) else self._fetch(tx, r, [ns]) for r in results]
            if also is not None:
                also(tx, documents)
            return documents, ns, entity_keys

        return self._write_labelled(write)

    def _parse_items(self, items: object) -> list[DocumentInput]:
        if not isinstance(items, list) or not 1 <= len(items) <= self.limits.batch_max:
            raise InvalidInput(f"a batch holds 1 to {self.limits.batch_max} documents", field="items")
        inputs: list[DocumentInput] = []
        for position, item in enumerate(items):
            if not isinstance(item, dict):
                raise InvalidInput(f"items[{position}] must be a map", field="items")
            try:
                parsed = DocumentInput.parse(self.limits, **item)
            except InvalidInput as exc:
                raise InvalidInput(f"items[{position}]: {exc.message}" if len(items) > 1 else exc.message,
                                   **exc.details) from None
            assert isinstance(parsed, DocumentInput)
            inputs.append(parsed)
        return inputs

    # ---- asynchronous ingestion ---------------------------------------------------------------------

    def submit_documents(self, ctx: CallerContext, namespace: str, items: list[dict[str, Any]]) -> JobInfo:
        """Queue documents for ingestion and return the job at once; a worker applies it exactly once."""
        ns = self._writable(ctx, namespace)
        inputs = self._parse_items(items)
        size = sum(len(i.content) for i in inputs)
        if size > MAX_JOB_CHARS:
            raise InvalidInput(f"a job holds at most {MAX_JOB_CHARS} characters of content; this one has {size}",
                               field="items")
        record = job_record(ns, [i.model_dump(exclude_none=True) for i in inputs], self.clock())
        self.store.write(lambda tx: tx.run("job_create", job=record))
        return get_job(self.store, ctx, record["id"])

    def job_status(self, ctx: CallerContext, job_id: str) -> JobInfo:
        """A job of a namespace the caller can read; any other id is not found."""
        return get_job(self.store, ctx, check_id(job_id))

    def _current_by_hash(self, namespace: str, hashes: list[str]) -> dict[str, str]:
        def read(tx: Tx) -> dict[str, str]:
            rows = tx.run("documents_by_current_hash", hash_keys=sorted(set(hashes)), namespace=namespace)
            return {row["hash_key"]: row["id"] for row in rows}

        return self.store.read(read)

    @staticmethod
    def _add_request(namespace: str, data: DocumentInput) -> tuple[str | None, str | None]:
        """(request_key, request_hash) of an add; both None without a request_id."""
        if not data.request_id:
            return None, None
        payload = {"op": "add", "namespace": namespace, "content": data.content, "title": data.title,
                   "source": data.source, "metadata": data.metadata}
        return f"{namespace}|{data.request_id}", records.request_hash(payload)

    def get_document(self, ctx: CallerContext, id: str) -> Document:
        """Any version by its id; the result says its version, whether it is latest, and the latest id."""
        doc_id = check_id(id)
        return self.store.read(lambda tx: self._fetch(tx, doc_id, ctx.readable))

    def list_documents(self, ctx: CallerContext, namespace: str, page: int = 1, limit: int = 20,
                       view: View = CURRENT) -> Page[DocumentSummary]:
        """Newest first (recorded time, then id), with the total of the view."""
        ns = self._readable(ctx, namespace)
        max_limit = self.limits.page_size_max
        if not isinstance(page, int) or isinstance(page, bool) or not 1 <= page <= MAX_PAGE:
            raise InvalidInput(f"page must be an integer from 1 to {MAX_PAGE}", field="page")
        if not isinstance(limit, int) or isinstance(limit, bool) or not 1 <= limit <= max_limit:
            raise InvalidInput(f"limit must be an integer from 1 to {max_limit}", field="limit")
        params = {"namespace": ns, **view.params()}

        def read(tx: Tx) -> Page[DocumentSummary]:
            total_row = tx.single("documents_count", **params)
            rows = tx.run("documents_page", skip=(page - 1) * limit, limit=limit,
                          preview_chars=PREVIEW_CHARS, **params)
            items = [DocumentSummary.model_validate({**r["document"], "preview": r["preview"],
                                                     "parent_id": r["parent_id"]}) for r in rows]
            return Page[DocumentSummary](items=items, total=int(total_row["total"]) if total_row else 0,
                                         page=page, limit=limit)

        return self.store.read(read)

    def history(self, ctx: CallerContext, id: str) -> list[DocumentInfo]:
        """The whole chain of the memory holding ``id``, newest version first."""
        doc_id = check_id(id)

        def read(tx: Tx) -> list[DocumentInfo]:
            rows = tx.run("chain_history", id=doc_id, namespaces=ctx.readable,
                          limit=self.limits.history_max)
            if not rows:
                raise NotFound(f"no memory with id {doc_id!r}", id=doc_id)
            return [DocumentInfo.from_row(row) for row in rows]

        return self.store.read(read)

    def update_document(self, ctx: CallerContext, id: str, content: str,
                        expected_version: int | None = None, request_id: str | None = None) -> Document:
        """Write a new version of the memory whose latest version is ``id``.

        The old version and its facts keep their text and get ``is_latest=false`` and ``superseded_at``.
        """
        doc_id = check_id(id)
        data = UpdateInput.parse(self.limits, content=content, expected_version=expected_version,
                                 request_id=request_id)
        assert isinstance(data, UpdateInput)
        prepared = self.pipeline.prepare([data.content])[0]

        def write(tx: Tx) -> tuple[Document, str, list[str]]:
            row = self._lock_chain(tx, ctx, doc_id)
            ns = row["namespace"]
            request_key = f"{ns}|{data.request_id}" if data.request_id else None
            request_hash = records.request_hash({"op": "update", "id": doc_id, "content": data.content,
                                                 "expected_version": data.expected_version})
            if request_key:
                existing = tx.single("documents_by_request_keys", request_keys=[request_key], namespace=ns)
                if existing is not None:
                    self._same_request(existing["request_hash"], request_hash, data.request_id)
                    return self._fetch(tx, existing["id"], [ns]), ns, []
            self._check_updatable(row, doc_id, data.expected_version)
            digest = content_hash(ns, data.content)
            if digest == row["latest_content_hash"]:  # the same text again: nothing to version
                return self._fetch(tx, row["latest_id"], [ns]), ns, []
            twin = tx.single("documents_by_current_hash", hash_keys=[digest], namespace=ns)
            if twin is not None:
                raise Conflict(f"memory {twin['id']} already holds exactly this content",
                               next_step="update or forget that memory instead", existing_id=twin["id"])
            now = max(self.clock(), row["latest_recorded_at"] + 1)  # as-of never sees two versions
            document = document_record(
                now=now, namespace=ns, content=data.content, digest=digest, chain_id=row["chain_id"],
                version=row["latest_version"] + 1, created_at=row["created_at"], title=row["title"],
                source=row["source"], metadata=row["metadata"], request_key=request_key,
                request_hash=request_hash if request_key else None, fact_count=len(prepared.facts))
            tx.run("version_supersede", id=row["latest_id"], namespace=ns, now=now)
            entity_keys = write_documents(tx, ns, [(document, prepared)], now, self._write_options)
            tx.run("version_link", new_id=document["id"], old_id=row["latest_id"], namespace=ns)
            return Document.model_validate({**document, "parent_id": row["latest_id"],
                                            "latest_id": document["id"]}), ns, entity_keys

        return self._write_labelled(write)

    @staticmethod
    def _check_updatable(row: dict[str, Any], doc_id: str, expected_version: int | None) -> None:
        if row["is_redacted"]:
            raise Conflict("this memory was redacted and cannot be updated", next_step="add a new memory instead")
        if row["is_forgotten"]:
            raise Conflict("this memory is forgotten", next_step="restore it, then update it")
        if not row["is_latest"]:
            raise Conflict(f"{doc_id} is version {row['version']}, not the latest",
                           next_step=f"update the latest version {row['latest_id']}",
                           latest_id=row["latest_id"], latest_version=row["latest_version"])
        if expected_version is not None and expected_version != row["latest_version"]:
            raise Conflict(
                f"expected version {expected_version}, but the latest is {row['latest_version']}",
                next_step="get the latest version, merge your change, and send it with that version",
                latest_id=row["latest_id"], latest_version=row["latest_version"])

    def ingest_document(self, ctx: CallerContext, namespace: str, content: str, title: str | None = None,
                        source: str | None = None, metadata: dict[str, Any] | None = None,
                        request_id: str | None = None) -> Document:
        """Add, or, when ``source`` names a current memory of the namespace, update that memory
        (re-ingesting a changed file makes a new version, not a second memory)."""
        item = {"content": content, "title": title, "source": source, "metadata": metadata,
                "request_id": request_id}
        outcome = self.ingest_items(ctx, namespace, [item], versioned=[source is not None])[0]
        if isinstance(outcome, GraphmemError):
            raise outcome
        return outcome

    def ingest_items(self, ctx: CallerContext, namespace: str, items: list[dict[str, Any]],
                     versioned: list[bool] | None = None) -> list[Document | GraphmemError]:
        """Ingest many items, each succeeding or failing on its own (the CLI's path).

        An item marked ``versioned`` (a file: its source is its identity) whose source is a current memory
        with other content updates that memory; two current memories with that source make it an error
        rather than a guess. Other items are added in one batch, or one by one when the batch as a whole
        is refused. Sources of unversioned items (JSONL lines) are provenance only: many lines may share
        one."""
        ns = self._writable(ctx, namespace)
        flags = versioned if versioned is not None else [False] * len(items)
        sources = sorted({i["source"] for i, v in zip(items, flags, strict=True)
                          if v and isinstance(i.get("source"), str)})
        latest: dict[str, list[dict[str, Any]]] = {}
        if sources:
            for row in self.store.read(lambda tx: tx.run("documents_latest_by_sources", sources=sources,
                                                         namespace=ns)):
                latest.setdefault(row["source"], []).append(row)
        outcomes: list[Document | GraphmemError | None] = [None] * len(items)
        adds: list[int] = []
        for position, (item, is_versioned) in enumerate(zip(items, flags, strict=True)):
            current = latest.get(str(item.get("source")), []) if is_versioned else []
            content = item.get("content")
            if len(current) > 1:
                outcomes[position] = Conflict(f"{len(current)} current memories have source {item['source']!r}",
                                              next_step="forget all but one of them, then ingest again")
            elif current and isinstance(content, str) and current[0]["content_hash"] != content_hash(ns, content):
                outcomes[position] = self._attempt(self.update_document, ctx, current[0]["id"], content,
                                                   request_id=item.get("request_id"))
            else:
                adds.append(position)
        if adds:
            try:
                added: list[Document | GraphmemError] = list(
                    self.add_documents(ctx, ns, [items[i] for i in adds]))
            except (InvalidInput, Conflict):
                added = [self._attempt(self._add_one, ctx, ns, items[i]) for i in adds]
            for position, outcome in zip(adds, added, strict=True):
                outcomes[position] = outcome
        return [o for o in outcomes if o is not None]

    def _add_one(self, ctx: CallerContext, namespace: str, item: dict[str, Any]) -> Document:
        return self.add_documents(ctx, namespace, [item])[0]

    @staticmethod
    def _attempt(call: Callable[..., Document], *args: Any, **kwargs: Any) -> Document | GraphmemError:
        """One item's outcome: its document, or the error that belongs to it alone."""
        try:
            return call(*args, **kwargs)
        except (InvalidInput, Conflict, NotFound, Forbidden) as exc:
            return exc

    def namespace_counts(self, ctx: CallerContext, namespace: str) -> dict[str, int]:
        """Documents (every version), facts, entities and triples stored in a namespace."""
        ns = self._readable(ctx, namespace)
        row = self.store.read(lambda tx: tx.single("namespace_counts", namespace=ns))
        return {k: int(v) for k, v in (row or {}).items()}

    # ---- export -------------------------------------------------------------------------------------

    def export(self, ctx: CallerContext, namespace: str, seed: object, caps: object, cursor: str | None = None,
               view: View = CURRENT, format: str = "json",
               target_namespace: str | None = None) -> ExportResult | RenderedExport:
        """One page of the bounded evidence graph around ``seed`` (``graphmem/export.py`` says what is
        walked, how the caps hold, what the completeness fields mean and what the cursor binds).

        ``seed`` and ``caps`` are ``export`` models or their dicts, e.g. ``{"kind": "query", "query": ...}``
        and ``{"depth": 2}``; the next page is the same call with the page's ``next_cursor``. ``format`` is
        json (an ``ExportResult``), graphml or cypher (a ``RenderedExport``); a cypher script recreates the
        page in ``target_namespace`` (default: this namespace)."""
        ns = self._readable(ctx, namespace)
        request = ExportRequest.parse(ns, seed, caps, view, format, target_namespace)

        def seed_facts(query: str, pinned: View) -> list[str]:
            return [hit.fact_id for hit in self.search(ctx, query, namespaces=[ns], limit=QUERY_SEEDS,
                                                          view=pinned)]

        return export_graph(self.store, cursor_key(self.settings), self.clock(), request, cursor, seed_facts)
