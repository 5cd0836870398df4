"""The walk of one export page: breadth-first from the seeds, a level in one statement or in parts of its
frontier, the caps enforced inside the statements (``cypher/export.cypher``), then the page's node
properties and the edges it owns.
``graphmem/export/__init__.py`` describes what is walked and what the caps mean."""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any

from graphmem.model import ExportCaps
from graphmem.results import ExportEdge, ExportNode, NodeKind
from graphmem.store.driver import Tx
from graphmem.store.names import StatementName

COUNT_FACTOR = 10  # the reachable-document count stops at 10 x max_documents (or 10 x max_nodes nodes)


@dataclass(frozen=True)
class Reached:
    id: str
    kind: NodeKind
    depth: int
    # a fact's document (its ``document_id``, the document that CONTAINS it), read where the walk reached the
    # fact; the count's last level starts from it (``Traversal._last_level``). None for other kinds, and for facts
    # of a kept walk (page.py), which the count never goes on from.
    document: str | None = field(default=None, compare=False)


WHOLE = -1  # ``Walk.expanded`` of a walk whose last level is whole
MIN_CHUNK = 8  # the fewest nodes of a frontier a page expands in one statement
CHUNK_MARGIN = 1.25  # how many more frontier nodes than the rate so far says a part expands


@dataclass(frozen=True)
class Walk:
    nodes: list[Reached]  # in traversal order: by depth; within a level, as ``export_level`` orders it
    complete: bool  # nothing further to walk: False when the budget, the document ceiling or ``enough`` stopped it
    cut: bool  # the fan-out cap left some node's neighbours out
    # how many nodes of the level before the last one the last level was read from (WHOLE: all of them; on
    # the seeds' level, 0 means the budget cut the seeds short)
    expanded: int = WHOLE

    @property
    def partial(self) -> bool:
        return self.expanded != WHOLE


def documents(nodes: list[Reached]) -> int:
    return sum(1 for node in nodes if node.kind == "document")


