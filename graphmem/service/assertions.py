"""What agents state about the graph, on graphmem's own nodes: the calls of Neo4j's memory MCP server
(``create_entities``, ``create_relations``, ``add_observations`` and the three deletes; the three reads are
``service/knowledge.py``).

* A call that creates or adds is one **assertion memory**: a Document whose source names the credential and
  the operation (``agent:<credential>:<operation>``), holding one Fact per statement. An entity's first
  statement is its declaration ("Alice Johnson is a person"), so it stays in view with no observation; each
  observation is a fact that MENTIONS its entity; each relation is a fact that mentions both ends and supports
  a RELATES triple marked ``asserted``. The mentions are stated, never guessed; the stated type wins over
  the type extraction votes, and the vote goes on beside it.
* Entities are the Entity nodes extraction makes, found by name within the namespace (the same key:
  case, articles and punctuation folded), so what agents state and what memories say meet.
* Creating is idempotent, as in the reference: an entity merges by name, a statement already held is not
  made again, and a call with nothing new writes nothing.
* Deleting forgets the agents' statements (soft, restorable) and never changes what extraction made: a
  triple leaves the view with its fact, an entity with the last fact that mentions it.
* ``request_id`` makes any of these calls retry-safe (a Receipt holds the first answer).
"""

from __future__ import annotations

import re
import uuid
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, TypeVar

from pydantic import BaseModel

from graphmem import records
from graphmem.ingest.extract import Triple
from graphmem.ingest.names import ExtractedEntity
from graphmem.ingest.pipeline import Statement
from graphmem.ingest.resolve import normalize_name, vote
from graphmem.ingest.write import write_documents
from graphmem.model import CURRENT, CallerContext
from graphmem.model.assertions import (
    EntitiesCreate,
    EntitiesDelete,
    EntityAssertion,
    ObservationsAdd,
    ObservationsDelete,
    RelationAssertion,
    RelationsChange,
)
from graphmem.records import content_hash, document_record
from graphmem.results.knowledge import (
    Deleted,
    EntitiesCreated,
    ObservationsAdded,
    ObservationsAddedResult,
    RelationsCreated,
)
from graphmem.service.access import writable
from graphmem.service.shared import Core, check_same_request
from graphmem.store.driver import Tx
from graphmem.store.views import path_params, view_params

R = TypeVar("R", bound=BaseModel)
State = dict[str, dict[str, Any]]  # entity key → what ``asserted_state`` reads of it

DELETE_REASON = "deleted by an agent"
ASSERTION_SALT = "graphmem assertion\n"  # an assertion memory's text never counts as a copy of a plain memory's


@dataclass
class _Plan:
    """What a call will write: statements (one fact each), the stated facts it supersedes, and its answer."""

    answer: BaseModel
    statements: list[Statement] = field(default_factory=list)
    forget: list[str] = field(default_factory=list)


