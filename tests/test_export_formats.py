"""Export renderings: GraphML that parses and keeps what XML can hold, and a Cypher script that lints as
Neo4j 5 and round-trips through the bundled engine."""

from __future__ import annotations

import re
import xml.etree.ElementTree as ET
from pathlib import Path

import neo4j
from export_helpers import (
    NASTY,
    NASTY_DOCUMENT,
    export,
    gate,
    rendered,
    script_statements,
)
from factories import add

from graphmem.export import render_graphml
from graphmem.export.render import GRAPHML_NS
from graphmem.model import (
    CallerContext,
    ExportFormat,
)
from graphmem.results import Document, ExportNode, ExportResult
from graphmem.service import MemoryService
from helpers import needs_gate, query

# ---- formats ----------------------------------------------------------------------------------------


def test_graphml_keeps_text_except_what_xml_cannot_hold() -> None:
    nodes = [ExportNode(id=f"f{i}", kind="fact", depth=0, text=text) for i, text in enumerate(NASTY)]
    root = ET.fromstring(render_graphml(ExportResult(
        total_documents=0, reachable_documents=0, truncated=False, unavailable_documents=0, coverage=1.0,
        coverage_is_upper_bound=False,
        nodes=nodes, edges=[])).encode())
    read = {n.get("id"): next((d.text or "" for d in n if d.get("key") == "n_text"), "")
            for n in root.iter(f"{{{GRAPHML_NS}}}node")}
    xml_chars = re.compile("[^\t\n\r\x20-\ud7ff\ue000-\ufffd\U00010000-\U0010ffff]")
    assert read == {f"f{i}": xml_chars.sub("\ufffd", text) for i, text in enumerate(NASTY)}


def test_graphml_parses_and_declares_its_keys(service: MemoryService, ctx: CallerContext, ns: str,
                                              chain: tuple[Document, Document, Document]) -> None:
    nasty = add(service, ctx, ns, NASTY_DOCUMENT)
    seed = {"kind": "ids", "ids": [chain[1].id, nasty.id]}
    result = export(service, ctx, ns, seed, {"depth": 3})
    graphml = rendered(service, ctx, ns, seed, {"depth": 3}, ExportFormat.graphml)
    assert graphml.format == "graphml" and graphml.total_documents == result.total_documents
    root = ET.fromstring(graphml.content.encode())
    tag = f"{{{GRAPHML_NS}}}"
    assert root.tag == f"{tag}graphml"
    keys = {k.get("id"): (k.get("for"), k.get("attr.name"), k.get("attr.type")) for k in root.iter(f"{tag}key")}
    assert keys["n_kind"] == ("node", "kind", "string") and keys["e_negated"] == ("edge", "negated", "boolean")
    assert keys["g_total_documents"] == ("graph", "total_documents", "long")
    assert all(d.get("key") in keys for d in root.iter(f"{tag}data"))
    graph = root.find(f"{tag}graph")
    assert graph is not None and graph.get("edgedefault") == "directed"
    nodes = {n.get("id"): {d.get("key"): d.text for d in n} for n in graph.iter(f"{tag}node")}
    assert list(nodes) == [n.id for n in result.nodes]
    assert nodes[chain[0].id] == {"n_kind": "unavailable", "n_depth": "1"}
    texts = {d["n_text"] for d in nodes.values() if "n_text" in d}
    assert "Zoë's \"quoted\" note: back\\slash, tab\t, bell\ufffd, RLO\u202e done." in texts  # BEL: not XML
    edges = [(e.get("source"), e.get("target")) for e in graph.iter(f"{tag}edge")]
    assert edges == [(e.source, e.target) for e in result.edges]


@needs_gate
def test_cypher_export_lints_clean(service: MemoryService, ctx: CallerContext, ns: str, hub: list[Document],
                                   chain: tuple[Document, Document, Document], tmp_path: Path) -> None:
    nasty = add(service, ctx, ns, NASTY_DOCUMENT)
    script = rendered(service, ctx, ns, {"kind": "ids", "ids": [nasty.id, chain[1].id]}, {"depth": 4},
                      ExportFormat.cypher, target_namespace="copy.of-it").content
    statements = script_statements(script)
    assert len(statements) > 40
    result = gate(statements, tmp_path)
    assert result.returncode == 0, result.stderr
    assert f"{len(statements)} statements checked" in result.stdout


def test_cypher_export_round_trips(service: MemoryService, ns: str, graph: neo4j.Driver,
                                   chain: tuple[Document, Document, Document]) -> None:
    target = f"{ns}-copy"
    ctx = CallerContext.for_namespaces(ns, target)
    nasty = add(service, ctx, ns, NASTY_DOCUMENT)
    falcon = add(service, ctx, ns, "Priya Raman leads Project Falcon. Zoë does not use Oracle.")
    seed = {"kind": "ids", "ids": [chain[1].id, nasty.id, falcon.id]}
    original = export(service, ctx, ns, seed, {"depth": 4})
    assert not original.truncated and original.unavailable_documents == 1
    assert any(e.kind == "triple" and e.negated for e in original.edges)
    script = rendered(service, ctx, ns, seed, {"depth": 4}, ExportFormat.cypher, target_namespace=target).content

    # ids are unique across the database: the copy loads where they are not present any more
    query(graph, "MATCH (n) WHERE n.namespace = $ns DETACH DELETE n", ns=ns)
    for statement in script_statements(script):
        query(graph, statement)
    for statement in script_statements(script):  # MERGE: a second run changes nothing
        query(graph, statement)

    copy = export(service, ctx, target, seed, {"depth": 4})
    placeholders = {n.id for n in original.nodes if n.kind == "unavailable"}  # not recreated: nothing to copy
    expected_nodes = [n for n in original.nodes if n.id not in placeholders]
    expected_edges = [e for e in original.edges if e.source not in placeholders and e.target not in placeholders]
    assert copy.nodes == expected_nodes
    assert copy.edges == expected_edges
    assert copy.total_documents == original.total_documents and not copy.truncated
    stored = query(graph, "MATCH (n) WHERE n.namespace = $ns RETURN count(n) AS c", ns=target)[0]["c"]
    linked = query(graph, "MATCH (a)-[r]->(b) WHERE a.namespace = $ns AND b.namespace = $ns "
                          "RETURN count(r) AS c", ns=target)[0]["c"]
    assert (stored, linked) == (len(expected_nodes), len(expected_edges))
    assert any(n.text and "\u202e" in n.text and "\x07" in n.text for n in copy.nodes)
