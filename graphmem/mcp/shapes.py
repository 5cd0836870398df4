"""Results shaped for an agent's context: no embedding anywhere, long texts cut with a flag that says so (and
how to get the whole), lists that say what they left out, and the gateway seed's lineage names
(``isLatest``, ``isForgotten``, ``isInference``, ``parentMemoryId``) and evidence-graph names."""

from __future__ import annotations

from typing import Literal, TypeVar

from mcp.server.mcpserver.exceptions import ToolError
from pydantic import BaseModel, ConfigDict, Field

from graphmem.results import DocumentInfo, ExportResult, FactHit, FactInfo, NamespacesRead
from graphmem.search.recall import count_tokens

SEED_NAMES = {"is_latest": "isLatest", "is_forgotten": "isForgotten", "is_inference": "isInference",
              "parent_memory_id": "parentMemoryId", "total_documents": "totalDocuments",
              "reachable_documents": "reachableDocuments",
              "unavailable_documents": "unavailableDocuments", "next_cursor": "nextCursor",
              "labels_cut_at": "labelsCutAt", "edges_left_out": "edgesLeftOut"}
PREVIEW_CHARS = 300
FACT_CHARS = 500
MIN_LABEL_CHARS = 40
COUNT_RESERVE = 4  # word pieces the result's own token count may take beyond the "0" it was sized with


def cut(text: str | None, limit: int) -> tuple[str | None, bool]:
    if text is None or len(text) <= limit:
        return text, False
    return text[:limit].rstrip() + "…", True


Texted = TypeVar("Texted", bound=BaseModel)


def cut_texts(items: list[Texted]) -> list[Texted]:
    """Service results with a fact's ``text`` (an entity's facts, a path's steps, triples), each text cut at
    ``FACT_CHARS``: a cut text ends with "…" (get_memory reads the whole memory)."""
    return [item.model_copy(update={"text": cut(getattr(item, "text"), FACT_CHARS)[0]})  # noqa: B009
            for item in items]


class Seed(BaseModel):
    model_config = ConfigDict(alias_generator=lambda name: SEED_NAMES.get(name, name), serialize_by_alias=True,
                              validate_by_name=True)


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


class GraphNode(BaseModel):
    ref: int = Field(description="this node's number in the result; edges name nodes by it")
    id: str
    kind: str
    label: str | None = Field(None, description="a memory's title, a fact's text (cut; see labelsCutAt), an "
                                                 "entity's name")
    type: str | None = None
    version: int | None = None
    depth: int


class GraphEdge(BaseModel):
    source: int | str = Field(description="a node's ref, or the id of a node an earlier page gave")
    target: int | str
    kind: str
    predicate: str | None = None
    negated: bool | None = None


class GraphResult(Seed):
    """The bounded evidence graph, fitted to ``max_tokens``: every node of the page stays (the next page starts
    after them); labels are shortened first when needed, down to 40 characters (``labels_cut_at``), then edges
    are left out from the end (``edges_left_out``), then labels go (``labels_cut_at`` 0); a page whose ids alone
    exceed the budget is refused with the ``max_nodes`` that would fit. Edges name nodes by a small ``ref`` (a
    UUID costs some 26 tokens, a ref one or two)."""

    nodes: list[GraphNode]
    edges: list[GraphEdge]
    total_documents: int
    reachable_documents: int | None = Field(description="null when not counted (count_reachable false)")
    truncated: bool
    unavailable_documents: int
    coverage: float | None
    next_cursor: str | None = Field(None, description="pass it back as cursor, with the same seed, for more")
    labels_cut_at: int = Field(description="labels longer than this many characters were cut")
    edges_left_out: int = Field(0, description="edges of this page left out to stay within max_tokens")
    namespaces: NamespacesRead
    tokens: int = Field(description="this result's size in tokens (all-MiniLM-L6-v2 tokenizer), at most "
                                    "max_tokens")

    @classmethod
    def of(cls, page: ExportResult, text_chars: int, max_tokens: int) -> GraphResult:
        refs = {node.id: number for number, node in enumerate(page.nodes, start=1)}
        edges = [GraphEdge(source=refs.get(e.source, e.source), target=refs.get(e.target, e.target), kind=e.kind,
                           predicate=e.predicate, negated=e.negated) for e in page.edges]

        def build(chars: int, kept: int) -> GraphResult:
            nodes = [GraphNode(ref=refs[n.id], id=n.id, kind=n.kind, type=n.type, version=n.version, depth=n.depth,
                               label=cut(n.title or n.text or n.name, chars)[0] if chars else None)
                     for n in page.nodes]
            return cls(nodes=nodes, edges=edges[:kept], total_documents=page.total_documents,
                       reachable_documents=page.reachable_documents,
                       truncated=page.truncated, unavailable_documents=page.unavailable_documents,
                       coverage=None if page.coverage is None else round(page.coverage, 4),
                       next_cursor=page.next_cursor, labels_cut_at=chars,
                       edges_left_out=len(edges) - kept, tokens=0, namespaces=page.namespaces)

        # Sized with tokens=0; the count written at the end takes a few word pieces more ("7999" is not one).
        budget = max_tokens - COUNT_RESERVE
        chars, kept = text_chars, len(edges)
        result = build(chars, kept)
        size = result.size()
        while size > budget and chars > MIN_LABEL_CHARS:  # labels first: every node and edge stays
            chars = max(MIN_LABEL_CHARS, int(chars * budget / size * 0.9))
            result = build(chars, kept)
            size = result.size()
        while size > budget and kept:  # then edges, from the end
            kept = max(0, kept - max(1, int(kept * (size - budget) / size) + 1))
            result = build(chars, kept)
            size = result.size()
        if size > budget:  # then the labels themselves: the ids stay, get_memory and get_entity read them
            chars = 0
            result = build(chars, kept)
            size = result.size()
        if size > budget:
            fits = max(1, int(len(page.nodes) * budget / size))
            raise ToolError(f"invalid input: this page's {len(page.nodes)} nodes need {size} tokens without labels "
                            f"or edges, more than max_tokens {max_tokens}: ask for max_nodes {fits} "
                            "or fewer, or a larger max_tokens")
        result = result.model_copy(update={"tokens": size})
        return result.model_copy(update={"tokens": result.size()})  # its own count included

    def size(self) -> int:
        """Tokens of the JSON the SDK sends (white space is not a token for this tokenizer)."""
        return count_tokens(self.model_dump_json())
