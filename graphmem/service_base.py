"""What every service operation shares: the store, the clock, namespace checks, and locking a memory.

The rules it enforces are in ``graphmem/service.py``'s docstring.
"""

from __future__ import annotations

import uuid
from collections.abc import Callable
from typing import Any, TypeVar

from graphmem.config import Settings
from graphmem.errors import Conflict, Forbidden, NotFound
from graphmem.ingest.pipeline import Pipeline
from graphmem.ingest.write import WriteOptions, sync_type_labels
from graphmem.model import CallerContext, Document, check_namespace
from graphmem.records import now_ms
from graphmem.store.driver import GraphStore, RetryTransaction, Tx

T = TypeVar("T")


class ServiceBase:
    def __init__(self, store: GraphStore, settings: Settings, pipeline: Pipeline,
                 clock: Callable[[], int] = now_ms) -> None:
        self.store = store
        self.settings = settings
        self.limits = settings.limits
        self.pipeline = pipeline
        self.clock = clock
        self._write_options = WriteOptions(user_name=settings.user_entity_name,
                                           similar_cosine=settings.similar_entity_cosine, dialect=store.dialect)

    # ---- checks -------------------------------------------------------------------------------------

    @staticmethod
    def _readable(ctx: CallerContext, namespace: object) -> str:
        """A namespace the caller cannot read is invisible to it: not found, like one that is empty of
        everything including existence. (Nothing is looked up to decide this.)"""
        name = check_namespace(namespace)
        if not ctx.can_read(name):
            raise NotFound(f"no namespace {name!r}", namespace=name)
        return name

    @staticmethod
    def _writable(ctx: CallerContext, namespace: object) -> str:
        name = check_namespace(namespace)
        if not ctx.can_write(name):
            raise Forbidden(f"no write access to namespace {name!r}", namespace=name)
        return name

    def ping(self) -> None:
        self.store.read(lambda tx: tx.single("ping"))

    @staticmethod
    def _fetch(tx: Tx, doc_id: str, namespaces: list[str]) -> Document:
        row = tx.single("document_get", id=doc_id, namespaces=namespaces)
        if row is None:
            raise NotFound(f"no memory with id {doc_id!r}", id=doc_id)
        return Document.model_validate({**row["document"], "content": row["content"],
                                        "parent_id": row["parent_id"], "latest_id": row["latest_id"]})

    @staticmethod
    def _same_request(stored_hash: str | None, request_hash: str | None, request_id: str | None) -> None:
        if stored_hash is None:
            raise Conflict(f"request_id {request_id!r} created a memory that has since been redacted",
                           next_step="send the request again with a new request_id")
        if stored_hash != request_hash:
            raise Conflict(f"request_id {request_id!r} was already used for a different request",
                           next_step="use a new request_id for a new request")

    def _write_labelled(self, fn: Callable[[Tx], tuple[T, str, list[str]]]) -> T:
        """Run a write that returns (result, namespace, entity keys written), then give those entities their
        type labels in transactions of their own (``ingest.write.sync_type_labels`` says why)."""
        result, namespace, keys = self.store.write(fn)
        sync_type_labels(self.store, namespace, keys)
        return result

    def _lock_chain(self, tx: Tx, ctx: CallerContext, doc_id: str) -> dict[str, Any]:
        """Lock the latest version of the chain holding ``doc_id``; checks existence and write access."""
        row = tx.single("chain_lock", id=doc_id, namespaces=ctx.readable, token=uuid.uuid4().hex)
        if row is None:
            raise NotFound(f"no memory with id {doc_id!r}", id=doc_id)
        if not row["latest_still_latest"]:
            raise RetryTransaction  # a concurrent update won the race for the lock; look again
        self._writable(ctx, row["namespace"])
        return row
