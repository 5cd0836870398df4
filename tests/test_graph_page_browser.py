"""The graph page (/graph) in a real browser: headless Chromium (Debian's ``chromium``, driven by Playwright;
no browser download) against a real uvicorn server and no route to the internet.

On the gold set: it asks for a token, searches, draws what ``GET /v1/graph`` answers (the cytoscape instance's
node and edge counts, read from the page, against the API's own answer), says how complete that is, loads the
next page, shows a node's details, expands a node, greys older versions, and uses the Browser style's colours.

On two small corpora, short team notes (with triples an agent asserted) and Markdown documents with headings:
documents are captioned, facts are folded into document → entity edges that carry their count and open on a
click, the relations view shows entities and triples only, asserted triples are drawn apart from extracted
ones, and edge captions are readable at the zoom the page opens with. Screenshots go to ``test-artifacts/``
(``GRAPHMEM_TEST_ARTIFACTS`` moves them); the pictures in ``docs/`` are copies of them."""

from __future__ import annotations

import re
import uuid
from collections import Counter
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

import httpx
import pytest
from browser_helpers import artifacts, offline_page
from playwright.sync_api import Page
from test_browser_pages import grass_rules

from graphmem.app import create_app
from graphmem.identity import OPERATOR, NewCredential, Scope
from graphmem.ingest.files import read_paths
from graphmem.model import CallerContext, DocumentInput, SearchRequest
from graphmem.model.assertions import EntitiesCreate, EntityAssertion, RelationAssertion, RelationsChange
from graphmem.runtime import Runtime
from helpers import served

DOUBLE_CLICK_MS = 500  # graph.js: two clicks on one node this close are a double-click
CAPS = {"max_nodes": 80, "max_documents": 10, "fanout": 25, "depth": 2}

pytestmark = pytest.mark.browser


@pytest.fixture(scope="module")
def site(runtime: Runtime, gold_ns: str) -> Iterator[tuple[str, str]]:
    _, token = runtime.identity.create(NewCredential(name="graph-page", scopes=[Scope.read], namespaces=[gold_ns]),
                                       by=OPERATOR)
    with served(create_app(runtime=runtime)) as base:
        yield base, token


def api(site: tuple[str, str], **params: Any) -> dict[str, Any]:
    base, token = site
    answer = httpx.get(f"{base}/v1/graph", params=params, headers={"Authorization": f"Bearer {token}"}, timeout=30)
    assert answer.status_code == 200, answer.text
    return dict(answer.json())


def drawn(page: Page) -> tuple[int, int]:
    """The export's nodes and edges on the page, shown or folded away (the folded edges are the page's own)."""
    counts = page.evaluate("""() => [window.graphmem.cy.nodes().length,
                                     window.graphmem.cy.edges().not('.folded').length]""")
    return counts[0], counts[1]


def line(pages: list[dict[str, Any]]) -> str:
    """The completeness line the page should show for these pages of one export: the first page's fields as
    the API gives them; after more pages, truncated while a page is left, fewer documents are shown than are
    reachable, or the fan-out cap cut the first page (truncated with no next page)."""
    first, shown = pages[0], sum(p["totalDocuments"] for p in pages)
    truncated = first["truncated"] if len(pages) == 1 else (
        pages[-1]["next_cursor"] is not None or shown < first["reachableDocuments"]
        or (first["truncated"] and first["next_cursor"] is None))
    bound = "at least " if first["coverage_is_upper_bound"] and shown < first["reachableDocuments"] else ""
    unavailable = sum(p["unavailableDocuments"] for p in pages)
    return (f"showing {shown:,} of {bound}{max(shown, first['reachableDocuments']):,} documents"
            f"{', truncated' if truncated else ''}{f' ({unavailable:,} unavailable)' if unavailable else ''}")


# a document with facts on the page (folded or shown)
WITH_FACTS = "node => node.cy().nodes('.fact').some(fact => fact.data('node').document_id === node.id())"


