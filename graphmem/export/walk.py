"""The walk of one export page: breadth-first from the seeds, one statement per level, the caps enforced
inside the statements (``cypher/export.cypher``), then the page's node properties and the edges it owns.
``graphmem/export/__init__.py`` describes what is walked and what the caps mean."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from graphmem.model import ExportCaps
from graphmem.results import ExportEdge, ExportNode, NodeKind
from graphmem.store.driver import Tx

COUNT_FACTOR = 10  # the reachable-document count stops at 10 x max_documents (or 10 x max_nodes nodes)


@dataclass(frozen=True)
class Reached:
    id: str
    kind: NodeKind
    depth: int


@dataclass(frozen=True)
class Walk:
    nodes: list[Reached]  # in traversal order: depth, then id
    complete: bool  # nothing further to walk: False when the budget, the document ceiling or ``enough`` stopped it
    cut: bool  # the fan-out cap left some node's neighbours out
    partial: bool = False  # the budget cut the last level short: going on reads that level again


def documents(nodes: list[Reached]) -> int:
    return sum(1 for node in nodes if node.kind == "document")


@dataclass(frozen=True)
class Traversal:
    """The walks of one export page: one read transaction, one namespace, one pinned view, one seed set."""

    tx: Tx
    scope: dict[str, Any]  # namespace and view parameters
    seed_ids: list[str]
    kinds: list[str]
    depth: int

    def walk(self, fanout: int, budget: int, document_ceiling: int | None = None, start: Walk | None = None,
             enough: int | None = None, documents_last: bool = False) -> Walk:
        """Breadth-first until ``depth``, ``budget`` nodes, or (if given) ``document_ceiling`` documents; with
        ``enough``, no further level is read once the walk holds that many nodes, while the level that gets
        there is read whole (up to the budget), so that the next page goes on from the next level. With
        ``documents_last``, the last level holds only its documents (a count of documents needs no more).

        ``start``: an earlier walk of this traversal (a later page's kept state), to go on from. A level the
        budget cut short is read again under the larger budget: a level's answer is ordered by id and cut
        by the budget, so the larger one begins with the smaller one's (its nodes' fan-outs are chosen again
        in the same stored order; a memory written between the two reads may change a hub's choice, as a
        new neighbour with a smaller id did when they were chosen by id)."""
        if start is not None and start.nodes and not (start.partial and start.nodes[-1].depth == 0):
            last = start.nodes[-1].depth
            first = last if start.partial else last + 1
            nodes = [node for node in start.nodes if node.depth < first]
            level, partial, cut = [node for node in nodes if node.depth == first - 1], False, start.cut
        else:
            rows = self.tx.collected("export_seeds", ids=self.seed_ids, kinds=self.kinds, remaining=budget,
                                     **self.scope)
            nodes = [Reached(row["id"], row["kind"], 0) for row in rows]
            first, level, partial, cut = 1, nodes, len(rows) == budget, False
        stopped = False
        for depth in range(first, self.depth + 1):
            frontier = {kind: [node.id for node in level if node.kind == kind]
                        for kind in ("document", "fact", "entity")}
            if partial or not any(frontier.values()):
                break
            if (enough is not None and len(nodes) >= enough) or \
                    (document_ceiling is not None and documents(nodes) >= document_ceiling):
                stopped = True
                break
            remaining = budget - len(nodes)
            # a map, not a list: the statement asks it once per candidate neighbour, and a list is scanned
            # (at 100k facts a count walk's level took half its time in `NOT id IN $visited`)
            visited = dict.fromkeys((node.id for node in nodes), True)
            if documents_last and depth == self.depth:
                rows = self.tx.collected("export_level_documents", documents=frontier["document"],
                                         facts=frontier["fact"], visited=visited, remaining=remaining, **self.scope)
            else:
                rows = self.tx.collected("export_level", documents=frontier["document"], facts=frontier["fact"],
                                         entities=frontier["entity"], visited=visited, fanout=fanout,
                                         fanout_probe=fanout + 1, remaining=remaining, **self.scope)
            level = [Reached(row["id"], row["kind"], depth) for row in rows]
            nodes.extend(level)
            partial = len(rows) == remaining
            cut = cut or any(row["cut"] for row in rows)
        return Walk(nodes, complete=not (partial or stopped), cut=cut, partial=partial)

    def count_walk(self, caps: ExportCaps) -> Walk:
        """The walk that counts the documents reachable within ``depth`` ignoring the page caps
        (``reachable_documents``): every cap ten times the page's (documents, nodes, fan-out per node).
        Without a fan-out cap it read every fact of every hub on the way: 2.9 s for one export at 100k facts.
        Its last level reads documents only: nothing else there adds to the count."""
        return self.walk(fanout=COUNT_FACTOR * caps.fanout, budget=COUNT_FACTOR * caps.max_nodes,
                         document_ceiling=COUNT_FACTOR * caps.max_documents, documents_last=True)


def reachable_documents(count: Walk, caps: ExportCaps, included: list[Reached]) -> tuple[int, bool]:
    """(documents reachable within ``depth`` ignoring the page caps, is that a lower bound), from the count's
    walk (``Traversal.count_walk``); where that walk hit a cap the count is a lower bound. The included
    documents count even where the walk stopped before reaching them."""
    ceiling = COUNT_FACTOR * caps.max_documents
    found = {node.id for node in [*count.nodes, *included] if node.kind == "document"}
    if not count.complete or count.cut or len(found) > ceiling:
        return min(len(found), ceiling), True
    return len(found), False


def cut_page(nodes: list[Reached], offset: int, caps: ExportCaps) -> list[Reached]:
    """Nodes from ``offset``, until ``max_nodes`` nodes or ``max_documents`` documents."""
    page: list[Reached] = []
    included = 0
    for node in nodes[offset:offset + caps.max_nodes]:
        if node.kind == "document":
            if included == caps.max_documents:
                break
            included += 1
        page.append(node)
    return page


_PROPERTY_STATEMENTS: dict[NodeKind, str] = {
    "document": "export_documents", "fact": "export_facts", "entity": "export_entities"}


def page_properties(tx: Tx, scope: dict[str, Any], page: list[Reached], walked_here: bool) -> dict[str, dict[str, Any]]:
    """The properties of the page's nodes that are still in the namespace and view, by id (an unavailable
    reference has none: it is shown by id). ``walked_here``: the page's nodes were walked in this
    transaction, so its entities are known to be in view (checking each again took 14-40 ms of a 1,000-node
    first page at 100k facts)."""
    properties: dict[str, dict[str, Any]] = {}
    for kind, statement in _PROPERTY_STATEMENTS.items():
        ids = [node.id for node in page if node.kind == kind]
        if ids:
            extra = {"walked_here": walked_here} if kind == "entity" else {}
            properties.update((row["id"], row) for row in tx.collected(statement, ids=ids, **extra, **scope))
    return properties


def page_nodes(page: list[Reached], properties: dict[str, dict[str, Any]]) -> list[ExportNode]:
    return [ExportNode.model_validate({**_fields(properties.get(node.id, {})), "id": node.id, "kind": node.kind,
                                       "depth": node.depth}) for node in page]


def _fields(row: dict[str, Any]) -> dict[str, Any]:
    """A node's fields, without what its properties carry for its edges (a fact's ``entities``)."""
    return {key: value for key, value in row.items() if key != "entities"}


def page_edges(tx: Tx, scope: dict[str, Any], page: list[Reached], emitted: list[Reached],
               properties: dict[str, dict[str, Any]]) -> list[ExportEdge]:
    """The edges this page owns, in a fixed order. A page fact's CONTAINS and MENTIONS edges come from its
    properties (its ``document_id`` and the ``entities`` it mentions, read in view in this transaction):
    reading them again by statement looked every fact up twice more, 40 ms of a 1,000-node page at 100k
    facts. The rest, and the triples, come from ``export_edges``."""
    if not page:
        return []
    emitted_ids = {node.id for node in emitted}
    edges: list[dict[str, Any]] = []
    subjects: set[str] = set()
    for node in page:
        if node.kind != "fact":
            continue
        row = properties[node.id]
        if row["document_id"] in emitted_ids:
            edges.append({"source": row["document_id"], "target": node.id, "kind": "contains"})
        for entity in row["entities"]:
            if entity in emitted_ids:
                edges.append({"source": node.id, "target": entity, "kind": "mentions"})
                subjects.add(entity)
    by_kind = {kind: [node.id for node in page if node.kind == kind]
               for kind in ("document", "unavailable", "entity")}
    on_page = {node.id for node in page}
    earlier_facts = [node.id for node in emitted if node.kind == "fact" and node.id not in on_page]
    edges += tx.collected("export_edges", documents=by_kind["document"], unavailable=by_kind["unavailable"],
                          entities=by_kind["entity"] if earlier_facts else [], subjects=sorted(subjects),
                          page={node.id: True for node in page if node.kind != "unavailable"},
                          emitted=dict.fromkeys(emitted_ids, True), earlier_facts=earlier_facts, **scope)
    return sorted((ExportEdge.model_validate(edge) for edge in edges),
                  key=lambda e: (e.kind, e.source, e.target, e.predicate or "", bool(e.negated), e.fact_id or ""))
