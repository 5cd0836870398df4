"""The FastAPI application: lifespan (engine, driver, schema, owner credential, job worker, the MCP session
manager), ``/health``, the HTTP API (``graphmem/http/``), ``/metrics``, the offline docs, the pages that need no
token (Neo4j Browser's style and guide, ``/graph``), and the MCP server's Streamable HTTP paths (``/mcp``, its
``/.well-known`` paths where the SDK puts them). Every error is answered in one envelope
(``graphmem/http/errors.py``)."""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager

from fastapi import FastAPI, Request
from fastapi.concurrency import run_in_threadpool
from fastapi.middleware.cors import CORSMiddleware
from fastapi.responses import JSONResponse, PlainTextResponse, Response

from graphmem import __version__
from graphmem.config import Settings, Toolset
from graphmem.errors import GraphmemError
from graphmem.graphql.router import graphql_router
from graphmem.http import assertions, credentials, docs, errors, graph, memories, openapi, pages, work
from graphmem.http.access import token_of
from graphmem.http.errors import BodyLimit, Unexpected, Untraceable
from graphmem.http.metrics import CONTENT_TYPE, Metrics, MetricsMiddleware
from graphmem.http.schemas import Health, Ready
from graphmem.mcp.server import NEO4J_MEMORY_PATH, build_server, http_routes
from graphmem.runtime import Runtime

OPENAPI_TAGS = [
    {"name": "memories", "description": "Remember, read, update, forget, search and recall memories."},
    {"name": "graph", "description": "Entities, triples and the bounded evidence graph."},
    {"name": "jobs and handoffs", "description": "Background ingestion, and a project's state passed on."},
    {"name": "credentials", "description": "The owner's credential administration."},
    {"name": openapi.PUBLIC, "description": "What needs no token: health, readiness, metrics, this documentation "
                                            "and the pages."},
]
API_ROUTERS = (memories.router, graph.router, assertions.router, work.router, credentials.router)


def create_app(settings: Settings | None = None, runtime: Runtime | None = None) -> FastAPI:
    """Build an app. With ``runtime`` given (tests), the app uses it and leaves closing it to the caller."""
    chosen = runtime.settings if runtime is not None else settings or Settings()
    # The session manager runs once per server instance: one server per app, entered in every branch.
    mcp = build_server(lambda: app.state.runtime, chosen)
    neo4j_memory = build_server(lambda: app.state.runtime, chosen, toolsets=[Toolset.neo4j_memory],
                                path=NEO4J_MEMORY_PATH)

    @asynccontextmanager
    async def lifespan(app: FastAPI) -> AsyncIterator[None]:
        async with mcp.session_manager.run(), neo4j_memory.session_manager.run():
            if runtime is not None:
                app.state.runtime = runtime
                await run_in_threadpool(runtime.identity.ensure_owner, runtime.settings.data_dir)
                yield
            else:
                async with _owned_runtime(app, chosen):
                    yield

    app = FastAPI(title="graphmem", version=__version__, lifespan=lifespan, docs_url=None, redoc_url=None,
                  openapi_tags=OPENAPI_TAGS,
                  description="A self-hosted knowledge-graph memory server. Authenticate with "
                              "`Authorization: Bearer <token>` (or `X-API-Key`); times are epoch milliseconds UTC.")
    metrics = Metrics(lambda: getattr(app.state, "runtime", None))
    errors.install(app)
    for router in API_ROUTERS:
        app.include_router(router)
    app.include_router(graphql_router(chosen), include_in_schema=False)
    docs.install(app)
    pages.install(app)

    @app.get("/health", tags=[openapi.PUBLIC], responses={200: {"model": Health}, 503: {"model": Health}})
    async def health(request: Request) -> JSONResponse:
        """200 with engine state, dialect and versions; 503 when the database cannot be reached. Public: it
        names no path, PID or password, unless the caller sends an admin token (the engine's data directory
        and PID); any other token, or a bad one, gets the public answer."""
        current: Runtime = request.app.state.runtime
        healthy, report = await run_in_threadpool(current.health, True, await _is_admin(current, request))
        return JSONResponse(status_code=200 if healthy else 503, content=report)

    @app.get("/ready", tags=[openapi.PUBLIC], responses={200: {"model": Ready}, 503: {"model": Ready}})
    async def ready(request: Request) -> JSONResponse:
        """200 once searches are fast (``Runtime.ready``): the database answers, the models are loaded, and no
        search index is being built in the background at start; 503 until then (``waiting_for`` says what), for
        load balancers and compose's healthcheck. ``/health`` stays 200 meanwhile and says "warming"."""
        current: Runtime = request.app.state.runtime
        ready, answer = await run_in_threadpool(current.ready)
        return JSONResponse(status_code=200 if ready else 503, content=answer)

    @app.get("/metrics", tags=[openapi.PUBLIC], response_class=PlainTextResponse)
    async def prometheus() -> Response:
        """Prometheus's text format: requests by route, method and status, latencies, jobs by state, whether the
        database answers."""
        return Response(await run_in_threadpool(metrics.exposition), media_type=CONTENT_TYPE)

    app.add_middleware(Unexpected)  # innermost: the metrics count its 500
    app.add_middleware(Untraceable)  # inside the metrics, which count its 405
    app.add_middleware(MetricsMiddleware, metrics=metrics)
    if chosen.cors_origins:
        app.add_middleware(CORSMiddleware, allow_origins=chosen.cors_origins, allow_methods=["*"],
                           allow_headers=["Authorization", "X-API-Key", "Content-Type"])
    app.add_middleware(BodyLimit, default_max=chosen.body_max_bytes, caps={"/v1/jobs": chosen.jobs_body_max_bytes})
    app.add_middleware(pages.BrowserCors, origins=chosen.browser_origin)  # outermost: /browser/ only
    app.router.routes.extend(http_routes(mcp, chosen))
    app.router.routes.extend(http_routes(neo4j_memory, chosen, NEO4J_MEMORY_PATH))
    openapi.declare(app, API_ROUTERS)
    return app


async def _is_admin(runtime: Runtime, request: Request) -> bool:
    token = token_of(request)
    if token is None:
        return False
    try:
        return (await run_in_threadpool(runtime.identity.authenticate, token)).admin
    except GraphmemError:  # a bad token, or no database to ask: the public answer
        return False


@asynccontextmanager
async def _owned_runtime(app: FastAPI, settings: Settings) -> AsyncIterator[None]:
    """The server's own runtime: opened, owner ensured, models warmed in the background, the job worker run."""
    opened = await run_in_threadpool(Runtime.open, settings)
    app.state.runtime = opened
    await run_in_threadpool(opened.identity.ensure_owner, opened.settings.data_dir)
    stop = opened.start_serving()  # the server answers /health at once; models load in the background
    if not opened.owns_engine:  # an engine another process started, or Neo4j: other servers may share it
        opened.warn_if_counting_alone("this server may share its database with others")
    try:
        yield
    finally:
        await run_in_threadpool(stop)
        await run_in_threadpool(opened.close)