def click_node(page: Page, selector: str, double: bool = False, where: str = "node => true") -> dict[str, Any]:
    """Click a shown node matching a cytoscape selector (and the JavaScript predicate ``where``) where it is
    drawn, inside the canvas, the one farthest from any other shown node (the layout is random: a node drawn
    over another would take the click; cytoscape's renderer says what a click there hits); returns its export
    node."""
    # the predicate is part of the script: the page's CSP forbids compiling it in the page (new Function)
    found = page.evaluate("""(selector) => {
        const cy = window.graphmem.cy;
        const keep = WHERE;
        const shown = cy.nodes(':visible');
        const clearance = (node) => {
            const at = node.renderedPosition();
            return Math.min(...shown.filter(other => other.id() !== node.id())
                .map(other => Math.hypot(other.renderedPosition().x - at.x, other.renderedPosition().y - at.y)));
        };
        const clickable = (node) => {
            const at = node.renderedPosition();
            return at.x > 10 && at.y > 10 && at.x < cy.width() - 10 && at.y < cy.height() - 10 &&
                cy.renderer().findNearestElement(node.position().x, node.position().y, true, false) === node;
        };
        const node = cy.$(selector).filter(':visible').filter(keep).filter(clickable).max(clearance).ele;
        const at = node.renderedPosition();
        return {x: at.x, y: at.y, node: node.data('node')};
    }""".replace("WHERE", where), selector)
    box = page.locator("#graph").bounding_box()
    assert box is not None
    x, y = box["x"] + found["x"], box["y"] + found["y"]
    if double:
        page.mouse.dblclick(x, y)
    else:
        page.mouse.click(x, y)
    return dict(found["node"])


def until(page: Page, script: str, argument: object) -> None:
    """Wait until ``script`` is true in the page (the page's CSP forbids the eval that wait_for_function uses)."""
    for _ in range(300):
        if page.evaluate(script, argument):
            return
        page.wait_for_timeout(100)
    raise AssertionError(f"never true: {script}; the page says: {page.locator('#error').inner_text()!r}")


def test_a_search_typed_while_the_style_loads_waits_for_its_submit(site: tuple[str, str]) -> None:
    """The page reads the URL's search when it opens; what a user types before the Browser style has loaded
    runs when they submit it, not by itself (a token prompt then covered the button they were about to press)."""
    base, _ = site
    with offline_page(base) as (page, outside):
        held: list[Any] = []
        page.route("**/browser/graphmem.grass", lambda route: held.append(route))  # answered only when released
        page.goto(f"{base}/graph", wait_until="domcontentloaded")
        page.locator("#query").fill("Project Falcon")
        for _ in range(100):  # the route handler runs while the page is waited on
            if held:
                break
            page.wait_for_timeout(100)
        assert held and page.locator("#token").is_hidden()
        held[0].continue_()
        page.locator("#legend li").first.wait_for(timeout=10_000)
        assert page.locator("#token").is_hidden()  # the typed search did not run
        page.locator("#seed button[type=submit]").click()
        page.locator("#token-input").wait_for(timeout=10_000)  # it runs on submit, and asks for a token
        assert outside == []


