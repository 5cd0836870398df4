"""The bounded evidence-graph export: the graph around a seed, walked breadth-first under explicit caps,
paged by a signed stateless cursor, as JSON, GraphML or a Cypher script.

**What is walked.** Seeds (a query's top fact hits, a document, an entity, or up to 100 ids of any kind)
are depth 0; each level adds the neighbours of the previous one over CONTAINS, MENTIONS, RELATES and
PREVIOUS_VERSION, in both directions, up to ``depth`` hops. The order is deterministic: depth, then id.
Everything stays inside one namespace and one time view: documents and facts must be in view; an entity
is reached only through a fact in view (or a triple whose fact is in view), so an entity or triple that
only facts outside the view support is hidden. Forgotten items never appear unless the view includes
them. A superseded version next to a document in view over PREVIOUS_VERSION is emitted as an
``unavailable`` node (id only, no text), counted in ``unavailableDocuments`` and not expanded.

**Seeds that are not visible.** A document id of the namespace naming a version that was superseded at
the view's time is an unavailable node at depth 0. Otherwise a document or entity seed that is not
visible in the namespace and view is ``NotFound`` (the same answer whether it exists elsewhere or not);
ids of an id-list seed that are not visible are ignored, as are superseded facts (only documents have
placeholders). An entity is visible while a fact in view mentions it.

**Caps, enforced in the Cypher** (``cypher/export.cypher``). One statement per level takes the frontier
and returns the next level's ids, with at most ``fanout`` new neighbours per node (a hub cannot flood a
page) and at most the walk's remaining budget of rows (``ORDER BY id LIMIT $remaining``). A page holds
at most ``max_nodes`` nodes and ``max_documents`` documents; node properties are read for that page only.
What the driver receives for a page: id rows from the walk, at most ``offset + max_nodes + 1`` (the one
extra row says whether a next page exists); property rows, at most ``max_nodes``; edge rows, only edges
whose both ends are on this or an earlier page. The server's own work per node grows with the node's
degree (the cap bounds what is sent, not what is scanned).

**Edges** are returned only between emitted nodes. A triple also needs its supporting fact emitted: every
triple of an export cites evidence that is in the export, and the number of triples stays bounded by the
facts on the page. Each edge is emitted on the page where the last of its nodes (for a triple: subject,
object and fact) appears, so the union of all pages repeats nothing.

**Completeness.** ``totalDocuments`` and ``unavailableDocuments`` count this page. ``truncated`` says that
this page is not the whole reachable graph: other pages exist, or the fan-out cap left neighbours out.
``coverage`` is this page's documents over the documents reachable from the seeds within ``depth`` in the
view, counted up to ten times the caps. It is 1.0, without further work, when nothing is truncated;
otherwise the reachable documents are counted once, on the first page, by a second walk whose caps are
ten times the page's: ``10 x max_documents`` documents, ``10 x max_nodes`` nodes, ``10 x fanout``
neighbours per node. When it hits one of them the count is a lower bound, so ``coverage`` is an upper
bound and ``coverage_is_upper_bound`` says so. The count travels in the cursor to later pages.

**Cursor.** Stateless: the next page re-runs the walk and emits nodes ``[offset, offset + max_nodes)``.
Its payload binds the namespace, a digest of the seed, caps and requested view, the pinned view time
(a current-view export is read ``as of`` the first page's time, which for current data selects exactly
the current versions, forgotten ones still excluded, so later pages see the same versions even if
memories change meanwhile; a node's own fields, such as ``is_latest``, are read as they are stored now),
a query seed's resolved fact ids, the offset and the reachable count. It is signed with HMAC-SHA256
under ``GRAPHMEM_CURSOR_SECRET``, or else a random 32-byte key created once at ``<data_dir>/cursor.key``
(mode 0600). Replicas behind one endpoint must share GRAPHMEM_CURSOR_SECRET, or one replica's cursors
are refused by another. Forgetting (not pinned: forgotten is forgotten) or a hard delete between pages
shifts the later pages of that export.

**Cypher script.** One ``MERGE`` statement per line, on ``{namespace, id}``, into the namespace named
at export time; labels and relationship types come from a fixed allowlist and every value is written by
``cypher_literal``. Ids are globally unique in a graphmem database (unique constraints on ``id``), so the
script loads into another database, or into one where the exported ids are not present any more; in the
database it came from, ``MERGE`` on another namespace would create a second node with a taken id and the
constraint refuses it (the script fails loudly rather than merging into the source). Unavailable
references are not recreated (there is nothing of them to recreate), nor are embeddings, document
content, mention spans, or entity type labels: the copy is the evidence graph, searchable by text;
``graphmem reembed`` restores the vectors.
"""

