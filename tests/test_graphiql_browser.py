"""The GraphQL explorer in a real browser: headless Chromium (Debian's ``chromium`` package, driven by
Playwright pointed at that executable; no browser download) loads ``/graphql`` from a real uvicorn server with
no route to the internet, runs the page's first example query, and finds its answer in the page. The test
saves a screenshot to ``test-artifacts/graphiql.png`` (``GRAPHMEM_TEST_ARTIFACTS`` moves it)."""

from __future__ import annotations

import os
import shutil
import uuid
from pathlib import Path

from playwright.sync_api import Route, sync_playwright

from graphmem.app import create_app
from graphmem.identity import NewCredential, Scope
from graphmem.model import CallerContext, DocumentInput
from graphmem.runtime import Runtime
from helpers import served

ROOT = Path(__file__).resolve().parent.parent
CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser")


def artifacts() -> Path:
    folder = Path(os.environ.get("GRAPHMEM_TEST_ARTIFACTS", ROOT / "test-artifacts"))
    folder.mkdir(parents=True, exist_ok=True)
    return folder


def test_graphiql_runs_a_query_in_headless_chromium(runtime: Runtime) -> None:
    assert CHROMIUM, "this test needs Chromium: install the Debian package `chromium` (apt-get install chromium)"
    ns = f"gq-browser-{uuid.uuid4().hex[:6]}"
    runtime.service.add_document(CallerContext.for_namespaces(ns), ns,
                                 DocumentInput(content="Priya Raman leads Project Falcon in Lisbon."))
    _, token = runtime.identity.create(NewCredential(name="browser", scopes=[Scope.read], namespaces=[ns]))
    outside: list[str] = []
    with served(create_app(runtime=runtime)) as base, sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=CHROMIUM, args=["--no-sandbox", "--disable-gpu"])
        try:
            page = browser.new_page(viewport={"width": 1400, "height": 900})

            def route(request_route: Route) -> None:
                if request_route.request.url.startswith(base):
                    request_route.continue_()
                else:
                    outside.append(request_route.request.url)  # the page needs nothing from another host
                    request_route.abort()

            page.route("**/*", route)
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
        finally:
            browser.close()
    assert outside == []