def test_graph_page_draws_the_export_in_headless_chromium(site: tuple[str, str], runtime: Runtime,
                                                          gold_ns: str) -> None:
    base, token = site
    colours = {key.removeprefix("node."): rule["color"] for key, rule in
               grass_rules(httpx.get(f"{base}/browser/graphmem.grass").text).items()}
    first = api(site, seed="query", query="Project Falcon", **CAPS)
    assert first["truncated"] and first["next_cursor"]  # the caps are small enough for a second page
    with offline_page(base) as (page, outside):
        errors: list[str] = []
        page.on("pageerror", lambda error: errors.append(str(error)))
        page.goto(f"{base}/graph?max_nodes=80&max_documents=10&fanout=25&depth=2")
        page.locator("#query").fill("Project Falcon")
        page.locator("#seed button[type=submit]").click()
        page.locator("#token-input").fill(token)  # asked once, kept in the tab's session storage
        page.locator("#token-form button").click()
        status = page.locator("#completeness")
        status.filter(has_text=re.compile("^showing")).wait_for(timeout=30_000)
        assert status.inner_text() == line([first])
        assert drawn(page) == (len(first["nodes"]), len(first["edges"]))
        assert "q=Project+Falcon" in page.url  # the search is in the URL, to share or reload

        # the Browser style's colours: a document, and entities by their type label
        by_kind = page.evaluate("""() => window.graphmem.cy.nodes().map(n => [n.data('node').kind,
            n.data('node').type, n.data('color')])""")
        assert any(kind == "document" and colour == colours["Document"] for kind, _, colour in by_kind)
        typed = [(kind_type, colour) for kind, kind_type, colour in by_kind if kind == "entity"]
        assert typed
        assert all(colour == colours.get(kind_type or "", colours["Entity"]) for kind_type, colour in typed)

        page.screenshot(path=str(artifacts() / "graph.png"))

        second = api(site, seed="query", query="Project Falcon", cursor=first["next_cursor"], **CAPS)
        page.locator("#more").click()
        page.locator("#drawn", has_text="from 2 pages").wait_for(timeout=30_000)
        assert drawn(page)[0] == len(first["nodes"]) + len(second["nodes"])
        assert status.inner_text() == line([first, second])

        # facts are folded: a click on a document with facts shows them, and then a fact can be clicked
        click_node(page, "node.document", where=WITH_FACTS)
        fact = click_node(page, "node.fact")
        page.locator("#details dd", has_text=fact["text"][:30]).first.wait_for(timeout=10_000)

        before_line = status.inner_text()
        before = set(page.evaluate("() => window.graphmem.cy.nodes().map(n => n.id())"))
        entity = click_node(page, "node.entity", double=True)
        around = api(site, seed="entity", id=entity["id"], count_reachable="false", **{**CAPS, "depth": 1})
        until(page, "(id) => window.graphmem.cy.getElementById(id).hasClass('expanded')", entity["id"])
        after = set(page.evaluate("() => window.graphmem.cy.nodes().map(n => n.id())"))
        expected = before | {node["id"] for node in around["nodes"]}
        assert after == expected, (entity, sorted(after - expected), sorted(expected - after))  # merged, nothing lost
        assert status.inner_text() == before_line  # it still describes the main export

        # one fact may state two triples between the same two entities: both are drawn
        moved = api(site, seed="query", query="moved", **CAPS)
        doubled = Counter((e["source"], e["target"], e["fact_id"]) for e in moved["edges"] if e["kind"] == "triple")
        assert max(doubled.values()) > 1
        page.goto(f"{base}/graph?q=moved&max_nodes=80&max_documents=10&fanout=25&depth=2")
        status.filter(has_text=re.compile("^showing")).wait_for(timeout=30_000)
        assert drawn(page) == (len(moved["nodes"]), len(moved["edges"]))

        # not counting the reachable documents: the line says so
        page.goto(f"{base}/graph?q=Project+Falcon&max_nodes=80&max_documents=10&fanout=25&count_reachable=false")
        status.filter(has_text=re.compile("^showing")).wait_for(timeout=30_000)
        assert not page.locator("#count_reachable").is_checked()
        assert status.inner_text() == \
            f"showing {first['totalDocuments']:,} documents (reachable not counted), truncated"

        # versions: the changed memory with older versions shown, linked and greyed
        ctx = CallerContext.for_namespaces(gold_ns)
        (hit,) = runtime.service.search(ctx, SearchRequest(query="Sofia Lindqvist stepped down as CEO", limit=1))
        page.goto(f"{base}/graph?memory={hit.citation.document_id}&depth=1&include_superseded=true")
        status.filter(has_text=re.compile("^showing")).wait_for(timeout=30_000)
        older = page.evaluate("""() => window.graphmem.cy.nodes('.older').map(n => [n.data('node').version,
            n.data('color')])""")
        assert older and all(version == 1 for version, _ in older) and older[0][1] != colours["Document"]
        assert page.evaluate("() => window.graphmem.cy.edges('.previous_version').length") == 1
        assert errors == []
    assert outside == []


# ---- folded facts, the relations view, asserted triples: two small corpora ---------------------------------