def chunk_size(need: int, fanout: int, read: int, found: int) -> int:
    """How many frontier nodes to expand next for ``need`` more nodes, from what the ``read`` nodes of this
    level expanded so far ``found``: ``CHUNK_MARGIN`` times what that rate says (a node adds at most
    ``fanout`` before anything is read), and never fewer than ``MIN_CHUNK`` (each statement costs a round
    trip)."""
    rate = found / read if read else fanout
    return max(MIN_CHUNK, math.ceil(CHUNK_MARGIN * need / max(rate, 0.25)))


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
        """Breadth-first until ``depth``, ``budget`` nodes, or (if given) ``document_ceiling`` documents. With
        ``enough``, the walk stops once it holds that many nodes, inside a level if need be: a level is read
        in parts (``chunk_size`` frontier nodes at a time), so a page reads about as much of a level as it
        shows, whatever the level's size. Without it, each level is read whole in one statement (the count's
        walk). With ``documents_last``, the last level holds only its documents (a count of documents needs
        no more).

        ``start``: an earlier walk of this traversal (a later page's kept state), to go on from: the rest of
        its last level, from the first frontier node not yet expanded, then the next levels. A level read in
        parts holds exactly what it holds read whole (``export_level``: a node's neighbours are chosen
        against the levels before, not against the nodes its own level already has, and the level is ordered
        by the frontier node that reaches each first), so the pages of a walk do not depend on where the
        earlier ones stopped. A frontier node the budget cut short is expanded again, and what its first
        read gave is left out the second time (a memory forgotten in between may change that node's choice
        of neighbours; the ones it adds then come after those already shown)."""
        if start is not None and start.nodes and not (start.partial and start.nodes[-1].depth == 0):
            nodes, cut, expanded = list(start.nodes), start.cut, start.expanded
        else:
            rows = self.tx.collected("export_seeds", ids=self.seed_ids, kinds=self.kinds, remaining=budget,
                                     **self.scope)
            nodes = [Reached(row["id"], row["kind"], 0, row["document"]) for row in rows]
            cut, expanded = False, 0 if len(rows) == budget else WHOLE
        if expanded != WHOLE and nodes[-1].depth == 0:
            return Walk(nodes, complete=False, cut=cut, expanded=expanded)
        depth = nodes[-1].depth if nodes else 0
        level_start = next((i for i, node in enumerate(nodes) if node.depth == depth), len(nodes))
        frontier = [node for node in nodes[:level_start] if node.depth == depth - 1]
        read = found = 0  # frontier nodes expanded by this call, and the nodes they added
        while True:
            if expanded == WHOLE:
                if depth == self.depth or not any(node.kind != "unavailable" for node in nodes[level_start:]):
                    return Walk(nodes, complete=True, cut=cut)
                if (enough is not None and len(nodes) >= enough) or \
                        (document_ceiling is not None and documents(nodes) >= document_ceiling):
                    return Walk(nodes, complete=False, cut=cut)
                frontier, level_start = nodes[level_start:], len(nodes)
                depth, expanded, read, found = depth + 1, 0, 0, 0
            remaining = budget - len(nodes)
            if remaining <= 0 or (enough is not None and len(nodes) >= enough):
                return Walk(nodes, complete=False, cut=cut, expanded=expanded)
            size = len(frontier) if enough is None else chunk_size(enough - len(nodes), fanout, read, found)
            part = frontier[expanded:expanded + size]
            if documents_last and depth == self.depth:
                rows, part_cut = self._last_level(part, expanded, nodes[:level_start], remaining), False
            else:
                rows, part_cut = self._level(part, expanded, nodes[:level_start], nodes[level_start:], fanout,
                                             remaining)
            nodes.extend(Reached(row["id"], row["kind"], depth, row.get("document")) for row in rows)
            cut = cut or part_cut
            read, found = read + len(part), found + len(rows)
            # the budget cut the part short: its last frontier node is expanded again, the rest not yet
            expanded = rows[-1]["pos"] if len(rows) == remaining else expanded + len(part)
            if expanded == len(frontier):
                expanded = WHOLE

    def _level(self, part: list[Reached], offset: int, before: list[Reached], level: list[Reached], fanout: int,
               remaining: int) -> tuple[list[dict[str, Any]], bool]:
        """The next nodes of a level from ``part`` of its frontier (the frontier's nodes from ``offset`` on),
        ordered by the position of the frontier node that reaches each first: ``before`` holds the walk's
        earlier levels, ``level`` what this level holds so far. (``visited`` and ``seen`` are maps id -> true:
        the statement asks them once per candidate neighbour, and a list is scanned; at 100k facts a count
        walk's level took half its time in ``NOT id IN $visited``.)"""
        ids = {kind: [node.id for node in part if node.kind == kind] for kind in ("document", "fact", "entity")}
        row = self.tx.single("export_level", documents=ids["document"], facts=ids["fact"], entities=ids["entity"],
                             position={node.id: offset + i for i, node in enumerate(part)},
                             visited=dict.fromkeys((node.id for node in before), True),
                             seen=dict.fromkeys((node.id for node in level), True),
                             fanout=fanout, fanout_probe=fanout + 1, remaining=remaining, **self.scope)
        return (row["rows"], row["cut"]) if row is not None else ([], False)

    def _last_level(self, part: list[Reached], offset: int, before: list[Reached],
                    remaining: int) -> list[dict[str, Any]]:
        """The count's last level (``documents_last``): the documents next to ``part`` that the walk has not
        visited, ordered as ``export_level`` orders a level (by the position of the first frontier node that
        reaches each, then id) and cut at ``remaining``. A fact's document is the one it was read with
        (``Reached.document``), and nothing is read for it: a fact and its document always share their view
        flags (every statement that changes a document's changes its facts' in the same transaction; tested), so
        a fact in view has its document in view. Only the versions next to the part's documents are read
        (``export_level_documents``). Looking each fact up again and following its CONTAINS edge took 74.5 ms
        a last level (p50, about 2,300 facts, 20 count walks of query seeds at 100k facts replayed 4 times);
        reading only the 1,900 documents by id 47.5 ms; passing them to a statement to be ordered there, with
        no read, 28 ms; now no statement runs unless the part holds documents. The whole count walk beside its
        page (50 query seeds at 100k facts, 3 passes, two processes each way, alternating): p50 165-211 ms
        reading each fact again, 103-143 ms this way, the same counts."""
        first: dict[str, int] = {}
        for i, node in enumerate(part):
            if node.kind == "fact":
                if node.document is None:
                    raise AssertionError(f"fact {node.id} reached without its document")  # a kept walk's node
                first.setdefault(node.document, offset + i)
        documents = {node.id: offset + i for i, node in enumerate(part) if node.kind == "document"}
        if documents:
            for row in self.tx.collected("export_level_documents", documents=list(documents), position=documents,
                                         **self.scope):
                first[row["id"]] = min(first.get(row["id"], row["pos"]), row["pos"])
        visited = {node.id for node in before}
        kept = sorted((pos, id) for id, pos in first.items() if id not in visited)[:remaining]
        return [{"id": id, "kind": "document", "pos": pos} for pos, id in kept]

    def count_walk(self, caps: ExportCaps) -> Walk:
        """The walk that counts the documents reachable within ``depth`` ignoring the page caps
        (``reachable_documents``): every cap ten times the page's (documents, nodes, fan-out per node).
        Without a fan-out cap it read every fact of every hub on the way: 2.9 s for one export at 100k facts.
        Its last level holds documents only: nothing else there adds to the count."""
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


