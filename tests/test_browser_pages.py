"""Neo4j Browser's style and guide: served without a token and with CORS for Browser's origin only, the
guide's queries (named statements of cypher/guide.cypher) returning rows on the bundled engine over the gold
set (the asserted triples' query over a namespace where an agent stated some), and docker-compose.yml telling
Browser to load both on connect."""

from __future__ import annotations

import html
import re
from pathlib import Path
from typing import Any

import neo4j
import pytest
import yaml
from fastapi.testclient import TestClient

from engines import DATABASE
from graphmem.app import create_app
from graphmem.http.pages import GUIDE_PATH, STYLE_PATH
from graphmem.ingest.names import CONCEPT, ENTITY_TYPES, NAME
from graphmem.model import CallerContext, DocumentInput
from graphmem.model.assertions import EntitiesCreate, EntityAssertion, RelationAssertion, RelationsChange
from graphmem.runtime import Runtime
from graphmem.service.guide import GUIDE_STATEMENTS
from graphmem.store.queries import statements

ROOT = Path(__file__).resolve().parents[1]
BROWSER = "http://localhost:7474"


def grass_rules(text: str) -> dict[str, dict[str, str]]:
    return {m.group(1): dict(re.findall(r"([a-z-]+):\s*([^;]+);", m.group(2)))
            for m in re.finditer(r"^((?:node|relationship)(?:\.\w+)?) \{((?:'[^']*'|[^}'])*)\}", text, re.M)}


def test_style_is_served_without_a_token_with_cors_for_browser(client: TestClient) -> None:
    answer = client.get(STYLE_PATH, headers={"Origin": BROWSER})
    assert answer.status_code == 200 and answer.headers["access-control-allow-origin"] == BROWSER
    rules = grass_rules(answer.text)
    types = {*ENTITY_TYPES.values(), CONCEPT, NAME}  # every type label ingestion gives an entity
    for label in ("Document", "Fact", "Entity", "Handoff", *types):
        assert re.fullmatch(r"#[0-9A-F]{6}", rules[f"node.{label}"]["color"]), label
    # Browser applies rules of one label in file order: a type's rule must come after Entity's to win
    order = list(rules)
    assert all(order.index("node.Entity") < order.index(f"node.{label}") for label in types)
    assert rules["node.Document"]["caption"] == "'{title}'" and rules["node.Fact"]["caption"] == "'{text}'"
    assert rules["node.Entity"]["caption"] == "'{name}'" and rules["relationship.RELATES"]["caption"] == "'{predicate}'"
    size = {label: int(rules[f"node.{label}"]["diameter"].removesuffix("px")) for label in ("Fact", "Entity", "Person")}
    assert size["Fact"] < size["Entity"] == size["Person"]  # facts small, entities visible
    # GRASS values must not contain a colon (Browser's parser splits on it)
    assert all(":" not in value for rule in rules.values() for value in rule.values())
    preflight = client.options(STYLE_PATH, headers={"Origin": BROWSER, "Access-Control-Request-Method": "GET",
                                                    "Access-Control-Request-Headers": "accept"})
    assert preflight.status_code == 204 and preflight.headers["access-control-allow-origin"] == BROWSER
    # the compose stack's Browser under its other name is allowed too; any other origin is not
    assert client.get(STYLE_PATH, headers={"Origin": "http://127.0.0.1:7474"}).headers[
        "access-control-allow-origin"] == "http://127.0.0.1:7474"
    assert "access-control-allow-origin" not in client.get(STYLE_PATH, headers={"Origin": "http://evil.example"}).headers
    refused = client.options(GUIDE_PATH, headers={"Origin": "http://evil.example",
                                                  "Access-Control-Request-Method": "GET"})
    assert refused.status_code == 403 and "access-control-allow-origin" not in refused.headers


def test_graph_page_and_its_assets_name_no_outside_host(client: TestClient) -> None:
    page = client.get("/graph")
    assert page.status_code == 200 and "default-src 'self'" in page.headers["content-security-policy"]
    assets = re.findall(r'(?:src|href)="([^"]+)"', page.text)
    assert {"/static/vendor/cytoscape/cytoscape.min.js", "/static/graph/graph.js", "/static/graph/graph.css"} \
        <= set(assets)
    assert client.get("/static/graph/guide.html").status_code == 404  # only the page's own files are mounted
    assert all(asset.startswith("/static/") for asset in assets)
    for text in (page.text, client.get("/static/graph/graph.js").text, client.get("/static/graph/graph.css").text):
        assert "http://" not in text and "https://" not in text and "//" + "cdn" not in text
    assert client.get("/static/vendor/cytoscape/cytoscape.min.js").status_code == 200