NOTES = [
    "Ana Ruiz leads the payments team at Northwind. She wants the billing service on Kafka by May.",
    "Standup: Ben Okafor fixed the checkout bug. Ana Ruiz reviewed his patch on Tuesday.",
    "Clara Diaz joined Northwind as a data engineer. Clara Diaz works with Ben Okafor on the ledger.",
    "The ledger runs on PostgreSQL. Clara Diaz proposed Snowflake for the reporting jobs.",
    "Ben Okafor does not use Kafka. He prefers RabbitMQ for the checkout queue.",
    "Northwind opened an office in Lisbon. Ana Ruiz moves to Lisbon in June.",
    "Retro: the Atlas launch slipped to July. Dmitri Volkov owns the Atlas roadmap.",
    "Dmitri Volkov met Globex about the Atlas integration. Globex uses Snowflake.",
]
# what an agent states about the same people (the memory MCP tools' create_entities and create_relations)
AGENT_ENTITIES = [EntityAssertion(name="Ana Ruiz", type="person", observations=["Prefers written status updates"]),
                  EntityAssertion(name="Northwind", type="organization"),
                  EntityAssertion(name="Clara Diaz", type="person"),
                  EntityAssertion(name="Dmitri Volkov", type="person"),
                  EntityAssertion(name="Globex", type="organization")]
AGENT_RELATIONS = [RelationAssertion(source="Ana Ruiz", target="Northwind", relationType="WORKS_AT"),
                   RelationAssertion(source="Clara Diaz", target="Ana Ruiz", relationType="REPORTS_TO"),
                   RelationAssertion(source="Dmitri Volkov", target="Globex", relationType="NEGOTIATES_WITH")]

DOCS = {
    "overview.md": "# Harbor overview\n\nHarbor is a job scheduler that the platform team at Northwind built.\n\n"
                   "## Storage\n\nHarbor stores its queue in PostgreSQL. Redis caches the worker leases.\n\n"
                   "## Owners\n\nClara Diaz maintains the scheduler. Ben Okafor maintains the web console.\n",
    "deploy.md": "# Deploying Harbor\n\n## Requirements\n\nHarbor needs PostgreSQL and Redis. The workers run on "
                 "Kubernetes.\n\n## Steps\n\n1. Create the database.\n2. Install the Helm chart.\n\n"
                 "Grafana shows the queue metrics.\n",
    "adr-001.md": "# ADR 1: PostgreSQL for the queue\n\n## Context\n\nHarbor first used RabbitMQ. RabbitMQ lost jobs "
                  "during failovers.\n\n## Decision\n\nHarbor uses PostgreSQL for the queue. Clara Diaz wrote the "
                  "migration.\n",
    "runbook.md": "# Harbor runbook\n\n## Stuck jobs\n\nWhen jobs are stuck, restart the worker pods on Kubernetes. "
                  "Ben Okafor owns the alerts in Grafana.\n",
}
CORPUS_CAPS = {"max_nodes": 300, "max_documents": 100, "fanout": 25}
# each corpus's query seed and depth: the notes' whole graph, the documents' but one (its facts that another
# document's entities reach are drawn without their document: there is nothing to fold them into)
CORPUS_SEEDS = {"notes": ("Northwind", 4), "docs": ("Harbor", 2)}


@pytest.fixture(scope="module")
def corpora(runtime: Runtime, tmp_path_factory: pytest.TempPathFactory) -> dict[str, str]:
    """Two namespaces: the team notes (and what an agent asserted about those people), and the Markdown
    documents ingested as the CLI ingests files (a document's title is its first heading)."""
    names = {kind: f"page-{kind}-{uuid.uuid4().hex[:6]}" for kind in ("notes", "docs")}
    notes = CallerContext.for_namespaces(names["notes"])
    runtime.service.add_memories(notes, names["notes"], [DocumentInput(content=text) for text in NOTES])
    runtime.service.create_entities(notes, names["notes"], EntitiesCreate(entities=AGENT_ENTITIES))
    created = runtime.service.create_relations(notes, names["notes"], RelationsChange(relations=AGENT_RELATIONS))
    assert not created.skipped
    folder = tmp_path_factory.mktemp("docs")
    for name, text in DOCS.items():
        (folder / name).write_text(text, encoding="utf-8")
    read = read_paths([folder], max_chars=100_000)
    assert not read.errors
    outcomes = runtime.service.ingest(CallerContext.for_namespaces(names["docs"]), names["docs"],
                                      [item.item for item in read.items])
    assert all(outcome.error is None for outcome in outcomes)
    return names