_PROPERTY_STATEMENTS: dict[NodeKind, StatementName] = {
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


Pending = dict[str, list[str]]  # node id -> the emitted facts linked to it (its document's, or mentioning it)


def page_edges(tx: Tx, scope: dict[str, Any], page: list[Reached], emitted: list[Reached],
               properties: dict[str, dict[str, Any]], pending: Pending | None,
               passed: set[str]) -> tuple[list[ExportEdge], Pending]:
    """The edges this page owns, in a fixed order, and what is pending after it. A page fact's CONTAINS and
    MENTIONS edges come from its properties (its ``document_id`` and the ``entities`` it mentions, read in
    view in this transaction): reading them again by statement looked every fact up twice more, 40 ms of a
    1,000-node page at 100k facts. The same properties say which of those edges lead to a node the walk has
    not passed yet (``passed``: its nodes up to the end of this page): ``pending`` carries them from page to
    page, so that a page reads its edges from earlier facts from those facts only that link to its nodes
    (reading them from every earlier fact grew with the page number: 20 ms of a sixth 200-node page at 100k
    facts). ``pending`` is None where it does not hold this page's earlier facts (a cursor used again, after
    the next page had gone on): every earlier fact is read then, and nothing is carried on. The rest, and the
    triples, come from ``export_edges``; it checks that an earlier fact is still in view."""
    if not page:
        return [], pending or {}
    emitted_ids = {node.id for node in emitted}
    edges: list[dict[str, Any]] = []
    subjects: set[str] = set()
    carried = pending is not None
    later: Pending = {target: list(facts) for target, facts in (pending or {}).items() if target not in passed}
    for node in page:
        if node.kind != "fact":
            continue
        row = properties[node.id]
        document = row["document_id"]
        if document in emitted_ids:
            edges.append({"source": document, "target": node.id, "kind": "contains"})
        elif carried and document not in passed:
            later.setdefault(document, []).append(node.id)
        for entity in row["entities"]:
            if entity in emitted_ids:
                edges.append({"source": node.id, "target": entity, "kind": "mentions"})
                subjects.add(entity)
            elif carried and entity not in passed:
                later.setdefault(entity, []).append(node.id)
    by_kind = {kind: [node.id for node in page if node.kind == kind]
               for kind in ("document", "unavailable", "entity")}
    on_page = {node.id for node in page}
    earlier_facts = [node.id for node in emitted if node.kind == "fact" and node.id not in on_page]
    linked = earlier_facts if pending is None else sorted({fact for node in page for fact in pending.get(node.id, ())})
    edges += tx.collected("export_edges", documents=by_kind["document"], unavailable=by_kind["unavailable"],
                          entities=by_kind["entity"] if earlier_facts else [], subjects=sorted(subjects),
                          page={node.id: True for node in page if node.kind != "unavailable"},
                          emitted=dict.fromkeys(emitted_ids, True), earlier_facts=linked, **scope)
    ordered = sorted((ExportEdge.model_validate(edge) for edge in edges),
                     key=lambda e: (e.kind, e.source, e.target, e.predicate or "", bool(e.negated), e.fact_id or ""))
    return ordered, later