class Assertions:
    def __init__(self, core: Core) -> None:
        self.core = core

    # ---- creating ---------------------------------------------------------------------------------------

    def create_entities(self, ctx: CallerContext, namespace: str, request: EntitiesCreate) -> EntitiesCreated:
        ns = writable(ctx, namespace)
        merged = _merge_entities(ns, request.entities)

        def plan(tx: Tx, state: State) -> _Plan:
            planned = _Plan(EntitiesCreated(result=list(request.entities)))
            for key, entity in merged.items():
                stated = state.get(key, {}).get("stated", [])
                declaration = _declaration(entity.name, entity.type)
                declared = [s for s in stated if s["assertion"] == "entity"]
                if not any(s["text"] == declaration for s in declared):
                    planned.statements.append(Statement(declaration, "entity",
                                                        (ExtractedEntity(entity.name, entity.type),)))
                    planned.forget.extend(s["id"] for s in declared)  # the type it states now replaces them
                held = {s["text"] for s in stated if s["assertion"] == "observation"}
                for text in dict.fromkeys(entity.observations):
                    if text not in held:
                        planned.statements.append(Statement(text, "observation", (ExtractedEntity(entity.name, ""),)))
            return planned

        return self._create(ctx, ns, "create_entities", request, sorted(merged), plan, EntitiesCreated)

    def create_relations(self, ctx: CallerContext, namespace: str, request: RelationsChange) -> RelationsCreated:
        ns = writable(ctx, namespace)
        keys = sorted({_key(ns, name) for r in request.relations for name in (r.source, r.target)})

        def plan(tx: Tx, state: State) -> _Plan:
            made: list[RelationAssertion] = []
            skipped: list[RelationAssertion] = []
            for relation in request.relations:
                ends = state.get(_key(ns, relation.source)), state.get(_key(ns, relation.target))
                (made if all(end is not None and end["visible"] for end in ends) else skipped).append(relation)
            held = {(row["source_key"], row["relation_type"], row["target_key"])
                    for row in _asserted_relations(tx, ns, made)}
            planned = _Plan(RelationsCreated(result=made, skipped=skipped))
            for relation in made:
                triple_key = (_key(ns, relation.source), relation.relationType, _key(ns, relation.target))
                if triple_key in held:
                    continue
                held.add(triple_key)
                source = ExtractedEntity(state[triple_key[0]]["name"], "")
                target = ExtractedEntity(state[triple_key[2]]["name"], "")
                text = f"{source.name} {_phrase(relation.relationType)} {target.name}."
                planned.statements.append(Statement(text, "relation", (source, target),
                                                    Triple(source, relation.relationType, target)))
            return planned

        return self._create(ctx, ns, "create_relations", request, keys, plan, RelationsCreated)

    def add_observations(self, ctx: CallerContext, namespace: str,
                         request: ObservationsAdd) -> ObservationsAddedResult:
        """Observations of entities that exist (in the current view); one that does not is left out of the
        answer, as the reference's MATCH leaves it."""
        ns = writable(ctx, namespace)
        keys = sorted({_key(ns, item.entityName) for item in request.observations})

        def plan(tx: Tx, state: State) -> _Plan:
            planned, answer = _Plan(ObservationsAddedResult(result=[])), []
            held = {key: {s["text"] for s in row["stated"] if s["assertion"] == "observation"}
                    for key, row in state.items()}
            for item in request.observations:
                key = _key(ns, item.entityName)
                if key not in state or not state[key]["visible"]:
                    continue
                added = []
                for text in dict.fromkeys(item.observations):
                    if text not in held[key]:
                        held[key].add(text)
                        added.append(text)
                        planned.statements.append(Statement(text, "observation",
                                                            (ExtractedEntity(state[key]["name"], ""),)))
                answer.append(ObservationsAdded(entityName=item.entityName, addedObservations=added))
            planned.answer = ObservationsAddedResult(result=answer)
            return planned

        return self._create(ctx, ns, "add_observations", request, keys, plan, ObservationsAddedResult)

    def _create(self, ctx: CallerContext, ns: str, operation: str, request: BaseModel, keys: list[str],
                plan: Callable[[Tx, State], _Plan], kind: type[R]) -> R:
        """Plan from what is stored (``keys``: the entity keys the call names), embed the statements outside
        the transaction, then plan again inside it and write; a plan that changed meanwhile (a concurrent
        call) is prepared again there."""
        core = self.core
        first = core.store.read(lambda tx: plan(tx, _state(tx, ns, keys)))
        prepared = core.pipeline.prepare_stated(first.statements) if first.statements else None
        request_hash = _request_hash(operation, ns, request)

        def write(tx: Tx) -> tuple[R, str, list[str]]:
            replayed = _replayed(tx, ns, request, request_hash, kind)
            if replayed is not None:
                return replayed, ns, []
            planned = plan(tx, _state(tx, ns, keys))
            result = kind.model_validate(planned.answer.model_dump())
            relabel: list[str] = []
            now = core.clock()
            if planned.forget:
                _forget(tx, ns, planned.forget, now)
            if planned.statements:
                ready = prepared if planned.statements == first.statements and prepared is not None \
                    else core.pipeline.prepare_stated(planned.statements)
                document = _assertion_document(ctx, ns, operation, planned.statements, ready.content, now,
                                               core.limits.title_chars)
                relabel = write_documents(tx, ns, [(document, ready)], now, core.write_options)
            _receipt(tx, ns, request, request_hash, operation, result, now)
            return result, ns, relabel

        return core.write_labelled(write)

    # ---- deleting ---------------------------------------------------------------------------------------

    def delete_entities(self, ctx: CallerContext, namespace: str, request: EntitiesDelete) -> Deleted:
        """Forget every statement agents made about the entities (their declarations, observations and the
        relations they are an end of); the type extraction voted for is theirs again."""
        ns = writable(ctx, namespace)
        keys = sorted({_key(ns, name) for name in request.entityNames})

        def forget(tx: Tx) -> tuple[list[str], list[str]]:
            state = _state(tx, ns, keys)
            retyped = []
            for key, row in state.items():
                if row["asserted_type"] is not None:
                    _, _, voted = vote(row["labels"] or [], row["counts"] or [], [], None)
                    retyped.append({"key": key, "type": voted})
            if retyped:
                tx.run("asserted_types_clear", entities=retyped, namespace=ns)
            return [s["id"] for row in state.values() for s in row["stated"]], [r["key"] for r in retyped]

        return self._delete(ns, "delete_entities", request, forget, "Entities deleted successfully")

    def delete_observations(self, ctx: CallerContext, namespace: str, request: ObservationsDelete) -> Deleted:
        ns = writable(ctx, namespace)
        keys = sorted({_key(ns, item.entityName) for item in request.deletions})

        def forget(tx: Tx) -> tuple[list[str], list[str]]:
            state = _state(tx, ns, keys)
            ids: list[str] = []
            for item in request.deletions:
                row = state.get(_key(ns, item.entityName))
                if row is not None:
                    ids.extend(s["id"] for s in row["stated"]
                               if s["assertion"] == "observation" and s["text"] in item.observations)
            return ids, []

        return self._delete(ns, "delete_observations", request, forget, "Observations deleted successfully")

    def delete_relations(self, ctx: CallerContext, namespace: str, request: RelationsChange) -> Deleted:
        ns = writable(ctx, namespace)

        def forget(tx: Tx) -> tuple[list[str], list[str]]:
            return [row["fact_id"] for row in _asserted_relations(tx, ns, request.relations)], []

        return self._delete(ns, "delete_relations", request, forget, "Relations deleted successfully")

    def _delete(self, ns: str, operation: str, request: BaseModel,
                forget: Callable[[Tx], tuple[list[str], list[str]]], message: str) -> Deleted:
        request_hash = _request_hash(operation, ns, request)

        def write(tx: Tx) -> tuple[Deleted, str, list[str]]:
            replayed = _replayed(tx, ns, request, request_hash, Deleted)
            if replayed is not None:
                return replayed, ns, []
            fact_ids, relabel = forget(tx)
            now = self.core.clock()
            if fact_ids:
                _forget(tx, ns, sorted(set(fact_ids)), now)
            result = Deleted(result=message)
            _receipt(tx, ns, request, request_hash, operation, result, now)
            return result, ns, relabel

        return self.core.write_labelled(write)