@pytest.fixture(scope="module")
def corpus_site(runtime: Runtime, corpora: dict[str, str]) -> Iterator[tuple[str, str]]:
    _, token = runtime.identity.create(NewCredential(name="graph-page-corpora", scopes=[Scope.read],
                                                     namespaces=list(corpora.values())), by=OPERATOR)
    with served(create_app(runtime=runtime)) as base:
        yield base, token


def first_words(text: str) -> str:
    """graph.js ``firstWords``: at most 40 characters, cut at a space when one is past the middle."""
    words = " ".join(text.split())
    if len(words) <= 40:
        return words
    cut = words[:40]
    space = cut.rfind(" ")
    return (cut[:space] if space > 20 else cut) + "…"


def expected_captions(answer: dict[str, Any]) -> dict[str, str]:
    """Each document's caption: its title (cut at 40 characters), else the first words of its first fact in
    the export ("…" first when that is not the document's first sentence)."""
    captions = {}
    for node in answer["nodes"]:
        if node["kind"] != "document":
            continue
        title = node.get("title") or ""
        if title:
            captions[node["id"]] = title if len(title) <= 40 else title[:39] + "…"
            continue
        facts = [f for f in answer["nodes"] if f["kind"] == "fact" and f.get("document_id") == node["id"]]
        first = min(facts, key=lambda f: f["position"])
        captions[node["id"]] = ("" if first["position"] == 0 else "…") + first_words(first["text"])
    return captions


def expected_folds(answer: dict[str, Any]) -> dict[tuple[str, str], int]:
    """(document, entity) -> how many of the document's facts in the export mention the entity."""
    documents = {n["id"] for n in answer["nodes"] if n["kind"] == "document"}
    fact_document = {n["id"]: n["document_id"] for n in answer["nodes"] if n["kind"] == "fact"}
    folds: Counter[tuple[str, str]] = Counter()
    for edge in answer["edges"]:
        if edge["kind"] == "mentions" and fact_document[edge["source"]] in documents:
            folds[(fact_document[edge["source"]], edge["target"])] += 1
    return dict(folds)


def shown(page: Page) -> dict[str, Any]:
    """What the page shows now: node ids by kind, edges by kind (folded ones with their counts)."""
    return dict(page.evaluate("""() => {
        const cy = window.graphmem.cy;
        const nodes = {};
        cy.nodes(':visible').forEach(n => (nodes[n.data('node').kind] ||= []).push(n.id()));
        return {nodes, folded: cy.edges('.folded:visible').map(e => [e.source().id(), e.target().id(), e.data('count'),
                                                                    e.data('label')]),
                triples: cy.edges('.triple:visible').map(e => e.id()),
                other: cy.edges(':visible').not('.folded, .triple').map(e => e.data('edge').kind)};
    }"""))


def open_corpus(page: Page, base: str, namespace: str, kind: str, view: str = "") -> None:
    query, depth = CORPUS_SEEDS[kind]
    caps = "&".join(f"{key}={value}" for key, value in CORPUS_CAPS.items())
    page.goto(f"{base}/graph?q={query}&scope={namespace}&depth={depth}&{caps}{view}")
    page.locator("#completeness").filter(has_text=re.compile("^showing")).wait_for(timeout=30_000)


@contextmanager
def corpus_page(base: str, token: str, namespace: str, kind: str) -> Iterator[tuple[Page, list[str], list[str]]]:
    """The graph page, signed in, showing a corpus: (page, requests that left the machine, page errors)."""
    with offline_page(base) as (page, outside):
        errors: list[str] = []
        page.on("pageerror", lambda error: errors.append(str(error)))
        page.goto(f"{base}/graph")
        page.evaluate("(token) => sessionStorage.setItem('graphmem.token', token)", token)
        open_corpus(page, base, namespace, kind)
        yield page, outside, errors


def corpus_answer(site: tuple[str, str], namespace: str, kind: str) -> dict[str, Any]:
    query, depth = CORPUS_SEEDS[kind]
    return api(site, seed="query", query=query, scope=namespace, depth=depth, **CORPUS_CAPS)


def readable_captions(page: Page) -> list[float]:
    """The on-screen size, in pixels, of every caption of a shown edge at the page's current zoom."""
    return list(page.evaluate("""() => {
        const cy = window.graphmem.cy;
        return cy.edges(':visible').filter(e => e.data('label')).map(e => parseFloat(e.style('font-size')) * cy.zoom());
    }"""))