from __future__ import annotations

import base64
import binascii
import hashlib
import hmac
import json
import os
import re
import secrets
import unicodedata
import uuid
import xml.etree.ElementTree as ET
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from types import UnionType
from typing import Annotated, Any, Literal, get_args, get_origin

from pydantic import AfterValidator, BaseModel, ConfigDict, Field, TypeAdapter, ValidationError

from graphmem.config import Settings
from graphmem.errors import ConfigurationError, InvalidInput, NotFound
from graphmem.model import ID_PATTERN, INT64, check_namespace, invalid_input, within
from graphmem.search.lucene import MAX_QUERY_CHARS
from graphmem.store.driver import GraphStore, Tx
from graphmem.store.views import View

NodeKind = Literal["document", "fact", "entity", "unavailable"]
EdgeKind = Literal["contains", "mentions", "triple", "previous_version"]
ExportFormat = Literal["json", "graphml", "cypher"]

MAX_SEED_IDS = 100
QUERY_SEEDS = 10  # top fact hits a query seed starts from
COUNT_FACTOR = 10  # the reachable-document count stops at 10 x max_documents (or 10 x max_nodes nodes)
MAX_CURSOR_CHARS = 2048
CURSOR_KEY_FILE = "cursor.key"
CURSOR_KEY_BYTES = 32
_CURSOR_CONTEXT = b"graphmem-export-cursor-v1\x00"  # the key signs nothing else under this prefix


# ---- input ------------------------------------------------------------------------------------------


