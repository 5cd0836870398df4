"""Reading memories and writing new versions of them.

Reads: one version by id (from the caller's readable namespaces only), pages of a namespace's memories
(newest first, keyset cursor or bounded offset), pages of a memory's versions. Lists in the current view
are pinned to the first page's time, like exports, so a walk of the pages sees one state of the memory
even while memories are added or updated.

Writes: ``update`` is a new version (compare-and-swap with ``expected_version``, retry-safe with
``request_id``); the old version and its facts keep their text and get ``is_latest=false`` and
``superseded_at``.
"""

from __future__ import annotations

import builtins
import json
from typing import Any

from pydantic import BaseModel

from graphmem import records
from graphmem.cursors import mismatch
from graphmem.errors import Conflict, NotFound
from graphmem.ingest.write import write_documents
from graphmem.model import (
    CallerContext,
    DocumentListOptions,
    DocumentSort,
    HistoryOptions,
    MemoryDetailOptions,
    UpdateInput,
    check_id,
    checked,
)
from graphmem.records import content_hash, document_record
from graphmem.results import (
    Change,
    Changed,
    Document,
    DocumentInfo,
    DocumentPage,
    DocumentSummary,
    EntityRef,
    FactInfo,
    HistoryPage,
    MemoryDetail,
    NamespaceCounts,
)
from graphmem.service.access import read_in, readable
from graphmem.service.paging import Listing, read_page
from graphmem.service.shared import (
    Core,
    check_same_request,
    checked_count,
    checked_ids,
    fetch_document,
    fetch_documents,
    lock_chain,
)
from graphmem.store.driver import Tx

PREVIEW_CHARS = 280


DOCUMENTS = Listing[DocumentSummary](
    purpose="documents", count="documents_count", key_names=("recorded_at", "title", "id"),
    pages={DocumentSort.newest: "documents_page", DocumentSort.oldest: "documents_page_oldest",
           DocumentSort.by_title: "documents_page_by_title"},
    item=lambda row: DocumentSummary.model_validate({**row["document"], "preview": row["preview"],
                                                     "parent_memory_id": row["parent_memory_id"]}),
    key=lambda item: {"recorded_at": item.recorded_at, "title": item.title or "", "id": item.id})

class _HistoryCursor(BaseModel):
    id: str
    version: int


