"""Pages that need no token: Neo4j Browser's style and guide (``/browser/graphmem.grass``,
``/browser/guide.html``) and graphmem's own graph page (``/graph``), with its script and styles under
``/static/app``. None of them carries data: the guide's queries run in Browser on the analyst's own Neo4j
login, and the graph page reads ``/v1/graph`` with the token the person gives it.

Browser fetches the style and the guide from the person's machine, from its own origin, so these two routes
answer CORS for ``GRAPHMEM_BROWSER_ORIGIN`` (default ``http://localhost:7474``): the one exception to the
HTTP API's CORS-off default. The graph page is same-origin and sends a Content-Security-Policy that allows
nothing from another host."""

from __future__ import annotations

from fastapi import APIRouter, FastAPI, Request
from fastapi.responses import HTMLResponse, Response
from fastapi.staticfiles import StaticFiles

from graphmem.config import Settings
from graphmem.runtime import Runtime
from graphmem.web import WEB_DIR
from graphmem.web.guide import render_guide

STATIC = WEB_DIR / "static"
STYLE_PATH = "/browser/graphmem.grass"
GUIDE_PATH = "/browser/guide.html"
GRAPH_PAGE_POLICY = ("default-src 'self'; script-src 'self'; style-src 'self' 'unsafe-inline'; "
                     "img-src 'self' data: blob:; connect-src 'self'; frame-ancestors 'none'")


def install(app: FastAPI, settings: Settings) -> None:
    app.mount("/static/app", StaticFiles(directory=STATIC), name="app")
    app.include_router(router(settings), include_in_schema=False)


def router(settings: Settings) -> APIRouter:
    pages = APIRouter()
    cors = {"Access-Control-Allow-Origin": settings.browser_origin, "Vary": "Origin"}
    preflight = {**cors, "Access-Control-Allow-Methods": "GET, OPTIONS", "Access-Control-Max-Age": "600"}

    @pages.get(STYLE_PATH)
    async def style() -> Response:
        """The GRASS style: colours, sizes and captions by label, for Browser's ``:style``."""
        return Response((STATIC / "graphmem.grass").read_bytes(), media_type="text/plain; charset=utf-8",
                        headers=cors)

    @pages.get(GUIDE_PATH)
    async def guide(request: Request) -> HTMLResponse:
        """The ``:play`` guide, its queries as the connected server's dialect runs them."""
        runtime: Runtime = request.app.state.runtime
        return HTMLResponse(render_guide(runtime.store.dialect, runtime.settings.default_namespace), headers=cors)

    @pages.options(STYLE_PATH)
    @pages.options(GUIDE_PATH)
    async def allow(request: Request) -> Response:
        """A preflight, should Browser send one: the same origin, any header it asks for."""
        asked = request.headers.get("access-control-request-headers")
        return Response(status_code=204, headers={**preflight, **({"Access-Control-Allow-Headers": asked}
                                                                  if asked else {})})

    @pages.get("/graph")
    async def graph_page() -> HTMLResponse:
        """The graph page: the page is static, the data comes from ``/v1/graph`` with the person's token."""
        return HTMLResponse((STATIC / "graph.html").read_text(encoding="utf-8"),
                            headers={"Content-Security-Policy": GRAPH_PAGE_POLICY})

    return pages
