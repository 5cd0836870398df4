"""An export page fitted to a token budget, as recall fits its context (the same tokenizer): every node of the
page stays, since the next page starts after them; labels are shortened first when needed, down to
``MIN_LABEL_CHARS`` (``labels_cut_at``), then edges are left out from the end (``edges_left_out``), then labels
go (``labels_cut_at`` 0); a page whose ids alone exceed the budget is refused with the ``max_nodes`` that
would fit."""

from __future__ import annotations

from graphmem.errors import InvalidInput
from graphmem.results import ExportResult
from graphmem.results.tokens import GraphEdge, GraphNode, GraphResult, cut
from graphmem.search.recall import count_tokens

MIN_LABEL_CHARS = 40
COUNT_RESERVE = 4  # word pieces the result's own token count may take beyond the "0" it was sized with


def size(result: GraphResult) -> int:
    """Tokens of the JSON a client receives (white space is not a token for this tokenizer)."""
    return count_tokens(result.model_dump_json())


def fit_export(page: ExportResult, label_chars: int, max_tokens: int) -> GraphResult:
    """``page`` with labels of at most ``label_chars`` characters, in at most ``max_tokens`` tokens."""
    refs = {node.id: number for number, node in enumerate(page.nodes, start=1)}
    edges = [GraphEdge(source=refs.get(e.source, e.source), target=refs.get(e.target, e.target), kind=e.kind,
                       predicate=e.predicate, negated=e.negated) for e in page.edges]

    def build(chars: int, kept: int) -> GraphResult:
        nodes = [GraphNode(ref=refs[n.id], id=n.id, kind=n.kind, type=n.type, version=n.version, depth=n.depth,
                           label=cut(n.title or n.text or n.name, chars)[0] if chars else None)
                 for n in page.nodes]
        return GraphResult(nodes=nodes, edges=edges[:kept], total_documents=page.total_documents,
                           reachable_documents=page.reachable_documents,
                           truncated=page.truncated, unavailable_documents=page.unavailable_documents,
                           coverage=None if page.coverage is None else round(page.coverage, 4),
                           next_cursor=page.next_cursor, labels_cut_at=chars,
                           edges_left_out=len(edges) - kept, tokens=0, namespaces=page.namespaces)

    # Sized with tokens=0; the count written at the end takes a few word pieces more ("7999" is not one).
    budget = max_tokens - COUNT_RESERVE
    chars, kept = label_chars, len(edges)
    result = build(chars, kept)
    used = size(result)
    while used > budget and chars > MIN_LABEL_CHARS:  # labels first: every node and edge stays
        chars = max(MIN_LABEL_CHARS, int(chars * budget / used * 0.9))
        result = build(chars, kept)
        used = size(result)
    while used > budget and kept:  # then edges, from the end
        kept = max(0, kept - max(1, int(kept * (used - budget) / used) + 1))
        result = build(chars, kept)
        used = size(result)
    if used > budget:  # then the labels themselves: the ids stay, get_memory and get_entity read them
        chars = 0
        result = build(chars, kept)
        used = size(result)
    if used > budget:
        fits = max(1, int(len(page.nodes) * budget / used))
        raise InvalidInput(f"this page's {len(page.nodes)} nodes need {used} tokens without labels or edges, "
                           f"more than max_tokens {max_tokens}: ask for max_nodes {fits} or fewer, or a larger "
                           "max_tokens", field="max_tokens")
    result = result.model_copy(update={"tokens": used})
    return result.model_copy(update={"tokens": size(result)})  # its own count included