class Documents:
    def __init__(self, core: Core) -> None:
        self.core = core

    def get(self, ctx: CallerContext, doc_id: str) -> Document:
        """Any version by its id; the result says its version, whether it is latest, and the latest id."""
        checked_id = check_id(doc_id)
        return self.core.store.read(lambda tx: fetch_document(tx, checked_id, ctx.readable))

    def detail(self, ctx: CallerContext, doc_id: str, options: MemoryDetailOptions) -> MemoryDetail:
        """A version with its facts in order and the entities they mention, each list bounded by ``options``."""
        checked_id = check_id(doc_id)
        params = {"id": checked_id, "namespaces": ctx.readable}

        def read(tx: Tx) -> MemoryDetail:
            memory = fetch_document(tx, checked_id, ctx.readable)
            facts = _facts_of(tx, [checked_id], options.facts, ctx.readable).get(checked_id, [])
            entities = tx.run("document_entities", limit=options.entities, **params) if options.entities else []
            totals = tx.single("document_totals", **params) or {"facts": 0, "entities": 0}
            return MemoryDetail(memory=memory, facts=facts,
                                facts_total=totals["facts"], entities=[EntityRef.model_validate(e) for e in entities],
                                entities_total=totals["entities"])

        return self.core.store.read(read)

    def many(self, ctx: CallerContext, doc_ids: list[str]) -> dict[str, Document]:
        """Versions by id, in one statement; ids the caller cannot read are simply absent (GraphQL's loaders
        answer them as not found)."""
        ids = checked_ids(doc_ids)
        return self.core.store.read(lambda tx: fetch_documents(tx, ids, ctx.readable))

    def facts_of(self, ctx: CallerContext, doc_ids: list[str], limit: int) -> dict[str, list[FactInfo]]:
        """The first ``limit`` facts of each memory, in order, in one statement."""
        ids, first = checked_ids(doc_ids), checked_count(limit)
        return self.core.store.read(lambda tx: _facts_of(tx, ids, first, ctx.readable))

    def list(self, ctx: CallerContext, namespace: str | None, options: DocumentListOptions) -> DocumentPage:
        """A page in ``options.sort`` order (newest first by default), with the total of the view and
        conditions; ``namespace`` None: one list over every namespace the caller may read."""
        names = read_in(ctx, namespace)
        options = checked(options, self.core.limits)
        page = read_page(self.core.store, self.core.cursors, self.core.clock(), DOCUMENTS, names, options,
                         skip=options.offset, preview_chars=PREVIEW_CHARS)
        return DocumentPage(items=page.items, total=page.total, limit=options.limit, next_cursor=page.next_cursor,
                            cursors=page.cursors, namespaces=names)

    def history(self, ctx: CallerContext, doc_id: str, options: HistoryOptions) -> HistoryPage:
        """The versions of the memory holding ``doc_id``, newest first."""
        checked_id = check_id(doc_id)
        options = checked(options, self.core.limits)
        after: int | None = None
        if options.cursor is not None:
            state = self.core.cursors.open("history", options.cursor, _HistoryCursor)
            if state.id != checked_id:
                raise mismatch()
            after = state.version

        def read(tx: Tx) -> HistoryPage:
            rows = tx.run("chains_history", ids=[checked_id], namespaces=ctx.readable, limit=options.limit + 1,
                          after_version=after)
            if not rows and after is None:
                raise NotFound(f"no memory with id {checked_id!r}", id=checked_id)
            items = [DocumentInfo.from_row(row) for row in rows[:options.limit]]
            more = len(rows) > options.limit and items[-1].version is not None
            return HistoryPage(items=items, next_cursor=self.core.cursors.seal(
                "history", _HistoryCursor(id=checked_id, version=items[-1].version)) if more else None)

        return self.core.store.read(read)

    def histories(self, ctx: CallerContext, doc_ids: builtins.list[str],
                  limit: int) -> dict[str, builtins.list[DocumentInfo]]:
        """The newest ``limit`` versions of each memory's chain, in one statement (for batching front ends)."""
        ids, first = checked_ids(doc_ids), checked_count(limit)
        if not first:
            return {}
        rows = self.core.store.read(lambda tx: tx.run("chains_history", ids=ids, namespaces=ctx.readable,
                                                      limit=first, after_version=None))
        found: dict[str, builtins.list[DocumentInfo]] = {}
        for row in rows:
            found.setdefault(row["start_id"], []).append(DocumentInfo.from_row(row))
        return found

    def stored_namespaces(self, limit: int) -> builtins.list[str]:
        """Namespaces holding memories (their StoredTail), in name order."""
        rows = self.core.store.read(lambda tx: tx.run("namespaces_stored", limit=limit))
        return [row["namespace"] for row in rows]

    def every_namespace_counts(self) -> dict[str, NamespaceCounts]:
        """The counts of every namespace that holds memories (the operator's; see MemoryService)."""
        rows = self.core.store.read(lambda tx: tx.run("namespaces_counts"))
        return {row["namespace"]: NamespaceCounts.model_validate(row) for row in rows}

    def counts(self, ctx: CallerContext, namespace: str) -> NamespaceCounts:
        """Documents (every version), facts, entities and triples stored in a namespace."""
        ns = readable(ctx, namespace)
        row = self.core.store.read(lambda tx: tx.single("namespace_counts", namespace=ns))
        return NamespaceCounts.model_validate(row)

    def update(self, ctx: CallerContext, doc_id: str, update: UpdateInput) -> Changed:
        """Write a new version of the memory whose latest version is ``doc_id`` (``versioned``); an update that
        changes nothing answers that version (``unchanged``), a retried request its first answer."""
        checked_id = check_id(doc_id)
        data = checked(update, self.core.limits)
        prepared = self.core.pipeline.prepare([data.content])[0]
        core = self.core

        def write(tx: Tx) -> tuple[Changed, str, list[str]]:
            row = lock_chain(tx, ctx, checked_id)
            ns = row["namespace"]
            request_key = records.request_key(ns, data.request_id) if data.request_id else None
            request_hash = records.request_hash({"op": "update", "id": checked_id, "content": data.content,
                                                 "title": data.title, "metadata": data.metadata, "path": data.path,
                                                 "expected_version": data.expected_version})
            if request_key:
                existing = tx.single("documents_by_request_keys", request_keys=[request_key], namespace=ns)
                if existing is not None:
                    check_same_request(existing["request_hash"], request_hash, data.request_id)
                    return Changed(document=fetch_document(tx, existing["id"], [ns]), change=Change.versioned), ns, []
            _check_updatable(row, checked_id, data.expected_version)
            digest_ = content_hash(ns, data.content)
            title = data.title if data.title is not None else row["title"]
            metadata = json.dumps(data.metadata, sort_keys=True, ensure_ascii=False) \
                if data.metadata is not None else row["metadata"]
            path = data.path if data.path is not None else row["path"]
            if digest_ == row["latest_content_hash"] and (title, metadata, path) == (
                    row["title"], row["metadata"], row["path"]):  # the same memory again: nothing to version
                return Changed(document=fetch_document(tx, row["latest_id"], [ns]), change=Change.unchanged), ns, []
            twin = tx.single("documents_by_current_hash", hash_keys=[digest_], namespace=ns)
            if twin is not None and twin["id"] != row["latest_id"]:
                raise Conflict(f"memory {twin['id']} already holds exactly this content",
                               next_step="update or forget that memory instead", existing_id=twin["id"])
            now = max(core.clock(), row["latest_recorded_at"] + 1)  # as-of never sees two versions
            document = document_record(
                now=now, namespace=ns, content=data.content, digest=digest_, chain_id=row["chain_id"],
                version=row["latest_version"] + 1, created_at=row["created_at"], title=title,
                source=row["source"], metadata=metadata, path=path, request_key=request_key,
                request_hash=request_hash if request_key else None, fact_count=len(prepared.facts))
            tx.run("version_supersede", id=row["latest_id"], namespace=ns, now=now)  # frees the content hash
            entity_keys = write_documents(tx, ns, [(document, prepared)], now, core.write_options)
            tx.run("version_link", new_id=document["id"], old_id=row["latest_id"], namespace=ns)
            written = Document.model_validate({**document, "parent_memory_id": row["latest_id"],
                                               "latest_id": document["id"]})
            return Changed(document=written, change=Change.versioned), ns, entity_keys

        return core.write_labelled(write)


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


def _facts_of(tx: Tx, doc_ids: list[str], limit: int, namespaces: list[str]) -> dict[str, list[FactInfo]]:
    if not limit or not doc_ids:
        return {}
    facts: dict[str, list[FactInfo]] = {}
    for row in tx.run("documents_facts", ids=doc_ids, limit=limit, namespaces=namespaces):
        facts.setdefault(row["memory_id"], []).append(FactInfo.model_validate(row))
    return {doc_id: sorted(group, key=lambda f: f.position) for doc_id, group in facts.items()}
