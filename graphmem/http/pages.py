"""Pages that need no token: Neo4j Browser's style and guide (``/browser/graphmem.grass``,
``/browser/guide.html``) and graphmem's own graph page (``/graph``), with its script and styles under
``/static/graph``. None of them carries data: the guide's queries run in Browser on the analyst's own Neo4j
login, and the graph page reads ``/v1/graph`` with the token the person gives it.

Browser fetches the style and the guide from the person's machine, from its own origin, so ``/browser/``
answers CORS for ``GRAPHMEM_BROWSER_ORIGIN`` (the compose stack's Browser by default): the one exception to
the HTTP API's CORS-off default. ``BrowserCors`` is the outermost middleware for those two paths, so the
API's own CORS setting (``GRAPHMEM_CORS_ORIGINS``) neither refuses Browser's preflight nor widens them. The
graph page is same-origin and sends a Content-Security-Policy that allows nothing from another host."""

from __future__ import annotations

from functools import cache

from fastapi import APIRouter, FastAPI, Request
from fastapi.responses import HTMLResponse, PlainTextResponse, Response
from fastapi.staticfiles import StaticFiles
from starlette.datastructures import Headers, MutableHeaders
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from graphmem.http.openapi import PUBLIC
from graphmem.runtime import Runtime
from graphmem.web import WEB_DIR
from graphmem.web.guide import render_guide

STATIC = WEB_DIR / "static"
BROWSER_PREFIX = "/browser/"
STYLE_PATH = "/browser/graphmem.grass"
GUIDE_PATH = "/browser/guide.html"
GRAPH_PAGE_POLICY = ("default-src 'self'; script-src 'self'; style-src 'self' 'unsafe-inline'; "
                     "img-src 'self' data: blob:; connect-src 'self'; frame-ancestors 'none'")


def install(app: FastAPI) -> None:
    app.mount("/static/graph", StaticFiles(directory=STATIC / "graph"), name="graph-page")
    app.include_router(router)


router = APIRouter(tags=[PUBLIC])


@cache
def _static(name: str) -> bytes:
    """A file of ``static/``, read once: these pages are the same for every request."""
    return (STATIC / name).read_bytes()


@router.get(STYLE_PATH, response_class=PlainTextResponse)
async def style() -> Response:
    """The GRASS style: colours, sizes and captions by label, for Browser's ``:style``."""
    return Response(_static("graphmem.grass"), media_type="text/plain; charset=utf-8")


@router.get(GUIDE_PATH, response_class=HTMLResponse)
async def guide(request: Request) -> HTMLResponse:
    """The ``:play`` guide, its queries as the connected server's dialect runs them."""
    runtime: Runtime = request.app.state.runtime
    return HTMLResponse(render_guide(runtime.service.guide_queries()))


@router.get("/graph", response_class=HTMLResponse)
async def graph_page() -> HTMLResponse:
    """The graph page: the page is static, the data comes from ``/v1/graph`` with the person's token."""
    return HTMLResponse(_static("graph/graph.html"), headers={"Content-Security-Policy": GRAPH_PAGE_POLICY})


class BrowserCors:
    """CORS for ``/browser/`` only, for the listed origins only: a preflight is answered here, a GET gets the
    caller's origin back when it is listed (and no CORS header from anyone else); other paths pass through."""

    def __init__(self, app: ASGIApp, origins: list[str]) -> None:
        self.app = app
        self.origins = frozenset(origins)

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http" or not scope["path"].startswith(BROWSER_PREFIX):
            await self.app(scope, receive, send)
            return
        headers = Headers(scope=scope)
        origin = headers.get("origin")
        allowed = origin if origin in self.origins else None
        if scope["method"] == "OPTIONS" and "access-control-request-method" in headers:
            preflight = {"Vary": "Origin", "Access-Control-Max-Age": "600"}
            if allowed:
                preflight |= {"Access-Control-Allow-Origin": allowed, "Access-Control-Allow-Methods": "GET",
                              "Access-Control-Allow-Headers": headers.get("access-control-request-headers", "")}
            await Response(status_code=204 if allowed else 403, headers=preflight)(scope, receive, send)
            return

        async def send_with_cors(message: Message) -> None:
            if message["type"] == "http.response.start":
                sent = MutableHeaders(scope=message)
                for name in [key for key in sent if key.startswith("access-control-")]:
                    del sent[name]
                sent["Vary"] = "Origin"
                if allowed:
                    sent["Access-Control-Allow-Origin"] = allowed
            await send(message)

        await self.app(scope, receive, send_with_cors)