# ---- helpers ------------------------------------------------------------------------------------------------


def _key(namespace: str, name: str) -> str:
    return f"{namespace}|{normalize_name(name)}"


def _merge_entities(ns: str, entities: list[EntityAssertion]) -> dict[str, EntityAssertion]:
    """One entry per entity key (names that fold to one name are one entity): the last type stated, every
    observation once, in order."""
    merged: dict[str, EntityAssertion] = {}
    for entity in entities:
        key = _key(ns, entity.name)
        before = merged.get(key)
        observations = [*before.observations, *entity.observations] if before else entity.observations
        merged[key] = EntityAssertion(name=before.name if before else entity.name, type=entity.type,
                                      observations=list(dict.fromkeys(observations)))
    return merged


def _state(tx: Tx, ns: str, keys: list[str]) -> State:
    rows = tx.run("asserted_state", keys=keys, namespace=ns, **view_params(CURRENT), **path_params(None))
    return {row["key"]: dict(row) for row in rows}


def _asserted_relations(tx: Tx, ns: str, relations: list[RelationAssertion]) -> list[dict[str, Any]]:
    if not relations:
        return []
    rows = [{"source_key": _key(ns, r.source), "relation_type": r.relationType, "target_key": _key(ns, r.target)}
            for r in relations]
    return tx.run("asserted_relations", relations=rows, namespace=ns, **view_params(CURRENT))


