"""Forgetting a memory (soft, redact, hard) and restoring it: every version of the memory at once."""

from __future__ import annotations

import uuid
from typing import Any

from graphmem import records
from graphmem.errors import Conflict, NotFound
from graphmem.model import CallerContext, ForgetMode, ForgetRequest, check_id
from graphmem.records import tombstone_key
from graphmem.results import Document, ForgetResult
from graphmem.service.access import writable
from graphmem.service.shared import Core, check_same_request, fetch_document, lock_chain, reused_request
from graphmem.store.driver import Tx
from graphmem.store.names import StatementName

# each mode's statements: (facts, documents)
_FORGET_STATEMENTS: dict[ForgetMode, tuple[StatementName, StatementName]] = {
    ForgetMode.soft: ("chain_forget_facts", "chain_forget_documents"),
    ForgetMode.redact: ("chain_redact_facts", "chain_redact_documents"),
    ForgetMode.hard: ("chain_delete_facts", "chain_delete_documents")}


class Forgetting:
    def __init__(self, core: Core) -> None:
        self.core = core

    def forget(self, ctx: CallerContext, doc_id: str, request: ForgetRequest) -> ForgetResult:
        """Forget the whole memory (every version) holding ``id``.

        * ``soft``: hidden from current views, restorable;
        * ``redact``: content, title, source, metadata, hashes, fact text, attributes and embeddings
          removed, with the triples and mentions of its facts; nodes, lineage, spans and times kept;
          cannot be restored;
        * ``hard``: every version and fact deleted, with their triples.

        Redact and hard also delete entities that no fact mentions any more.

        Repeats are idempotent: soft and redact change nothing the second time. A repeated hard delete
        finds nothing and is ``NotFound``, unless it carries the first call's ``request_id``, which
        returns the first result.
        """
        doc_id = check_id(doc_id)
        forget_mode, rid = request.mode, request.request_id
        request_hash = records.request_hash({"op": "forget", "id": doc_id, "mode": forget_mode.value})

        def answered(tx: Tx) -> tuple[ForgetResult | None, list[dict[str, Any]]]:
            """The first result of this request, if it already ran (and the receipts seen)."""
            if not rid:
                return None, []
            receipts = tx.run("receipts_for_request", request_id=rid, namespaces=ctx.readable)
            for receipt in receipts:
                if receipt["target_id"] == doc_id:
                    writable(ctx, receipt["namespace"])  # a reader may not replay a write
                    check_same_request(receipt["request_hash"], request_hash, rid)
                    return ForgetResult.model_validate_json(receipt["result"]), receipts
            return None, receipts

        def write(tx: Tx) -> ForgetResult:
            first, receipts = answered(tx)
            if first is not None:
                return first
            try:
                row = lock_chain(tx, ctx, doc_id)
            except NotFound:
                # a concurrent call with this request_id may have deleted the chain since we looked
                first, receipts = answered(tx)
                if first is None:
                    raise
                return first
            ns, chain_id, now = row["namespace"], row["chain_id"], self.core.clock()
            if any(r["namespace"] == ns for r in receipts):
                raise reused_request(rid)
            params = {"chain_id": chain_id, "namespace": ns, "now": now, "reason": request.reason}
            facts_statement, documents_statement = _FORGET_STATEMENTS[forget_mode]
            mentioned = tx.single("chain_mentions", chain_id=chain_id, namespace=ns) \
                if forget_mode is not ForgetMode.soft else None
            if mentioned and mentioned["fact_ids"]:
                # the triples extracted from these facts, and (redact) their mentions, go with the text
                graph = {"entity_keys": mentioned["entity_keys"], "fact_ids": mentioned["fact_ids"], "namespace": ns}
                tx.run("triples_delete_by_facts", **graph)
                if forget_mode is ForgetMode.redact:
                    tx.run("mentions_delete_by_facts", fact_ids=mentioned["fact_ids"], namespace=ns)
            facts = tx.single(facts_statement, **params)  # facts first: hard delete finds them by chain
            docs = tx.single(documents_statement, **params)
            if mentioned and mentioned["entity_keys"]:  # entities no fact mentions any more
                tx.run("entities_delete_orphans", entity_keys=mentioned["entity_keys"], namespace=ns)
            result = ForgetResult(id=doc_id, chain_id=chain_id, mode=forget_mode,
                                  documents=docs["changed"] if docs else 0,
                                  facts=facts["changed"] if facts else 0)
            # tombstones: content-free markers, so a late retry of the add cannot bring the memory back
            written = [{"id": str(uuid.uuid4()), "namespace": ns, "request_key": tombstone_key(key),
                        "target_id": chain_id, "operation": "tombstone", "recorded_at": now}
                       for key in (docs["request_keys"] if forget_mode is ForgetMode.hard and docs else [])]
            if rid:
                written.append({"id": str(uuid.uuid4()), "namespace": ns, "request_key": records.request_key(ns, rid),
                                "request_id": rid, "target_id": doc_id, "request_hash": request_hash,
                                "operation": f"forget:{forget_mode.value}", "result": result.model_dump_json(),
                                "recorded_at": now})
            if written:
                tx.run("receipts_create", receipts=written)
            return result

        return self.core.store.write(write)

    def restore(self, ctx: CallerContext, doc_id: str) -> Document:
        """Undo a soft forget of the memory holding ``doc_id``; returns its latest version."""
        doc_id = check_id(doc_id)

        def write(tx: Tx) -> Document:
            row = lock_chain(tx, ctx, doc_id)
            if row["is_redacted"]:
                raise Conflict("a redacted memory cannot be restored: its content is gone",
                               next_step="add the content again as a new memory")
            params = {"chain_id": row["chain_id"], "namespace": row["namespace"], "now": self.core.clock()}
            if row["is_forgotten"] and row["latest_content_hash"]:
                twin = tx.single("documents_by_current_hash", hash_keys=[row["latest_content_hash"]],
                                 namespace=row["namespace"])
                if twin is not None and twin["id"] != row["latest_id"]:
                    raise Conflict(f"memory {twin['id']} now holds exactly this content",
                                   next_step="forget that memory first, or keep it", existing_id=twin["id"])
            tx.run("chain_restore_documents", **params)
            tx.run("chain_restore_facts", **params)
            return fetch_document(tx, row["latest_id"], [row["namespace"]])

        return self.core.store.write(write)
