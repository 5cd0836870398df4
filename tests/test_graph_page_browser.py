"""The graph page (/graph) in a real browser: headless Chromium (Debian's ``chromium``, driven by Playwright;
no browser download) against a real uvicorn server with the gold set loaded and no route to the internet.
It asks for a token, searches, draws what ``GET /v1/graph`` answers (the cytoscape instance's node and edge
counts, read from the page, against the API's own answer), says how complete that is, loads the next page,
shows a node's details, expands a node, greys older versions, and uses the Browser style's colours. The
screenshot goes to ``test-artifacts/graph.png`` (``GRAPHMEM_TEST_ARTIFACTS`` moves it); the README's picture
is a copy of one."""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Iterator
from typing import Any

import httpx
import pytest
from browser_helpers import artifacts, offline_page
from playwright.sync_api import Page
from test_browser_pages import grass_rules

from graphmem.app import create_app
from graphmem.identity import OPERATOR, NewCredential, Scope
from graphmem.model import CallerContext, SearchRequest
from graphmem.runtime import Runtime
from helpers import served

CAPS = {"max_nodes": 80, "max_documents": 10, "fanout": 25, "depth": 2}


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
    counts = page.evaluate("() => [window.graphmem.cy.nodes().length, window.graphmem.cy.edges().length]")
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


def click_node(page: Page, selector: str, double: bool = False) -> dict[str, Any]:
    """Click a node matching a cytoscape selector where it is drawn, the one farthest from any other node (the
    layout is random: a node drawn over another would take the click); returns its export node."""
    found = page.evaluate("""(selector) => {
        const cy = window.graphmem.cy;
        const clearance = (node) => {
            const at = node.renderedPosition();
            return Math.min(...cy.nodes().filter(other => other.id() !== node.id())
                .map(other => Math.hypot(other.renderedPosition().x - at.x, other.renderedPosition().y - at.y)));
        };
        const node = cy.$(selector).max(clearance).ele;
        const at = node.renderedPosition();
        return {x: at.x, y: at.y, node: node.data('node')};
    }""", selector)
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
    raise AssertionError(f"never true: {script}")


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

        fact = click_node(page, "node.fact")
        page.locator("#details dd", has_text=fact["text"][:30]).first.wait_for(timeout=10_000)

        before_line = status.inner_text()
        before = set(page.evaluate("() => window.graphmem.cy.nodes().map(n => n.id())"))
        entity = click_node(page, "node.entity", double=True)
        around = api(site, seed="entity", id=entity["id"], **{**CAPS, "depth": 1})
        until(page, "(id) => window.graphmem.cy.getElementById(id).hasClass('expanded')", entity["id"])
        after = set(page.evaluate("() => window.graphmem.cy.nodes().map(n => n.id())"))
        assert after == before | {node["id"] for node in around["nodes"]}  # merged, nothing lost
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
