"""What every part of the service shares: the store, settings, pipeline, clock and cursors (``Core``), and
the helpers every write path uses: reading a version, locking a chain, judging a retried request."""

from __future__ import annotations

import time
import uuid
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, TypeVar

from graphmem.config import Limits, Settings
from graphmem.cursors import Cursors
from graphmem.errors import Conflict, InvalidInput, NotFound
from graphmem.ingest.pipeline import Pipeline
from graphmem.ingest.write import WriteOptions, sync_type_labels
from graphmem.model import CallerContext, check_id
from graphmem.results import Document
from graphmem.service.access import writable
from graphmem.store.driver import GraphStore, RetryTransaction, Tx

T = TypeVar("T")


def repeat_within(count: int, seconds: float, call: Callable[[int], object]) -> None:
    """``call(i)`` for i from 0 to ``count`` - 1, stopping once ``seconds`` have passed (the start-up warm-up's
    searches and exports)."""
    deadline = time.monotonic() + seconds
    for i in range(count):
        call(i)
        if time.monotonic() > deadline:
            break


@dataclass(frozen=True)
class Core:
    store: GraphStore
    settings: Settings
    pipeline: Pipeline
    clock: Callable[[], int]
    cursors: Cursors

    @property
    def limits(self) -> Limits:
        return self.settings.limits

    @property
    def write_options(self) -> WriteOptions:
        return WriteOptions(user_name=self.settings.user_entity_name,
                            similar_cosine=self.settings.similar_entity_cosine, dialect=self.store.dialect,
                            times=self.pipeline.times, read=self.store.read)

    def largest_namespace(self) -> str | None:
        """The namespace with the most memories (the start-up warm-up's searches and exports run there), or
        None when there is none."""
        row = self.store.read(lambda tx: tx.single("namespace_largest"))
        return None if row is None else str(row["namespace"])

    def write_labelled(self, fn: Callable[[Tx], tuple[T, str, list[str]]]) -> T:
        """Run a write that returns (result, namespace, keys of the entities whose type label must follow their
        type), then give those entities their type labels in transactions of their own
        (``ingest.write.sync_type_labels`` says why)."""
        result, namespace, keys = self.store.write(fn)
        sync_type_labels(self.store, namespace, keys)
        return result


def fetch_document(tx: Tx, doc_id: str, namespaces: list[str]) -> Document:
    found = fetch_documents(tx, [doc_id], namespaces)
    if doc_id not in found:
        raise NotFound(f"no memory with id {doc_id!r}", id=doc_id)
    return found[doc_id]


def fetch_documents(tx: Tx, doc_ids: list[str], namespaces: list[str]) -> dict[str, Document]:
    """The versions among ``doc_ids`` that exist in ``namespaces``, by id."""
    rows = tx.run("documents_get", ids=doc_ids, namespaces=namespaces)
    return {row["document"]["id"]: Document.model_validate({
        **row["document"], "content": row["content"], "parent_memory_id": row["parent_memory_id"],
        "latest_id": row["latest_id"]}) for row in rows}


MAX_BATCH_IDS = 1000  # ids one batched read takes (GraphQL's loaders send at most this many)
MAX_BATCH_ITEMS = 1000  # items per id one batched read returns


def checked_ids(ids: list[str]) -> list[str]:
    """The ids of a batched read, each checked, duplicates dropped, at most ``MAX_BATCH_IDS``."""
    if len(ids) > MAX_BATCH_IDS:
        raise InvalidInput(f"at most {MAX_BATCH_IDS} ids in one read", field="ids", max=MAX_BATCH_IDS)
    return list(dict.fromkeys(check_id(value) for value in ids))


def checked_count(count: int) -> int:
    """Items per id of a batched read (a relationship field's ``first``): 0 to ``MAX_BATCH_ITEMS``."""
    if not isinstance(count, int) or isinstance(count, bool) or not 0 <= count <= MAX_BATCH_ITEMS:
        raise InvalidInput(f"first must be from 0 to {MAX_BATCH_ITEMS}", field="first", max=MAX_BATCH_ITEMS)
    return count


def reused_request(request_id: str | None) -> Conflict:
    return Conflict(f"request_id {request_id!r} was already used for a different request",
                    next_step="use a new request_id for a new request")


def check_same_request(stored_hash: str | None, request_hash: str | None, request_id: str | None) -> None:
    """A retried request must be the same request: else it is a conflict (the first result stands)."""
    if stored_hash is None:
        raise Conflict(f"request_id {request_id!r} created a memory that has since been redacted",
                       next_step="send the request again with a new request_id")
    if stored_hash != request_hash:
        raise reused_request(request_id)


def lock_chain(tx: Tx, ctx: CallerContext, doc_id: str) -> dict[str, Any]:
    """Lock the latest version of the chain holding ``doc_id``; checks existence and write access."""
    row = tx.single("chain_lock", id=doc_id, namespaces=ctx.readable, token=uuid.uuid4().hex)
    if row is None:
        raise NotFound(f"no memory with id {doc_id!r}", id=doc_id)
    if row["latest_id"] is None or not row["latest_still_latest"]:
        raise RetryTransaction  # a concurrent update is committing, or won the race for the lock; look again
    writable(ctx, row["namespace"])
    return row