def click_edge(page: Page, edge_id: str) -> None:
    """Click an edge at its middle, where it is drawn."""
    at = page.evaluate("(id) => window.graphmem.cy.getElementById(id).renderedMidpoint()", edge_id)
    box = page.locator("#graph").bounding_box()
    assert box is not None
    page.mouse.click(box["x"] + at["x"], box["y"] + at["y"])


def clearest_folded_edge(page: Page) -> str:
    """A shown folded edge that its own middle would click (no node or other edge drawn over it there, inside
    the canvas; cytoscape's renderer says what a click there hits), the farthest from every shown node."""
    return str(page.evaluate("""() => {
        const cy = window.graphmem.cy;
        const nodes = cy.nodes(':visible').map(n => n.renderedPosition());
        const clickable = (edge) => {
            const at = edge.renderedMidpoint();
            const model = edge.midpoint();
            return at.x > 10 && at.y > 10 && at.x < cy.width() - 10 && at.y < cy.height() - 10 &&
                cy.renderer().findNearestElement(model.x, model.y, true, false) === edge;
        };
        const clearance = (edge) => {
            const at = edge.renderedMidpoint();
            return Math.min(...nodes.map(p => Math.hypot(p.x - at.x, p.y - at.y)));
        };
        return cy.edges('.folded:visible').filter(clickable).max(clearance).ele.id();
    }"""))


@pytest.mark.parametrize("kind", ["notes", "docs"])
def test_graph_page_folds_facts_into_counted_document_entity_edges(corpus_site: tuple[str, str],
                                                                  corpora: dict[str, str], kind: str) -> None:
    base, token = corpus_site
    namespace = corpora[kind]
    answer = corpus_answer(corpus_site, namespace, kind)
    assert answer["next_cursor"] is None  # the whole corpus is on one page
    folds = expected_folds(answer)
    with corpus_page(base, token, namespace, kind) as (page, outside, errors):
        assert drawn(page) == (len(answer["nodes"]), len(answer["edges"]))

        # documents are captioned: their title, else their first words
        captions = page.evaluate("() => Object.fromEntries(window.graphmem.cy.nodes('.document')"
                                 ".map(n => [n.id(), n.data('label')]))")
        assert captions == expected_captions(answer)
        assert all(captions.values())

        # facts are folded: every fact of a drawn document is hidden, and each (document, entity) pair of
        # their mentions is one edge that carries the count; a fact whose document is not drawn stays
        now = shown(page)
        documents = {n["id"] for n in answer["nodes"] if n["kind"] == "document"}
        loose = {n["id"] for n in answer["nodes"] if n["kind"] == "fact" and n["document_id"] not in documents}
        assert set(now["nodes"].get("fact", [])) == loose
        assert {(s, t): count for s, t, count, _ in now["folded"]} == folds
        assert all(label == str(count) for _, _, count, label in now["folded"])
        assert sorted(now["other"]) == ["mentions"] * sum(
            1 for e in answer["edges"] if e["kind"] == "mentions" and e["source"] in loose)
        folded = sum(1 for n in answer["nodes"] if n["kind"] == "fact") - len(loose)
        assert page.locator("#view-line").inner_text() == \
            f"{folded} facts folded into {len(folds)} document → entity edges"

        # captions of edges are readable at the zoom the page opens with
        sizes = readable_captions(page)
        assert sizes and min(sizes) >= 11, sizes
        page.screenshot(path=str(artifacts() / f"graph-{kind}.png"))

        # a click on a document shows its facts (and its folded edges give way); a second folds them again
        document = click_node(page, "node.document", where=WITH_FACTS)
        its_facts = {n["id"] for n in answer["nodes"] if n["kind"] == "fact" and n["document_id"] == document["id"]}
        until(page, "(ids) => ids.every(id => window.graphmem.cy.getElementById(id).visible())", list(its_facts))
        now = shown(page)
        assert not [edge for edge in now["folded"] if edge[0] == document["id"]]
        assert "contains" in now["other"]
        page.locator("#details dd", has_text="shown").wait_for(timeout=10_000)
        page.wait_for_timeout(DOUBLE_CLICK_MS + 100)  # a second click, not the second half of a double-click
        page.mouse.click(*node_point(page, document["id"]))
        until(page, "(ids) => ids.every(id => !window.graphmem.cy.getElementById(id).visible())", list(its_facts))

        # a click on a folded edge shows the facts behind it
        edge = clearest_folded_edge(page)
        behind = page.evaluate("(id) => window.graphmem.cy.getElementById(id).data('facts')", edge)
        click_edge(page, edge)
        until(page, "(ids) => ids.every(id => window.graphmem.cy.getElementById(id).visible())", behind)
        assert not page.evaluate("(id) => window.graphmem.cy.getElementById(id).visible()", edge)
        page.locator("#details-title", has_text="Facts of a memory about an entity").wait_for(timeout=10_000)
        assert errors == []
    assert outside == []


