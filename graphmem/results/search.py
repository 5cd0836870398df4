"""Results of the search calls: fact, document, entity and triple hits with their signals and citations, and
budgeted recall."""

from __future__ import annotations

from enum import StrEnum

from pydantic import BaseModel, Field

from graphmem.results.documents import INFERENCE, EntityRef, NamespacesRead

# ---- search -------------------------------------------------------------------------------------------


class Signal(StrEnum):
    vector = "vector"
    fulltext = "fulltext"
    graph = "graph"
    name = "name"  # entity search: the name's full-text match
    alias = "alias"  # entity search: the query is one of the entity's aliases (ingest/aliases.py)
    memory = "memory"  # fact search: the fact's memory ranks high by its own signals (its best fact only)
    memory_vector = "memory_vector"  # document search: the memory's own vector (its best chunk)
    memory_fulltext = "memory_fulltext"  # document search: the memory's own full-text entry (its best chunk)
    facts = "facts"  # document search: the memory's best fact in fact search
    memory_context = "memory_context"  # document search: stored next to a strong memory (FOLLOWS)


class SignalScore(BaseModel):
    signal: Signal
    score: float
    rank: int = Field(description="1-based rank within the signal")


class Citation(BaseModel):
    document_id: str
    namespace: str = Field(description="the namespace of the memory")
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
    namespace: str
    title: str | None
    source: str | None
    version: int | None
    is_latest: bool
    recorded_at: int
    score: float
    similarity: float
    facts: list[FactHit]
    signals: list[SignalScore] | None = Field(None, description="with explain: the memory-level signals that "
                                              "ranked it (memory_vector, memory_fulltext, facts)")


class EntityHit(BaseModel):
    id: str
    namespace: str
    name: str | None
    type: str | None
    score: float
    similarity: float = Field(description="cosine similarity of the name's embedding to the query, 0..1")
    facts: int = Field(description="facts in the view that mention the entity")
    signals: list[SignalScore] | None = None


class EntityPage(BaseModel):
    items: list[EntityHit]
    next_cursor: str | None = None
    namespaces: NamespacesRead = []


def triple_statement(subject: str | None, predicate: str, obj: str | None, negated: bool) -> str:
    """A triple as one line: "subject predicate object", with "not" before the predicate when negated."""
    return f"{subject} {'not ' if negated else ''}{predicate} {obj}"


class TripleHit(BaseModel):
    subject: EntityRef
    predicate: str
    object: EntityRef
    negated: bool
    asserted: bool = Field(False, description="an agent stated it (its fact's memory names the agent as source); "
                                              "else extraction read it from the fact")
    statement: str = Field(description='"subject predicate object", with "not" when negated')
    fact_id: str
    text: str
    recorded_at: int
    citation: Citation


class TriplePage(BaseModel):
    items: list[TripleHit]
    next_cursor: str | None = None
    namespaces: NamespacesRead = []


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
    namespaces: NamespacesRead = []