def test_other_routes_keep_cors_off(client: TestClient) -> None:
    assert "access-control-allow-origin" not in client.get("/health", headers={"Origin": BROWSER}).headers
    assert "access-control-allow-origin" not in client.get("/graph", headers={"Origin": BROWSER}).headers


def test_browser_origin_is_a_setting_apart_from_the_api_cors(runtime: Runtime) -> None:
    """GRAPHMEM_BROWSER_ORIGIN names Browser's origins; the API's own CORS setting, even "*", neither
    refuses Browser's preflight nor widens these routes."""
    other = runtime.settings.model_copy(update={"browser_origin": ["https://browser.example:7473"],
                                                "cors_origins": ["*"]})
    opened = TestClient(create_app(settings=other))  # no lifespan: the style needs no runtime
    answer = opened.get(STYLE_PATH, headers={"Origin": "https://browser.example:7473"})
    assert answer.headers["access-control-allow-origin"] == "https://browser.example:7473"
    assert "access-control-allow-origin" not in opened.get(STYLE_PATH, headers={"Origin": BROWSER}).headers
    preflight = opened.options(STYLE_PATH, headers={"Origin": "https://browser.example:7473",
                                                    "Access-Control-Request-Method": "GET"})
    assert preflight.status_code == 204
    assert preflight.headers["access-control-allow-origin"] == "https://browser.example:7473"


def guide_blocks(text: str) -> list[str]:
    return [html.unescape(block) for block in re.findall(r'<pre class="[^"]*runnable[^"]*">(.*?)</pre>', text, re.S)]


def test_guide_is_served_with_cors_and_runnable_blocks(client: TestClient, runtime: Runtime) -> None:
    answer = client.get(GUIDE_PATH, headers={"Origin": BROWSER})
    assert answer.status_code == 200 and answer.headers["access-control-allow-origin"] == BROWSER
    assert answer.text.lstrip().startswith('<article class="guide">') and answer.text.count("<slide") == 8
    blocks = guide_blocks(answer.text)
    params = dict(runtime.service.guide_queries().parameters)
    assert blocks[0] == (f":params {{namespace: '{params['namespace']}', view_as_of: null, "
                         f"view_include_forgotten: false, view_include_superseded: false, index: '{params['index']}'}}")
    assert blocks[1:] == [runtime.store.dialect.prepare(statements()[name].text) for name in GUIDE_STATEMENTS]
    assert all("$namespace" in block for block in blocks[1:])  # each one parameterised by namespace


def namespaces_in(value: object) -> set[str]:
    """The namespaces of every node and relationship in a row (paths and lists included)."""
    if isinstance(value, dict):
        own = {value["namespace"]} if isinstance(value.get("namespace"), str) else set()
        return own.union(*(namespaces_in(v) for v in value.values()))
    if isinstance(value, list | tuple):
        return set().union(*(namespaces_in(v) for v in value))
    return set()


NEXT_DOOR = [RelationAssertion(source="Sofia Lindqvist", target="Corvid Works", relationType="LEADS"),
             RelationAssertion(source="Marcus Oyelaran", target="Porto", relationType="LIVES_IN")]


@pytest.fixture(scope="module")
def neighbour(runtime: Runtime, gold_ns: str) -> str:
    """Another namespace with the same kind of data next to the gold set, for the queries to stay out of, where
    an agent also asserted triples."""
    namespace = f"{gold_ns}-next-door"
    ctx = CallerContext.for_namespaces(namespace)
    runtime.service.add_memories(ctx, namespace, [
        DocumentInput(content="Sofia Lindqvist is the CEO of Corvid Works. Project Falcon uses Kafka."),
        DocumentInput(content="Marcus Oyelaran moved to Porto and works with Sofia Lindqvist on Project Falcon.")])
    assert not runtime.service.create_relations(ctx, namespace, RelationsChange(relations=NEXT_DOOR)).skipped
    return namespace