class _Frozen(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


def _not_blank(value: str) -> str:
    if not value.strip():
        raise ValueError("must not be blank")
    return value


SeedId = Annotated[str, Field(strict=True, pattern=ID_PATTERN.pattern)]


class QuerySeed(_Frozen):
    """Start from the query's top fact hits (hybrid search in the namespace and view)."""

    kind: Literal["query"]
    query: Annotated[str, Field(strict=True, max_length=MAX_QUERY_CHARS), AfterValidator(_not_blank)]


class DocumentSeed(_Frozen):
    kind: Literal["document"]
    id: SeedId


class EntitySeed(_Frozen):
    kind: Literal["entity"]
    id: SeedId


class IdsSeed(_Frozen):
    """Ids of any kind (documents, facts, entities); the ones not visible are ignored."""

    kind: Literal["ids"]
    ids: Annotated[list[SeedId], Field(min_length=1, max_length=MAX_SEED_IDS)]


ExportSeed = Annotated[QuerySeed | DocumentSeed | EntitySeed | IdsSeed, Field(discriminator="kind")]
_SEED: TypeAdapter[QuerySeed | DocumentSeed | EntitySeed | IdsSeed] = TypeAdapter(ExportSeed)


class ExportCaps(_Frozen):
    """The bounds of one page. Every one is enforced inside the statements, not after them."""

    depth: Annotated[int, Field(strict=True), within(1, 4)] = 2
    max_nodes: Annotated[int, Field(strict=True), within(1, 5000)] = 2000
    max_documents: Annotated[int, Field(strict=True), within(1, 1000)] = 1000
    fanout: Annotated[int, Field(strict=True), within(1, 500)] = 50


class _Format(_Frozen):
    format: ExportFormat


@dataclass(frozen=True)
class ExportRequest:
    """An export request, validated: the same request with a cursor gives that export's next page."""

    namespace: str
    seed: QuerySeed | DocumentSeed | EntitySeed | IdsSeed
    caps: ExportCaps
    view: View
    format: ExportFormat
    target_namespace: str

    @classmethod
    def parse(cls, namespace: str, seed: object, caps: object, view: object, format: object,
              target_namespace: object) -> ExportRequest:
        """Validate everything a caller sent (``namespace`` is already checked); any problem is one
        ``InvalidInput``."""
        try:
            parsed_seed = seed if isinstance(seed, QuerySeed | DocumentSeed | EntitySeed | IdsSeed) \
                else _SEED.validate_python(seed)
            parsed_caps = caps if isinstance(caps, ExportCaps) else ExportCaps.model_validate(caps)
            parsed_view = View.model_validate(view)
            parsed_format = _Format.model_validate({"format": format}).format
        except ValidationError as exc:
            raise invalid_input(exc) from None
        if target_namespace is not None and parsed_format != "cypher":
            raise InvalidInput("target_namespace applies to the cypher format only", field="target_namespace")
        target = namespace if target_namespace is None else check_namespace(target_namespace)
        return cls(namespace, parsed_seed, parsed_caps, parsed_view, parsed_format, target)

    def digest(self) -> str:
        """What a cursor binds besides the namespace: the seed, the caps and the view as requested."""
        body = {"seed": self.seed.model_dump(mode="json"), "caps": self.caps.model_dump(),
                "view": self.view.model_dump()}
        return hashlib.sha256(json.dumps(body, sort_keys=True, separators=(",", ":")).encode()).hexdigest()


# ---- output -----------------------------------------------------------------------------------------


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
    """The honest completeness fields of one page (the module docstring defines them)."""

    model_config = ConfigDict(validate_by_name=True, serialize_by_alias=True)

    total_documents: int = Field(alias="totalDocuments", description="documents on this page")
    truncated: bool
    unavailable_documents: int = Field(alias="unavailableDocuments")
    coverage: float = Field(ge=0, le=1)
    coverage_is_upper_bound: bool
    next_cursor: str | None = Field(None, description="None when this is the last page")


class ExportResult(ExportSummary):
    nodes: list[ExportNode]
    edges: list[ExportEdge]


class RenderedExport(ExportSummary):
    """A page rendered as GraphML or as a Cypher script, with the same completeness fields."""

    format: Literal["graphml", "cypher"]
    content: str


# ---- cursor -----------------------------------------------------------------------------------------


class _CursorState(_Frozen):
    v: Literal[1]
    ns: str
    request: str
    as_of: int
    offset: int = Field(ge=0)
    seeds: list[str] | None
    reachable: int
    upper_bound: bool


def cursor_key(settings: Settings) -> bytes:
    """The cursor signing key: the configured secret, else this data directory's key file, created
    once (atomically: of two processes racing, one file wins and both use it)."""
    if settings.cursor_secret is not None:
        secret = settings.cursor_secret.get_secret_value().encode()
        if len(secret) < CURSOR_KEY_BYTES:
            raise ConfigurationError(f"GRAPHMEM_CURSOR_SECRET must be at least {CURSOR_KEY_BYTES} characters")
        return secret
    path = settings.data_dir / CURSOR_KEY_FILE
    if not path.exists():
        _create_key(path)
    key = path.read_bytes()
    if len(key) != CURSOR_KEY_BYTES:
        raise ConfigurationError(f"{path} is not a {CURSOR_KEY_BYTES}-byte key; delete it to make a new one "
                                 "(cursors issued so far stop working)")
    return key


def _create_key(path: Path) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    draft = path.with_name(f".{path.name}.{uuid.uuid4().hex}")
    fd = os.open(draft, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    try:
        with os.fdopen(fd, "wb") as handle:
            handle.write(secrets.token_bytes(CURSOR_KEY_BYTES))
            handle.flush()
            os.fsync(handle.fileno())
        os.link(draft, path)  # fails if another process got there first: its key is the key
    except FileExistsError:
        pass
    finally:
        draft.unlink(missing_ok=True)


_BASE64URL = re.compile(r"^[A-Za-z0-9_-]+$")


def _b64(data: bytes) -> str:
    return base64.urlsafe_b64encode(data).rstrip(b"=").decode("ascii")


def _unb64(text: str) -> bytes:
    """Strict: only the base64url alphabet, and only the canonical encoding of its bytes."""
    if not _BASE64URL.fullmatch(text):
        raise ValueError("not base64url")
    data = base64.urlsafe_b64decode(text + "=" * (-len(text) % 4))
    if _b64(data) != text:
        raise ValueError("not canonical")
    return data


def _mac(key: bytes, payload: bytes) -> bytes:
    return hmac.new(key, _CURSOR_CONTEXT + payload, hashlib.sha256).digest()


def _seal(key: bytes, state: _CursorState) -> str:
    payload = json.dumps(state.model_dump(), sort_keys=True, separators=(",", ":")).encode()
    return f"{_b64(payload)}.{_b64(_mac(key, payload))}"


def _open(key: bytes, cursor: object, request: ExportRequest) -> _CursorState:
    """The state a cursor carries, if this server signed it for this very export."""
    invalid = InvalidInput("cursor is not valid: pass the next_cursor of a page unchanged", field="cursor")
    if not isinstance(cursor, str) or len(cursor) > MAX_CURSOR_CHARS or cursor.count(".") != 1:
        raise invalid
    payload_text, mac_text = cursor.split(".")
    try:
        payload, mac = _unb64(payload_text), _unb64(mac_text)
    except (ValueError, binascii.Error):
        raise invalid from None
    if not hmac.compare_digest(mac, _mac(key, payload)):
        raise invalid
    try:
        state = _CursorState.model_validate_json(payload)
    except ValidationError:
        raise invalid from None
    if state.ns != request.namespace or not hmac.compare_digest(state.request, request.digest()):
        raise InvalidInput("cursor belongs to another export: send the namespace, seed, caps and view of the "
                           "first page with it", field="cursor")
    return state


# ---- the walk ---------------------------------------------------------------------------------------


@dataclass(frozen=True)
class _Reached:
    id: str
    kind: NodeKind
    depth: int


@dataclass(frozen=True)
class _Walk:
    nodes: list[_Reached]  # in traversal order: depth, then id
    complete: bool  # False: the budget or the document ceiling stopped it
    cut: bool  # the fan-out cap left some node's neighbours out


def _documents(nodes: list[_Reached]) -> int:
    return sum(1 for node in nodes if node.kind == "document")


@dataclass(frozen=True)
class _Traversal:
    """The walks of one export page: one read transaction, one namespace, one pinned view, one seed set."""

    tx: Tx
    scope: dict[str, Any]  # namespace and view parameters
    seed_ids: list[str]
    kinds: list[str]
    depth: int

    def walk(self, fanout: int, budget: int, document_ceiling: int | None = None) -> _Walk:
        """Breadth-first until ``depth``, ``budget`` nodes, or (if given) ``document_ceiling`` documents."""
        rows = self.tx.run("export_seeds", ids=self.seed_ids, kinds=self.kinds, remaining=budget, **self.scope)
        nodes = [_Reached(row["id"], row["kind"], 0) for row in rows]
        level, exhausted, cut = nodes, len(rows) == budget, False
        for depth in range(1, self.depth + 1):
            frontier = [{"id": node.id, "kind": node.kind} for node in level if node.kind != "unavailable"]
            if exhausted or not frontier:
                break
            if document_ceiling is not None and _documents(nodes) >= document_ceiling:
                exhausted = True
                break
            remaining = budget - len(nodes)
            rows = self.tx.run("export_level", frontier=frontier, visited=[node.id for node in nodes],
                               fanout=fanout, fanout_probe=fanout + 1, remaining=remaining, **self.scope)
            level = [_Reached(row["id"], row["kind"], depth) for row in rows]
            nodes.extend(level)
            exhausted = len(rows) == remaining
            cut = cut or any(row["cut"] for row in rows)
        return _Walk(nodes, complete=not exhausted, cut=cut)

    def reachable_documents(self, caps: ExportCaps, included: list[_Reached]) -> tuple[int, bool]:
        """(documents reachable within ``depth`` ignoring the page caps, is that a lower bound). Counted by
        a walk with every cap ten times the page's (documents, nodes, fan-out per node); where that walk hit
        a cap the count is a lower bound. The included documents count even where the walk stopped before
        reaching them. (Without a fan-out cap the count read every fact of every hub on the way: 2.9 s for
        one export at 100k facts.)"""
        ceiling = COUNT_FACTOR * caps.max_documents
        budget = COUNT_FACTOR * caps.max_nodes
        walk = self.walk(fanout=COUNT_FACTOR * caps.fanout, budget=budget, document_ceiling=ceiling)
        found = {node.id for node in [*walk.nodes, *included] if node.kind == "document"}
        if not walk.complete or walk.cut or len(found) > ceiling:
            return min(len(found), ceiling), True
        return len(found), False


def _cut_page(nodes: list[_Reached], offset: int, caps: ExportCaps) -> list[_Reached]:
    """Nodes from ``offset``, until ``max_nodes`` nodes or ``max_documents`` documents."""
    page: list[_Reached] = []
    documents = 0
    for node in nodes[offset:offset + caps.max_nodes]:
        if node.kind == "document":
            if documents == caps.max_documents:
                break
            documents += 1
        page.append(node)
    return page


_PROPERTY_STATEMENTS: dict[NodeKind, str] = {
    "document": "export_documents", "fact": "export_facts", "entity": "export_entities"}


def _nodes(tx: Tx, page: list[_Reached], namespace: str) -> list[ExportNode]:
    properties: dict[str, dict[str, Any]] = {}
    for kind, statement in _PROPERTY_STATEMENTS.items():
        ids = [node.id for node in page if node.kind == kind]
        if ids:
            properties.update((row["id"], row) for row in tx.run(statement, ids=ids, namespace=namespace))
    return [ExportNode.model_validate({**properties.get(node.id, {}), "id": node.id, "kind": node.kind,
                                       "depth": node.depth}) for node in page]


def _edges(tx: Tx, scope: dict[str, Any], page: list[_Reached], emitted: list[_Reached]) -> list[ExportEdge]:
    """The edges this page owns, in a fixed order."""
    if not page:
        return []
    by_kind = {kind: [node.id for node in page if node.kind == kind]
               for kind in ("document", "unavailable", "fact", "entity")}
    on_page = {node.id for node in page}
    earlier_facts = [node.id for node in emitted if node.kind == "fact" and node.id not in on_page]
    rows = tx.run("export_edges", documents=by_kind["document"], unavailable=by_kind["unavailable"],
                  facts=by_kind["fact"], entities=by_kind["entity"], emitted=[node.id for node in emitted],
                  earlier_facts=earlier_facts, **scope)
    edges = [ExportEdge.model_validate(row) for row in rows]
    return sorted(edges, key=lambda e: (e.kind, e.source, e.target, e.predicate or "", bool(e.negated),
                                        e.fact_id or ""))


# ---- one page ---------------------------------------------------------------------------------------

SeedSearch = Callable[[str, View], list[str]]  # (query, view) -> fact ids of the top hits


def export_graph(store: GraphStore, key: bytes, now: int, request: ExportRequest, cursor: str | None,
                 search: SeedSearch) -> ExportResult | RenderedExport:
    """One page of the export of ``request`` (the first, or the one ``cursor`` points to), rendered in
    the requested format. ``now`` pins a current view; ``search`` resolves a query seed."""
    state = _open(key, cursor, request) if cursor is not None else None
    as_of = state.as_of if state else request.view.as_of if request.view.as_of is not None else now
    view = View(as_of=as_of, include_forgotten=request.view.include_forgotten,
                include_superseded=request.view.include_superseded)
    seed, caps = request.seed, request.caps
    pinned_seeds: list[str] | None = None
    if isinstance(seed, QuerySeed):
        pinned_seeds = state.seeds if state is not None and state.seeds is not None else search(seed.query, view)
        seed_ids, kinds = pinned_seeds, ["fact"]
    elif isinstance(seed, IdsSeed):
        seed_ids, kinds = seed.ids, ["document", "fact", "entity"]
    else:
        seed_ids, kinds = [seed.id], [seed.kind]
    offset = state.offset if state else 0
    scope = {"namespace": request.namespace, **view.params()}

    def read(tx: Tx) -> ExportResult:
        traversal = _Traversal(tx, scope, seed_ids, kinds, caps.depth)
        walk = traversal.walk(caps.fanout, budget=offset + caps.max_nodes + 1)
        if not walk.nodes and isinstance(seed, DocumentSeed | EntitySeed):
            raise NotFound(f"no {seed.kind} with id {seed.id!r} in namespace {request.namespace!r}", id=seed.id)
        page = _cut_page(walk.nodes, offset, caps)
        end = offset + len(page)
        has_next = end < len(walk.nodes)
        truncated = has_next or offset > 0 or walk.cut
        included = _documents(page)
        if not truncated:
            reachable, upper_bound = included, False
        elif state is not None:
            reachable, upper_bound = state.reachable, state.upper_bound
        else:
            reachable, upper_bound = traversal.reachable_documents(caps, page)
        denominator = max(reachable, included)
        next_cursor = _seal(key, _CursorState(
            v=1, ns=request.namespace, request=request.digest(), as_of=as_of, offset=end, seeds=pinned_seeds,
            reachable=reachable, upper_bound=upper_bound)) if has_next else None
        return ExportResult(
            total_documents=included, truncated=truncated,
            unavailable_documents=sum(1 for node in page if node.kind == "unavailable"),
            coverage=included / denominator if denominator else 1.0, coverage_is_upper_bound=upper_bound,
            next_cursor=next_cursor, nodes=_nodes(tx, page, request.namespace),
            edges=_edges(tx, scope, page, walk.nodes[:end]))

    result = store.read(read)
    if request.format == "json":
        return result
    summary = {name: getattr(result, name) for name in ExportSummary.model_fields}
    content = render_graphml(result) if request.format == "graphml" \
        else render_cypher(result, request.target_namespace)
    return RenderedExport(**summary, format=request.format, content=content)


# ---- GraphML ----------------------------------------------------------------------------------------

GRAPHML_NS = "http://graphml.graphdrawing.org/xmlns"
_XML_INVALID = re.compile("[^\t\n\r\x20-\ud7ff\ue000-\ufffd\U00010000-\U0010ffff]")


def _graphml_type(annotation: Any) -> str:
    """The GraphML ``attr.type`` of a model field (its type without ``None``)."""
    if get_origin(annotation) is Literal:
        return "string"
    if isinstance(annotation, UnionType):
        annotation = next(arg for arg in get_args(annotation) if arg is not type(None))
    return {bool: "boolean", int: "long", float: "double", str: "string"}[annotation]


def _graphml_value(value: str | int | float | bool) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, str):
        return _XML_INVALID.sub("\ufffd", value)  # XML 1.0 cannot hold these characters, even escaped
    return repr(value) if isinstance(value, float) else str(value)


def _graphml_keys(root: ET.Element, domain: str, prefix: str, model: type[BaseModel],
                  skip: set[str]) -> None:
    for name, field in model.model_fields.items():
        if name not in skip:
            ET.SubElement(root, "key", {"id": f"{prefix}{name}", "for": domain,
                                        "attr.name": field.alias or name,
                                        "attr.type": _graphml_type(field.annotation)})


def _graphml_data(parent: ET.Element, prefix: str, values: dict[str, Any]) -> None:
    for name, value in values.items():
        if value is not None:
            ET.SubElement(parent, "data", {"key": f"{prefix}{name}"}).text = _graphml_value(value)


def render_graphml(result: ExportResult) -> str:
    """GraphML: one key declaration per attribute, the page's completeness fields as graph data."""
    root = ET.Element("graphml", {"xmlns": GRAPHML_NS})
    _graphml_keys(root, "graph", "g_", ExportSummary, set())
    _graphml_keys(root, "node", "n_", ExportNode, {"id"})
    _graphml_keys(root, "edge", "e_", ExportEdge, {"source", "target"})
    graph = ET.SubElement(root, "graph", {"id": "export", "edgedefault": "directed"})
    _graphml_data(graph, "g_", {name: getattr(result, name) for name in ExportSummary.model_fields})
    for node in result.nodes:
        _graphml_data(ET.SubElement(graph, "node", {"id": node.id}), "n_", node.model_dump(exclude={"id"}))
    for position, edge in enumerate(result.edges):
        element = ET.SubElement(graph, "edge", {"id": f"e{position}", "source": edge.source,
                                                "target": edge.target})
        _graphml_data(element, "e_", edge.model_dump(exclude={"source", "target"}))
    ET.indent(root)
    # a parser reads a raw CR in text as LF; ElementTree escapes CR in attributes only, so every raw CR
    # left is in text, and becomes a character reference
    xml = ET.tostring(root, encoding="unicode").replace("\r", "&#13;")
    return f'<?xml version="1.0" encoding="UTF-8"?>\n{xml}\n'


# ---- Cypher -----------------------------------------------------------------------------------------

_LABELS: dict[NodeKind, str] = {"document": "Document", "fact": "Fact", "entity": "Entity"}
_RELATIONSHIP_TYPES: dict[EdgeKind, str] = {"contains": "CONTAINS", "mentions": "MENTIONS", "triple": "RELATES",
                                            "previous_version": "PREVIOUS_VERSION"}
_STAMPED: set[EdgeKind] = {"mentions", "triple"}  # relationships ingestion stamps with their namespace
_TRIPLE_KEY = ("fact_id", "predicate", "negated")  # what tells two triples between two entities apart

_CYPHER_ESCAPES = {"\\": "\\\\", "'": "\\'", '"': '\\"', "\n": "\\n", "\r": "\\r", "\t": "\\t", "\b": "\\b",
                   "\f": "\\f"}
# control, format (bidi overrides, zero-width), surrogate, private-use, unassigned, line/paragraph separators
_ESCAPED_CATEGORIES = frozenset({"Cc", "Cf", "Cs", "Co", "Cn", "Zl", "Zp"})


def _escape_char(char: str) -> str:
    if char in _CYPHER_ESCAPES:
        return _CYPHER_ESCAPES[char]
    if unicodedata.category(char) not in _ESCAPED_CATEGORIES:
        return char
    code = ord(char)
    if code <= 0xFFFF:
        return f"\\u{code:04X}"
    high, low = divmod(code - 0x10000, 0x400)  # \U is not portable: a UTF-16 surrogate pair is
    return f"\\u{0xD800 + high:04X}\\u{0xDC00 + low:04X}"


def cypher_literal(value: str | int | bool | None) -> str:
    """The one writer of values into generated Cypher.

    Strings become single-quoted literals in which backslash, both quotes and the named control
    characters are backslash-escaped, and every other character that is invisible or could break a
    line or a reader's view of the text (controls, format characters such as bidi overrides, line and
    paragraph separators, surrogates, private-use and unassigned code points) becomes ``\\uXXXX`` (a
    surrogate pair above U+FFFF). Other Unicode stays as it is. A literal is therefore always one line.
    Integers must fit 64 bits; the smallest is written as an expression, since Cypher reads ``-N`` as
    the negation of ``N``, which does not fit.
    """
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int):
        if not INT64[0] <= value <= INT64[1]:
            raise ValueError("a Cypher integer must fit 64 bits")
        return f"({INT64[0] + 1} - 1)" if value == INT64[0] else str(value)
    if not isinstance(value, str):
        raise TypeError(f"no Cypher literal for {type(value).__name__}")
    return "'" + "".join(map(_escape_char, value)) + "'"


