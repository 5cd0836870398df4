"""Headless Chromium for the browser tests: Debian's ``chromium`` driven by Playwright (no browser download),
a page that may load nothing from another host, and where screenshots go."""

from __future__ import annotations

import os
import shutil
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from playwright.sync_api import Page, Route, sync_playwright

ROOT = Path(__file__).resolve().parent.parent
CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser")


def artifacts() -> Path:
    folder = Path(os.environ.get("GRAPHMEM_TEST_ARTIFACTS", ROOT / "test-artifacts"))
    folder.mkdir(parents=True, exist_ok=True)
    return folder


@contextmanager
def offline_page(base: str) -> Iterator[tuple[Page, list[str]]]:
    """A 1400x900 page that may load only from ``base``; yields it with the list of other URLs it tried
    (each refused), which a test expects to stay empty."""
    assert CHROMIUM, "this test needs Chromium: install the Debian package `chromium` (apt-get install chromium)"
    outside: list[str] = []
    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=CHROMIUM, args=["--no-sandbox", "--disable-gpu"])
        try:
            page = browser.new_page(viewport={"width": 1400, "height": 900})

            def route(request_route: Route) -> None:
                if request_route.request.url.startswith(base):
                    request_route.continue_()
                else:
                    outside.append(request_route.request.url)
                    request_route.abort()

            page.route("**/*", route)
            yield page, outside
        finally:
            browser.close()
