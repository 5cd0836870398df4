"""A page of the evidence graph shaped for an agent's context window: short refs for node ids, labels cut to
a length, and the size of its own JSON in tokens (``search/budget.py`` fits it)."""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict, Field

from graphmem.results.documents import NamespacesRead
from graphmem.results.seed import seed_name

GRAPH_NAMES = {"next_cursor": "nextCursor", "labels_cut_at": "labelsCutAt", "edges_left_out": "edgesLeftOut"}


def cut(text: str | None, limit: int) -> tuple[str | None, bool]:
    """``text`` cut at ``limit`` characters, ending with "…" when cut, and whether it was."""
    if text is None or len(text) <= limit:
        return text, False
    return text[:limit].rstrip() + "…", True


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


class GraphResult(BaseModel):
    """A page of the evidence graph fitted to a token budget (``search/budget.py``), in the seed's names and
    those of the MCP tool that returns it. Edges name nodes by a small ``ref`` (a UUID costs some 26 tokens, a
    ref one or two)."""

    model_config = ConfigDict(alias_generator=lambda name: GRAPH_NAMES.get(name, seed_name(name)),
                              serialize_by_alias=True, validate_by_name=True)

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
