"""Results shaped for an agent's context: no embedding anywhere, long texts cut with a flag that says so (and
how to get the whole), lists that say what they left out, and the gateway seed's lineage names
(``isLatest``, ``isForgotten``, ``isInference``, ``parentMemoryId``) and evidence-graph names."""

from __future__ import annotations

from typing import Literal, TypeVar

from pydantic import BaseModel, Field

from graphmem.results import Change, Changed, DocumentInfo, FactHit, FactInfo, NamespacesRead
from graphmem.results.seed import Seed
from graphmem.results.tokens import cut

PREVIEW_CHARS = 300
# the seed's words for what a write did
WRITTEN_STATUS = {Change.created: "remembered", Change.versioned: "updated", Change.unchanged: "unchanged"}
FACT_CHARS = 500


Texted = TypeVar("Texted", bound=BaseModel)


def cut_texts(items: list[Texted]) -> list[Texted]:
    """Service results with a fact's ``text`` (an entity's facts, a path's steps, triples), each text cut at
    ``FACT_CHARS``: a cut text ends with "…" (get_memory reads the whole memory)."""
    return [item.model_copy(update={"text": cut(getattr(item, "text"), FACT_CHARS)[0]})  # noqa: B009
            for item in items]


class Lineage(Seed):
    version: int | None = Field(None, description="None when unknown")
    is_latest: bool
    is_forgotten: bool
    is_inference: bool = False
    parent_memory_id: str | None = None


class MemoryBrief(Lineage):
    id: str
    namespace: str
    title: str | None = None
    path: str | None = None
    preview: str | None = Field(None, description=f"the first {PREVIEW_CHARS} characters; get_memory has all")
    recorded_at: int

    @classmethod
    def of(cls, info: DocumentInfo, text: str | None = None) -> MemoryBrief:
        return cls(id=info.id, namespace=info.namespace, title=info.title, path=info.path,
                   preview=cut(text, PREVIEW_CHARS)[0], recorded_at=info.recorded_at, version=info.version,
                   is_latest=info.is_latest, is_forgotten=info.is_forgotten, parent_memory_id=info.parent_memory_id)


class FactBrief(Lineage):
    fact_id: str
    text: str | None
    text_truncated: bool = False
    memory_id: str | None = None
    start: int
    end: int

    @classmethod
    def of_info(cls, fact: FactInfo) -> FactBrief:
        text, truncated = cut(fact.text, FACT_CHARS)
        return cls(fact_id=fact.id, text=text, text_truncated=truncated, start=fact.start, end=fact.end,
                   version=fact.version, is_latest=fact.is_latest, is_forgotten=fact.is_forgotten,
                   parent_memory_id=fact.parent_memory_id)


class FactFound(FactBrief):
    namespace: str
    score: float
    similarity: float
    title: str | None = None
    path: str | None = None
    recorded_at: int
    entities: list[str] = Field(default_factory=list)
    signals: list[str] | None = Field(None, description="with explain: each signal's rank (signal:rank)")

    @classmethod
    def of(cls, hit: FactHit) -> FactFound:
        text, truncated = cut(hit.text, FACT_CHARS)
        signals = [f"{s.signal.value}:{s.rank}" for s in hit.explain.signals] if hit.explain else None
        return cls(fact_id=hit.fact_id, text=text, text_truncated=truncated, memory_id=hit.citation.document_id,
                   namespace=hit.citation.namespace, start=hit.citation.start, end=hit.citation.end,
                   score=round(hit.score, 5),
                   similarity=round(hit.similarity, 4), title=hit.citation.title, path=hit.citation.path,
                   recorded_at=hit.recorded_at, entities=[e.name or e.id for e in hit.entities], signals=signals,
                   version=hit.version, is_latest=hit.is_latest, is_forgotten=hit.is_forgotten,
                   parent_memory_id=hit.parent_memory_id)


class Passage(BaseModel):
    """A fact inside a found memory: the memory already carries its id, title, path and lineage."""

    fact_id: str
    text: str | None
    text_truncated: bool = False
    start: int
    end: int
    similarity: float
    entities: list[str] = Field(default_factory=list)

    @classmethod
    def of(cls, hit: FactHit) -> Passage:
        text, truncated = cut(hit.text, FACT_CHARS)
        return cls(fact_id=hit.fact_id, text=text, text_truncated=truncated, start=hit.citation.start,
                   end=hit.citation.end, similarity=round(hit.similarity, 4),
                   entities=[e.name or e.id for e in hit.entities])


class MemoryFound(Seed):
    id: str
    namespace: str
    title: str | None = None
    path: str | None = None
    score: float
    version: int | None = None
    is_latest: bool
    recorded_at: int
    facts: list[Passage] = Field(description="its best facts (up to 3), where they are in the memory")


class SearchMemoriesResult(BaseModel):
    results: list[MemoryFound]
    total: int = Field(description="the number returned")
    limit: int
    clamped: bool = Field(description="the limit asked for was outside 1-100 and was clamped")
    namespaces: NamespacesRead


class ListMemoriesResult(BaseModel):
    memories: list[MemoryBrief]
    total: int
    page: int
    limit: int
    has_more: bool
    next_cursor: str | None = Field(None, description="pass it back as cursor for the next page")
    namespaces: NamespacesRead


class MemoryFull(MemoryBrief):
    content: str | None = Field(None, description="None once redacted")
    is_redacted: bool = False
    forget_reason: str | None = Field(None, description="the reason given when it was forgotten or redacted")
    content_truncated: bool = Field(False, description="content was cut at max_chars: call again with more")
    content_chars: int | None = None
    source: str | None = None
    metadata: dict[str, str | int | float | bool] | None = None


class GetMemoryResult(BaseModel):
    memory: MemoryFull
    facts: list[FactBrief]
    facts_total: int
    entities: list[str]
    entities_total: int


class Written(Seed):
    id: str
    chain_id: str
    version: int | None
    is_latest: bool = True
    status: Literal["remembered", "updated", "unchanged"]

    @classmethod
    def of(cls, changed: Changed) -> Written:
        document = changed.document
        return cls(id=document.id, chain_id=document.chain_id, version=document.version,
                   status=WRITTEN_STATUS[changed.change])