def _key(label: str, namespace: str, node_id: str) -> str:
    return f"({label} {{namespace: {namespace}, id: {cypher_literal(node_id)}}})"


def render_cypher(result: ExportResult, namespace: str) -> str:
    """A script that recreates the page in ``namespace``: one statement per line, each ending in ``;``
    (``cypher-shell -f`` runs it; re-running it changes nothing). The module docstring says where it
    can load and what it leaves out."""
    target = cypher_literal(namespace)
    labels = {node.id: _LABELS[node.kind] for node in result.nodes if node.kind in _LABELS}
    lines = [f"// graphmem evidence-graph export into namespace {namespace}: {len(labels)} nodes, "
             f"{len(result.edges)} edges; truncated: {str(result.truncated).lower()}, "
             f"coverage: {result.coverage:.4f}. One statement per line."]
    for node in result.nodes:
        if node.id not in labels:
            continue
        values = node.model_dump(exclude={"id", "kind", "depth"}, exclude_none=True)
        sets = ", ".join(f"n.{name} = {cypher_literal(value)}" for name, value in values.items())
        lines.append(f"MERGE {_key('n:' + labels[node.id], target, node.id)}{' SET ' + sets if sets else ''};")
    for edge in result.edges:
        if edge.source not in labels or edge.target not in labels:
            continue
        identity = {name: getattr(edge, name) for name in _TRIPLE_KEY if getattr(edge, name) is not None}
        properties = " {" + ", ".join(f"{name}: {cypher_literal(value)}" for name, value in identity.items()) \
            + "}" if identity else ""
        stamp = f" SET r.namespace = {target}" if edge.kind in _STAMPED else ""
        lines.append(f"MATCH {_key('a:' + labels[edge.source], target, edge.source)}, "
                     f"{_key('b:' + labels[edge.target], target, edge.target)} "
                     f"MERGE (a)-[r:{_RELATIONSHIP_TYPES[edge.kind]}{properties}]->(b){stamp};")
    return "\n".join(lines) + "\n"