def node_point(page: Page, node_id: str) -> tuple[float, float]:
    at = page.evaluate("(id) => window.graphmem.cy.getElementById(id).renderedPosition()", node_id)
    box = page.locator("#graph").bounding_box()
    assert box is not None
    return box["x"] + at["x"], box["y"] + at["y"]


@pytest.mark.parametrize("kind", ["notes", "docs"])
def test_graph_page_relations_view_shows_entities_and_triples_asserted_apart(
        corpus_site: tuple[str, str], corpora: dict[str, str], kind: str) -> None:
    base, token = corpus_site
    namespace = corpora[kind]
    answer = corpus_answer(corpus_site, namespace, kind)
    triples = [e for e in answer["edges"] if e["kind"] == "triple"]
    assert triples, kind
    related = {e["source"] for e in triples} | {e["target"] for e in triples}
    asserted = [e for e in triples if e["asserted"]]
    # the export says which triples an agent stated: the notes' three, with their relation type as predicate
    if kind == "notes":
        assert sorted(e["predicate"] for e in asserted) == ["NEGOTIATES_WITH", "REPORTS_TO", "WORKS_AT"]
        assert all(e["asserted"] is False for e in triples if e not in asserted)
    else:
        assert not asserted
    with corpus_page(base, token, namespace, kind) as (page, outside, errors):
        page.locator("#relations").click()
        until(page, "() => window.graphmem.view === 'relations'", None)
        assert "view=relations" in page.url
        assert page.locator("#relations").get_attribute("aria-pressed") == "true"
        now = shown(page)
        assert set(now["nodes"]) == {"entity"} and set(now["nodes"]["entity"]) == related
        assert len(now["triples"]) == len(triples) and now["other"] == [] and now["folded"] == []
        assert page.locator("#view-line").inner_text() == \
            f"Relations: {len(related)} entities and {len(triples)} triples; documents and facts hidden"

        # asserted triples: solid and in their own colour; triples read from text: dashed
        styles = page.evaluate("""() => window.graphmem.cy.edges('.triple').map(e => ({
            asserted: e.data('edge').asserted, negated: e.data('edge').negated,
            line: e.style('line-style'), colour: e.style('line-color')}))""")
        assert all(s["line"] == ("solid" if s["asserted"] else "dashed") for s in styles)
        colours = {bool(s["asserted"]): s["colour"] for s in styles if not s["negated"]}
        assert len({*colours.values()}) == len(colours)  # another colour when both are drawn
        assert sum(1 for s in styles if s["asserted"]) == len(asserted)
        legend = page.locator("#legend").inner_text()
        assert "triple read from text (dashed)" in legend and "triple asserted by an agent (solid)" in legend

        sizes = readable_captions(page)
        assert sizes and min(sizes) >= 11, sizes
        page.screenshot(path=str(artifacts() / f"graph-{kind}-relations.png"))

        # the view travels in the URL; the other view is one click away
        page.reload()
        page.locator("#completeness").filter(has_text=re.compile("^showing")).wait_for(timeout=30_000)
        assert page.evaluate("() => window.graphmem.view") == "relations"
        assert set(shown(page)["nodes"]) == {"entity"}
        page.locator("#relations").click()
        until(page, "() => window.graphmem.cy.nodes('.document:visible').length > 0", None)
        assert "view=relations" not in page.url
        assert errors == []
    assert outside == []