def _forget(tx: Tx, ns: str, fact_ids: list[str], now: int) -> None:
    parts = tx.run("asserted_facts_forget", fact_ids=fact_ids, namespace=ns, now=now)
    if parts:
        tx.run("asserted_chunks_forget", parts=parts, namespace=ns, now=now)
        tx.run("asserted_documents_forget_spent", document_ids=sorted({p["document_id"] for p in parts}),
               namespace=ns, now=now, reason=DELETE_REASON)


def _declaration(name: str, type_name: str) -> str:
    return f"{name} is a {_phrase(type_name)}."


def _phrase(identifier: str) -> str:
    """WORKS_AT → "works at"; worksAt → "works at"."""
    spaced = re.sub(r"(?<=[a-z0-9])(?=[A-Z])", " ", identifier).replace("_", " ")
    return " ".join(spaced.split()).lower()


def _assertion_document(ctx: CallerContext, ns: str, operation: str, statements: list[Statement], content: str,
                        now: int, title_chars: int) -> dict[str, Any]:
    names = list(dict.fromkeys(entity.name for s in statements for entity in s.entities))
    title = f"{operation}: {', '.join(names)}"
    if len(title) > title_chars:
        title = title[:title_chars - 1] + "…"
    digest = content_hash(ns, ASSERTION_SALT + content)
    return document_record(now=now, namespace=ns, content=content, digest=digest, chain_id=None, version=1,
                           created_at=None, title=title, source=f"agent:{ctx.credential_id or 'operator'}:{operation}",
                           metadata=None, path=None, request_key=None, request_hash=None,
                           fact_count=len(statements))


def _request_hash(operation: str, ns: str, request: BaseModel) -> str:
    payload = request.model_dump(exclude={"request_id"})
    return records.request_hash({"op": operation, "namespace": ns, "request": payload})


def _replayed(tx: Tx, ns: str, request: BaseModel, request_hash: str, kind: type[R]) -> R | None:
    """The first answer of a request retried under its ``request_id`` (another request under it: a conflict)."""
    rid = getattr(request, "request_id", None)
    if not rid:
        return None
    for receipt in tx.run("receipts_for_request", request_id=rid, namespaces=[ns]):
        check_same_request(receipt["request_hash"], request_hash, rid)
        return kind.model_validate_json(receipt["result"])
    return None


def _receipt(tx: Tx, ns: str, request: BaseModel, request_hash: str, operation: str, result: BaseModel,
             now: int) -> None:
    rid = getattr(request, "request_id", None)
    if rid:
        tx.run("receipts_create", receipts=[{
            "id": str(uuid.uuid4()), "namespace": ns, "request_key": records.request_key(ns, rid), "request_id": rid,
            "target_id": operation, "request_hash": request_hash, "operation": f"assert:{operation}",
            "result": result.model_dump_json(), "recorded_at": now}])

