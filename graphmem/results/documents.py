"""Results of the memory calls: versions with their lineage, pages, forgetting, and what writes and
ingestion did."""

from __future__ import annotations

import json
from enum import StrEnum
from typing import Annotated, Any

from pydantic import BaseModel, Field, field_validator

from graphmem.model import ForgetMode

# What a read answers with beside its items: a caller that names no namespace reads every one it may read,
# and is told which those were.
NamespacesRead = Annotated[list[str], Field(description="the namespaces this answer read, in name order")]


class EntityRef(BaseModel):
    """An entity as a result names it."""

    id: str
    name: str | None
    type: str | None


class EntityWithAliases(EntityRef):
    """An entity as entity lists and lookups name it: with its namespace and aliases."""

    namespace: str

    aliases: list[str] = Field(description=(
        "other names the memories in view gave it, as written: a short name ('Maya' for 'Maya Okafor') or "
        "the other number"))

# ---- documents ----------------------------------------------------------------------------------------


INFERENCE = ("graphmem stores what was written and what agents stated (a memory whose source is "
             "agent:<credential>:<operation>), and extracts from it; it infers nothing, so this is false for "
             "everything today")


class DocumentInfo(BaseModel):
    """One version of a memory, without its content. Lineage fields carry the gateway seed's meaning: version,
    is_latest, is_forgotten, is_inference, parent_memory_id."""

    id: str
    namespace: str
    chain_id: str
    version: int | None = Field(None, description="None when unknown, never a made-up 1")
    is_latest: bool
    is_forgotten: bool
    is_inference: bool = Field(False, description=INFERENCE)
    is_redacted: bool = False
    title: str | None = None
    source: str | None = None
    path: str | None = Field(None, description="the memory's folder, e.g. projects/atlas/decisions")
    metadata: dict[str, str | int | float | bool] | None = None
    fact_count: int | None = None
    created_at: int | None = Field(None, description="first version's time, epoch ms UTC")
    recorded_at: int
    superseded_at: int | None = None
    forgotten_at: int | None = None
    restored_at: int | None = None
    redacted_at: int | None = None
    forget_reason: str | None = Field(None, description="the reason given when it was forgotten or redacted")
    parent_memory_id: str | None = Field(None, description="the previous version's id")

    @field_validator("metadata", mode="before")
    @classmethod
    def _decode(cls, value: object) -> object:
        return json.loads(value) if isinstance(value, str) else value

    @classmethod
    def from_row(cls, row: dict[str, Any], **extra: Any) -> DocumentInfo:
        return cls.model_validate({**row["document"], "parent_memory_id": row.get("parent_memory_id"), **extra})


class Document(DocumentInfo):
    content: str | None = Field(None, description="None once redacted")
    latest_id: str | None = Field(None, description="id of the chain's latest version")


class FactInfo(BaseModel):
    """A fact of a memory version, with that version's lineage."""

    id: str
    text: str | None = Field(description="None once redacted")
    start: int
    end: int
    position: int
    kind: str | None = Field(None, description="sentence, item, field or table "
                                               "(code, html, meta: stored by an older version)")
    section: str | None = None
    attributes: list[str] = Field(default_factory=list)
    version: int | None = Field(None, description="its memory version's; None when unknown")
    is_latest: bool
    is_forgotten: bool
    is_inference: bool = Field(False, description=INFERENCE)
    parent_memory_id: str | None = None
    recorded_at: int
    superseded_at: int | None = None


class FactRecord(FactInfo):
    """A fact read by id: where it belongs too."""

    memory_id: str
    namespace: str


class FactPage(BaseModel):
    items: list[FactRecord]
    total: int = Field(description="facts in the namespace, view and conditions")
    limit: int
    next_cursor: str | None = Field(None, description="None on the last page")
    cursors: list[str] | None = Field(None, description="with item_cursors: the cursor after each item")
    namespaces: NamespacesRead = []


class MemoryDetail(BaseModel):
    """A memory version with its facts (in order) and the entities they mention, each list bounded."""

    memory: Document
    facts: list[FactInfo]
    facts_total: int
    entities: list[EntityRef]
    entities_total: int


class DocumentSummary(DocumentInfo):
    preview: str | None = None


class DocumentPage(BaseModel):
    items: list[DocumentSummary]
    total: int = Field(description="memories in the namespace and view")
    limit: int
    next_cursor: str | None = Field(None, description="None on the last page")
    cursors: list[str] | None = Field(None, description="with item_cursors: the cursor after each item")
    namespaces: NamespacesRead = []


class HistoryPage(BaseModel):
    items: list[DocumentInfo] = Field(description="versions, newest first")
    next_cursor: str | None = None


class ForgetResult(BaseModel):
    id: str
    chain_id: str
    mode: ForgetMode
    documents: int = Field(description="versions affected (hard: deleted)")
    facts: int = Field(description="facts affected (hard: deleted)")


class NamespaceCounts(BaseModel):
    """Everything stored in a namespace: ``documents`` counts every version, ``memories`` one per version
    chain (its latest version)."""

    documents: int
    memories: int
    facts: int
    entities: int
    triples: int


class Change(StrEnum):
    created = "created"  # a new memory
    versioned = "versioned"  # a new version of the memory with the same source
    unchanged = "unchanged"  # the text is already current in the namespace
    failed = "failed"


class Changed(BaseModel):
    """What a write did: the memory version it answers with, and whether that is new."""

    document: Document
    change: Change


class ErrorReport(BaseModel):
    code: str
    message: str
    details: dict[str, Any] = Field(default_factory=dict)


class IngestOutcome(BaseModel):
    """What ingesting one item did."""

    change: Change
    document: Document | None = None
    error: ErrorReport | None = None
