"""The GraphQL explorer in a real browser: headless Chromium (Debian's ``chromium`` package, driven by
Playwright pointed at that executable; no browser download) loads ``/graphql`` from a real uvicorn server with
no route to the internet, runs the page's first example query, and finds its answer in the page. The test
saves a screenshot to ``test-artifacts/graphiql.png`` (``GRAPHMEM_TEST_ARTIFACTS`` moves it)."""

from __future__ import annotations

import uuid

import pytest
from browser_helpers import artifacts, offline_page

from graphmem.app import create_app
from graphmem.identity import OPERATOR, NewCredential, Scope
from graphmem.model import CallerContext, DocumentInput
from graphmem.runtime import Runtime
from helpers import served

pytestmark = pytest.mark.browser


def test_graphiql_runs_a_query_in_headless_chromium(runtime: Runtime) -> None:
    ns = f"gq-browser-{uuid.uuid4().hex[:6]}"
    runtime.service.add_memory(CallerContext.for_namespaces(ns), ns,
                                 DocumentInput(content="Priya Raman leads Project Falcon in Lisbon."))
    _, token = runtime.identity.create(NewCredential(name="browser", scopes=[Scope.read], namespaces=[ns]), by=OPERATOR)
    with served(create_app(runtime=runtime)) as base, offline_page(base) as (page, outside):
        page.goto(f"{base}/graphql", wait_until="networkidle")
        headers = page.locator(".graphiql-editor-tool .graphiql-editor").last
        assert "Bearer <your token>" in headers.inner_text()  # prefilled: a person pastes the token in
        headers.click()
        page.keyboard.press("Control+A")
        page.keyboard.type(f'{{"Authorization": "Bearer {token}"')
        page.get_by_role("button", name="Execute query").first.click()
        answer = page.locator(".graphiql-response")
        answer.get_by_text("Priya Raman leads Project Falcon").first.wait_for(timeout=30_000)
        page.screenshot(path=str(artifacts() / "graphiql.png"))
        assert '"score"' in answer.inner_text()
    assert outside == []
