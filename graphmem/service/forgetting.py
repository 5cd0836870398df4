"""Forgetting a memory (soft, redact, hard) and restoring it: every version of the memory at once."""

from __future__ import annotations

import uuid
from typing import Any

from graphmem.errors import Conflict, InvalidInput, NotFound
from graphmem.model import CallerContext, Document, ForgetMode, ForgetResult, check_id, check_request_id
from graphmem.records import request_hash as make_request_hash
from graphmem.records import tombstone_key
from graphmem.service_base import ServiceBase
from graphmem.store.driver import Tx

_FORGET_STATEMENTS = {ForgetMode.soft: "chain_forget", ForgetMode.redact: "chain_redact",
                      ForgetMode.hard: "chain_delete"}


class Forgetting(ServiceBase):
    def forget(self, ctx: CallerContext, id: str, mode: ForgetMode | str = ForgetMode.soft,
               request_id: str | None = None) -> ForgetResult:
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
        doc_id = check_id(id)
        try:
            forget_mode = ForgetMode(mode)
        except ValueError:
            raise InvalidInput("mode must be one of soft, hard, redact", field="mode") from None
        rid = check_request_id(request_id) if request_id is not None else None
        request_hash = make_request_hash({"op": "forget", "id": doc_id, "mode": forget_mode.value})

        def answered(tx: Tx) -> tuple[ForgetResult | None, list[dict[str, Any]]]:
            """The first result of this request, if it already ran (and the receipts seen)."""
            if not rid:
                return None, []
            receipts = tx.run("receipts_for_request", request_id=rid, namespaces=ctx.readable)
            for receipt in receipts:
                if receipt["target_id"] == doc_id:
                    self._writable(ctx, receipt["namespace"])  # a reader may not replay a write
                    self._same_request(receipt["request_hash"], request_hash, rid)
                    return ForgetResult.model_validate_json(receipt["result"]), receipts
            return None, receipts

        def write(tx: Tx) -> ForgetResult:
            first, receipts = answered(tx)
            if first is not None:
                return first
            try:
                row = self._lock_chain(tx, ctx, doc_id)
            except NotFound:
                # a concurrent call with this request_id may have deleted the chain since we looked
                first, receipts = answered(tx)
                if first is None:
                    raise
                return first
            ns, chain_id, now = row["namespace"], row["chain_id"], self.clock()
            if any(r["namespace"] == ns for r in receipts):
                raise Conflict(f"request_id {rid!r} was already used for a different request",
                               next_step="use a new request_id for a new request")
            params = {"chain_id": chain_id, "namespace": ns, "now": now}
            step = _FORGET_STATEMENTS[forget_mode]
            mentioned = tx.single("chain_mentions", chain_id=chain_id, namespace=ns) \
                if forget_mode is not ForgetMode.soft else None
            if mentioned and mentioned["fact_ids"]:
                # the triples extracted from these facts, and (redact) their mentions, go with the text
                graph = {"entity_keys": mentioned["entity_keys"], "fact_ids": mentioned["fact_ids"], "namespace": ns}
                tx.run("triples_delete_by_facts", **graph)
                if forget_mode is ForgetMode.redact:
                    tx.run("mentions_delete_by_facts", fact_ids=mentioned["fact_ids"], namespace=ns)
            facts = tx.single(f"{step}_facts", **params)  # facts first: hard delete finds them by chain
            docs = tx.single(f"{step}_documents", **params)
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
                written.append({"id": str(uuid.uuid4()), "namespace": ns, "request_key": f"{ns}|{rid}",
                                "request_id": rid, "target_id": doc_id, "request_hash": request_hash,
                                "operation": f"forget:{forget_mode.value}", "result": result.model_dump_json(),
                                "recorded_at": now})
            if written:
                tx.run("receipts_create", receipts=written)
            return result

        return self.store.write(write)

    def restore(self, ctx: CallerContext, id: str) -> Document:
        """Undo a soft forget of the memory holding ``id``; returns its latest version."""
        doc_id = check_id(id)

        def write(tx: Tx) -> Document:
            row = self._lock_chain(tx, ctx, doc_id)
            if row["is_redacted"]:
                raise Conflict("a redacted memory cannot be restored: its content is gone",
                               next_step="add the content again as a new memory")
            params = {"chain_id": row["chain_id"], "namespace": row["namespace"], "now": self.clock()}
            if row["is_forgotten"] and row["latest_content_hash"]:
                twin = tx.single("documents_by_current_hash", hash_keys=[row["latest_content_hash"]],
                                 namespace=row["namespace"])
                if twin is not None and twin["id"] != row["latest_id"]:
                    raise Conflict(f"memory {twin['id']} now holds exactly this content",
                                   next_step="forget that memory first, or keep it", existing_id=twin["id"])
            tx.run("chain_restore_documents", **params)
            tx.run("chain_restore_facts", **params)
            return self._fetch(tx, row["latest_id"], [row["namespace"]])

        return self.store.write(write)
