"""The /v1 shapes: the service's models with the seed's names and a ``scope`` where a body names a namespace
(and the answers of ``/health`` and ``/ready``, for the OpenAPI document).

Bounds are never declared here: bodies extend the service's input models (a bound they break is a 422 of the
route's model), and query parameters are turned into the service's models (a bound they break is a 400 that
names the range). Results are the service's models, renamed where clients of the seeds read other names:
lineage fields (``isLatest``, ``isForgotten``, ``isInference``, ``parentMemoryId``) and the evidence graph's
completeness fields (``totalDocuments``, ``unavailableDocuments``).
"""

from __future__ import annotations

from enum import StrEnum
from typing import Annotated, Literal

from pydantic import BaseModel, ConfigDict, Field

from graphmem.model import (
    OWN_NAMESPACE,
    READ_NAMESPACE,
    DocumentInput,
    ForgetMode,
    HandoffInput,
    RecallRequest,
    RequestId,
    UpdateInput,
)
from graphmem.results import (
    Document,
    DocumentHit,
    DocumentInfo,
    DocumentSummary,
    ExportResult,
    FactHit,
    FactInfo,
    NamespacesRead,
    RecallResult,
)
from graphmem.results.seed import SEED

# ``scope`` is the /v1 name of a namespace, which the seed system's clients send
Scope = Annotated[str | None, Field(max_length=64, description=OWN_NAMESPACE)]
ReadScope = Annotated[str | None, Field(max_length=64, description=READ_NAMESPACE)]


# ---- bodies ------------------------------------------------------------------------------------------------


class RememberBody(DocumentInput):
    scope: Scope = None


class UpdateBody(UpdateInput):
    pass


class ForgetModeName(StrEnum):
    """Both the seed's names and graphmem's."""

    soft = "soft"
    hard = "hard"
    redact = "redact"
    soft_delete = "soft_delete"
    hard_delete = "hard_delete"

    @property
    def mode(self) -> ForgetMode:
        seed = {"soft_delete": ForgetMode.soft, "hard_delete": ForgetMode.hard}
        return seed[self.value] if self.value in seed else ForgetMode(self.value)


class ForgetBody(BaseModel):
    model_config = ConfigDict(extra="forbid")

    mode: ForgetModeName = ForgetModeName.soft
    reason: Annotated[str | None, Field(max_length=500)] = None
    request_id: RequestId = None


class RecallContextBody(RecallRequest):
    """``threshold`` is the seed's name for ``min_score``; the namespace is ``scope``."""

    model_config = ConfigDict(alias_generator=lambda name: "threshold" if name == "min_score" else name,
                              validate_by_name=False, extra="forbid", frozen=True)

    scope: ReadScope = None


class JobBody(BaseModel):
    model_config = ConfigDict(extra="forbid")

    memories: Annotated[list[DocumentInput], Field(min_length=1, description="the memories of one job")]
    scope: Scope = None


class HandoffBody(HandoffInput):
    scope: Scope = None


class CredentialBody(BaseModel):
    """The seed's ``access`` names map to the scopes ``read`` and ``read,write``."""

    model_config = ConfigDict(extra="forbid")

    name: str
    access: Literal["read_only", "read_write"]
    namespaces: list[str]
    admin: bool = False


# ---- results ----------------------------------------------------------------------------------------------


class MemoryOut(Document):
    model_config = SEED


class MemoryInfoOut(DocumentInfo):
    model_config = SEED


class MemorySummaryOut(DocumentSummary):
    model_config = SEED


class FactOut(FactInfo):
    model_config = SEED


class FactHitOut(FactHit):
    model_config = SEED


class MemoryDetailOut(MemoryOut):
    facts: list[FactOut]
    facts_total: int
    entities: list[dict[str, str | None]] = Field(description="id, name, type")
    entities_total: int


class Remembered(BaseModel):
    id: str
    status: Literal["remembered"] = "remembered"
    version: int | None
    chain_id: str


class MemoryList(BaseModel):
    memories: list[MemorySummaryOut]
    total: int
    next_cursor: str | None = None
    namespaces: NamespacesRead


class HistoryOut(BaseModel):
    items: list[MemoryInfoOut]
    next_cursor: str | None = None


class MemoryHitOut(DocumentHit):
    model_config = SEED

    facts: list[FactHitOut]  # type: ignore[assignment]  # the same facts, with the seed's names


class SearchOut(BaseModel):
    results: list[MemoryHitOut]
    total: int = Field(description="the number returned")
    namespaces: NamespacesRead


class Budget(BaseModel):
    max_items: int
    max_tokens: int
    used_items: int
    used_tokens: int
    skipped_items: int
    candidate_items: int


class RecallContextOut(BaseModel):
    query: str
    budget: Budget
    items: list[FactHitOut]
    skipped: list[dict[str, str]]
    context_text: str
    answer_status: str
    namespaces: NamespacesRead

    @classmethod
    def of(cls, query: str, result: RecallResult) -> RecallContextOut:
        return cls(query=query, budget=Budget(
            max_items=result.max_items, max_tokens=result.max_tokens, used_items=len(result.items),
            used_tokens=result.tokens_used, skipped_items=len(result.skipped),
            candidate_items=len(result.items) + len(result.skipped)),
            items=[FactHitOut.model_validate(i.model_dump()) for i in result.items],
            skipped=[s.model_dump(mode="json") for s in result.skipped], context_text=result.context_text,
            answer_status=result.answer_status.value, namespaces=result.namespaces)


class GraphOut(ExportResult):
    model_config = SEED


class JobAccepted(BaseModel):
    job_id: str


class CreatedCredential(BaseModel):
    id: str
    token: str = Field(description="shown once: graphmem keeps only its digest")


class ErrorBody(BaseModel):
    code: str
    message: str
    details: dict[str, object] | None = None


class ErrorOut(BaseModel):
    error: ErrorBody


# ---- the routes that need no token --------------------------------------------------------------------------


class Health(BaseModel):
    """``/health``: 200 while the database answers (``ok``, or ``warming`` with what the first searches would
    still wait for), 503 while it does not (``unavailable`` or ``restarting``, and why)."""

    status: Literal["ok", "warming", "unavailable", "restarting"]
    reason: str | None = None
    waiting_for: list[str] | None = None
    dialect: str
    schema_version: int
    versions: dict[str, str | None]
    engine: dict[str, object] = Field(description="bundled or external, running, reachable (an admin's token "
                                                   "also gets the engine's data directory and PID)")
    embedder: dict[str, object]


class Ready(BaseModel):
    """``/ready``: 200 ``ready`` once searches are fast; 503 until then, with what it waits for or why not."""

    status: Literal["ready", "warming", "unavailable", "restarting"]
    reason: str | None = None
    waiting_for: list[str] | None = None
