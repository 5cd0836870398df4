"""Renderers of an export page: GraphML (Gephi, yEd) and a Cypher script that recreates the page.
``graphmem/export/__init__.py`` says where a script can load and what it leaves out."""

from __future__ import annotations

import re
import unicodedata
import xml.etree.ElementTree as ET
from types import UnionType
from typing import Any, Literal, get_args, get_origin

from pydantic import BaseModel

from graphmem.errors import InvalidInput
from graphmem.model import INT64, ExportFormat, check_namespace
from graphmem.results import EdgeKind, ExportEdge, ExportNode, ExportResult, ExportSummary, NodeKind, RenderedExport

MEDIA_TYPES = {ExportFormat.graphml: "application/graphml+xml", ExportFormat.cypher: "application/x-cypher-query"}


def render(result: ExportResult, format: ExportFormat, target_namespace: str | None, namespace: str) -> RenderedExport:
    """``result`` as GraphML or as a Cypher script into ``target_namespace`` (default: ``namespace``, the
    one it was exported from), with the page's completeness fields."""
    if format is ExportFormat.json:
        raise InvalidInput("json is the export itself; render graphml or cypher", field="format")
    if target_namespace is not None and format is not ExportFormat.cypher:
        raise InvalidInput("target_namespace applies to the cypher format only", field="target_namespace")
    summary = {name: getattr(result, name) for name in ExportSummary.model_fields}
    if format is ExportFormat.graphml:
        content = render_graphml(result)
    else:
        content = render_cypher(result, namespace if target_namespace is None else check_namespace(target_namespace))
    return RenderedExport(**summary, format=format.value, media_type=MEDIA_TYPES[format], content=content)


# ---- GraphML ----------------------------------------------------------------------------------------

GRAPHML_NS = "http://graphml.graphdrawing.org/xmlns"
_XML_INVALID = re.compile("[^\t\n\r\x20-\ud7ff\ue000-\ufffd\U00010000-\U0010ffff]")


def _graphml_type(annotation: Any) -> str:
    """The GraphML ``attr.type`` of a model field (its type without ``None``)."""
    if get_origin(annotation) is Literal:
        return "string"
    if isinstance(annotation, UnionType):
        annotation = next(arg for arg in get_args(annotation) if arg is not type(None))
    if get_origin(annotation) is list:  # a list of names (the namespaces read), written comma-separated
        return "string"
    return {bool: "boolean", int: "long", float: "double", str: "string"}[annotation]


def _graphml_value(value: str | int | float | bool | list[str]) -> str:
    if isinstance(value, list):
        value = ",".join(value)
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
                                        "attr.name": name,
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
             f"coverage: {'not counted' if result.coverage is None else f'{result.coverage:.4f}'}. "
             "One statement per line."]
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
        if edge.asserted:  # an agent's triple stays one in the copy
            stamp += ", r.asserted = true"
        lines.append(f"MATCH {_key('a:' + labels[edge.source], target, edge.source)}, "
                     f"{_key('b:' + labels[edge.target], target, edge.target)} "
                     f"MERGE (a)-[r:{_RELATIONSHIP_TYPES[edge.kind]}{properties}]->(b){stamp};")
    return "\n".join(lines) + "\n"