@pytest.fixture(scope="module")
def agents(runtime: Runtime, gold_ns: str, neighbour: str) -> str:
    """A namespace with memories and triples an agent asserted about them (the gold set has none)."""
    namespace = f"{gold_ns}-agents"
    ctx = CallerContext.for_namespaces(namespace)
    runtime.service.add_memories(ctx, namespace, [
        DocumentInput(content="Sofia Lindqvist of Corvid Works met Marcus Oyelaran in Porto about Project Falcon.")])
    stated = {"Sofia Lindqvist": "person", "Corvid Works": "organization", "Marcus Oyelaran": "person",
              "Porto": "place", "Project Falcon": "project"}
    runtime.service.create_entities(ctx, namespace, EntitiesCreate(
        entities=[EntityAssertion(name=name, type=kind) for name, kind in stated.items()]))
    assert not runtime.service.create_relations(ctx, namespace, RelationsChange(relations=[
        RelationAssertion(source="Sofia Lindqvist", target="Project Falcon", relationType="SPONSORS"),
        *NEXT_DOOR])).skipped
    return namespace


def graph_rows(graph: neo4j.Driver, runtime: Runtime, name: str, params: dict[str, Any]) -> list[dict[str, Any]]:
    """A guide statement's rows as Browser gets them: nodes and relationships with their labels, types and
    properties (the store's rows turn a relationship into its two ends and its type)."""
    with graph.session(database=DATABASE) as session:
        return [dict(record) for record in session.run(runtime.store.dialect.prepare(statements()[name].text),
                                                       params)]


@pytest.mark.parametrize("name", GUIDE_STATEMENTS)
def test_guide_queries_return_rows_on_the_gold_set(runtime: Runtime, graph: neo4j.Driver, gold_ns: str,
                                                   neighbour: str, agents: str, name: str) -> None:
    namespace = agents if name == "guide_asserted" else gold_ns
    params = dict(runtime.service.guide_queries(namespace).parameters)
    rows = runtime.store.read(lambda tx: tx.run(name, **params))
    assert rows, name
    assert namespaces_in(rows) == {namespace}  # one namespace at a time, though another holds the same names
    if name == "guide_relations":  # entities and triples only
        drawn = graph_rows(graph, runtime, name, params)
        assert drawn and all(set(row) == {"s", "r", "o"} for row in drawn)
        assert all("Entity" in row["s"].labels and "Entity" in row["o"].labels and row["r"].type == "RELATES"
                   and row["r"]["predicate"] for row in drawn)
    if name == "guide_asserted":  # the agent's triples, each with its fact and the assertion memory
        drawn = graph_rows(graph, runtime, name, params)
        assert sorted(row["r"]["predicate"] for row in drawn) == ["LEADS", "LIVES_IN", "SPONSORS"]
        assert all(row["r"]["asserted"] is True and row["r"]["fact_id"] == row["f"]["id"]
                   and row["contains"].type == "CONTAINS" for row in drawn)
        assert all(row["d"]["source"].startswith("agent:") and "create_relations" in row["d"]["source"]
                   for row in drawn)
    if name == "guide_version_chains":  # whole chains only: the updated memory's, from version 2 to 1
        assert len(rows) == 1 and rows[0]["version"] == 2 and len(rows[0]["chain"]) == 3
    if name == "guide_vector_search":
        assert all(row["nearest"] != row["probe"] and 0 <= row["score"] <= 1 for row in rows)


def test_compose_tells_browser_to_load_the_style_and_the_guide() -> None:
    """The command names the published port on the host's localhost (Browser fetches from the person's
    machine) and the two routes; no other Browser setting is set (an unknown one stops Neo4j 5)."""
    neo4j = yaml.safe_load((ROOT / "docker-compose.yml").read_text())["services"]["neo4j"]["environment"]
    command = neo4j["NEO4J_browser_post__connect__cmd"]
    assert command == f"style http://localhost:8420{STYLE_PATH}; play http://localhost:8420{GUIDE_PATH}"
    assert [key for key in neo4j if key.startswith("NEO4J_browser")] == ["NEO4J_browser_post__connect__cmd"]
    app_ports = yaml.safe_load((ROOT / "docker-compose.yml").read_text())["services"]["graphmem"]["ports"]
    assert "127.0.0.1:8420:8420" in app_ports
