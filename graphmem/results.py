"""What the service returns: every result type, in one place, serialisable as it is.

Names are snake_case; each front end chooses its own casing (the HTTP API and the MCP tools rename the
evidence-graph fields to the gateway seed's ``totalDocuments``, ``truncated``, ``unavailableDocuments``,
``coverage``). No result carries an embedding.
"""

from __future__ import annotations

import json
from enum import StrEnum
from typing import Any, Literal

from pydantic import BaseModel, Field, field_validator

from graphmem.model import ForgetMode


class EntityRef(BaseModel):
    """An entity as a result names it."""

    id: str
    name: str | None
    type: str | None


# ---- documents ----------------------------------------------------------------------------------------


INFERENCE = ("graphmem stores what was written and extracts from it; it infers nothing, so this is false for "
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
    kind: str | None = Field(None, description="sentence, item, field, code, table, html or meta")
    section: str | None = None
    attributes: list[str] = Field(default_factory=list)
    version: int | None = Field(None, description="its memory version's; None when unknown")
    is_latest: bool
    is_forgotten: bool
    is_inference: bool = Field(False, description=INFERENCE)
    parent_memory_id: str | None = None
    recorded_at: int
    superseded_at: int | None = None


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
    """Everything stored in a namespace, every version included."""

    documents: int
    facts: int
    entities: int
    triples: int


class Change(StrEnum):
    created = "created"  # a new memory
    versioned = "versioned"  # a new version of the memory with the same source
    unchanged = "unchanged"  # the text is already current in the namespace
    failed = "failed"


class ErrorReport(BaseModel):
    code: str
    message: str
    details: dict[str, Any] = Field(default_factory=dict)


class IngestOutcome(BaseModel):
    """What ingesting one item did."""

    change: Change
    document: Document | None = None
    error: ErrorReport | None = None


# ---- handoffs -----------------------------------------------------------------------------------------


class HandoffContext(BaseModel):
    goal: str
    summary: str
    decisions: list[str]
    next_steps: list[str]
    references: list[str]


class Handoff(BaseModel):
    """A revision of a project's handoff; ``version`` 0 with no context when the project has none yet."""

    project: str
    version: int
    context: HandoffContext | None = None
    author: str | None = Field(None, description="the credential that saved it, or 'local'")
    created_at: int | None = None
    id: str | None = None


class HandoffPage(BaseModel):
    items: list[Handoff] = Field(description="the latest revision of each project, by project name")
    next_cursor: str | None = None


# ---- jobs ---------------------------------------------------------------------------------------------


class JobStatus(StrEnum):
    queued = "queued"
    running = "running"
    done = "done"
    failed = "failed"


class JobInfo(BaseModel):
    id: str
    namespace: str
    status: JobStatus
    attempts: int
    items: int
    submitted_at: int
    started_at: int | None = None
    finished_at: int | None = None
    error: str | None = None
    document_ids: list[str] | None = None


# ---- search -------------------------------------------------------------------------------------------


class Signal(StrEnum):
    vector = "vector"
    fulltext = "fulltext"
    graph = "graph"
    name = "name"  # entity search: the name's full-text match


class SignalScore(BaseModel):
    signal: Signal
    score: float
    rank: int = Field(description="1-based rank within the signal")


class Citation(BaseModel):
    document_id: str
    title: str | None
    source: str | None
    path: str | None = None
    start: int
    end: int


class Explanation(BaseModel):
    signals: list[SignalScore]
    fused: float
    similarity: float
    path: list[str] = Field(description="document id → fact id → entity ids")


class FactHit(BaseModel):
    """A fact found by a search, with the lineage of the memory version it belongs to."""

    fact_id: str
    text: str
    score: float
    similarity: float = Field(description="cosine similarity to the query, 0..1 scale")
    version: int | None = Field(description="its memory version's; None when unknown")
    is_latest: bool
    is_forgotten: bool = False
    is_inference: bool = Field(False, description=INFERENCE)
    parent_memory_id: str | None = Field(None, description="the previous version of its memory")
    recorded_at: int
    citation: Citation
    entities: list[EntityRef]
    attributes: list[str] = Field(default_factory=list, description='dates and numbers: "DATE: last May"')
    explain: Explanation | None = None


class DocumentHit(BaseModel):
    document_id: str
    title: str | None
    source: str | None
    version: int | None
    is_latest: bool
    recorded_at: int
    score: float
    similarity: float
    facts: list[FactHit]


class EntityHit(BaseModel):
    id: str
    name: str | None
    type: str | None
    score: float
    similarity: float = Field(description="cosine similarity of the name's embedding to the query, 0..1")
    facts: int = Field(description="facts in the view that mention the entity")
    signals: list[SignalScore] | None = None


class EntityPage(BaseModel):
    items: list[EntityHit]
    next_cursor: str | None = None


class TripleHit(BaseModel):
    subject: EntityRef
    predicate: str
    object: EntityRef
    negated: bool
    statement: str = Field(description='"subject predicate object", with "not" when negated')
    fact_id: str
    text: str
    recorded_at: int
    citation: Citation


class TriplePage(BaseModel):
    items: list[TripleHit]
    next_cursor: str | None = None


class AnswerStatus(StrEnum):
    found = "found"
    no_confirmed_answer = "no_confirmed_answer"


class SkipReason(StrEnum):
    below_relevance = "below_relevance"
    duplicate = "duplicate"
    item_limit = "item_limit"
    token_budget = "token_budget"


class Skipped(BaseModel):
    fact_id: str
    reason: SkipReason


class RecallResult(BaseModel):
    answer_status: AnswerStatus
    context_text: str
    items: list[FactHit]
    tokens_used: int
    max_tokens: int
    max_items: int
    skipped: list[Skipped]


# ---- the evidence-graph export ------------------------------------------------------------------------

NodeKind = Literal["document", "fact", "entity", "unavailable"]
EdgeKind = Literal["contains", "mentions", "triple", "previous_version"]


class ExportNode(BaseModel):
    """One node. Which fields are set depends on the kind; an unavailable node carries its id only."""

    id: str
    kind: NodeKind
    depth: int = Field(description="hops from the nearest seed")
    # documents
    title: str | None = None
    source: str | None = None
    version: int | None = None
    chain_id: str | None = None
    # facts
    text: str | None = None
    document_id: str | None = None
    position: int | None = None
    start: int | None = None
    end: int | None = None
    # entities
    name: str | None = None
    type: str | None = None
    # documents and facts: what the time views decide by
    is_latest: bool | None = None
    is_forgotten: bool | None = None
    recorded_at: int | None = None
    superseded_at: int | None = None


class ExportEdge(BaseModel):
    """An edge as stored: contains (document → fact), mentions (fact → entity), triple (subject → object,
    with its predicate, negation and supporting fact), previous_version (newer → older version)."""

    source: str
    target: str
    kind: EdgeKind
    predicate: str | None = None
    negated: bool | None = None
    fact_id: str | None = None


class ExportSummary(BaseModel):
    """The honest completeness fields of one page (``graphmem/export/__init__.py`` defines them)."""

    total_documents: int = Field(description="documents on this page")
    truncated: bool
    unavailable_documents: int
    coverage: float = Field(ge=0, le=1)
    coverage_is_upper_bound: bool
    next_cursor: str | None = Field(None, description="None when this is the last page")


class ExportResult(ExportSummary):
    nodes: list[ExportNode]
    edges: list[ExportEdge]


class RenderedExport(ExportSummary):
    """A page rendered as GraphML or as a Cypher script, with the same completeness fields."""

    format: Literal["graphml", "cypher"]
    media_type: str
    content: str
