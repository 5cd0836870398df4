"""The FastAPI application: lifespan (engine, driver, schema), ``/health``, and typed error responses.

The GraphQL API and the MCP server mount here in later work; both call ``Runtime.service``.
"""

from __future__ import annotations

import threading
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager

from fastapi import FastAPI, Request
from fastapi.concurrency import run_in_threadpool
from fastapi.responses import JSONResponse

from graphmem import __version__
from graphmem.config import Settings
from graphmem.errors import GraphmemError
from graphmem.runtime import Runtime


def create_app(settings: Settings | None = None, runtime: Runtime | None = None) -> FastAPI:
    """Build an app. With ``runtime`` given (tests), the app uses it and leaves closing it to the caller."""

    @asynccontextmanager
    async def lifespan(app: FastAPI) -> AsyncIterator[None]:
        if runtime is not None:
            app.state.runtime = runtime
            yield
            return
        opened = await run_in_threadpool(Runtime.open, settings or Settings())
        app.state.runtime = opened
        # Models and search indexes load in the background: the server answers /health at once, and the
        # first search does not pay seconds of index loading.
        threading.Thread(target=opened.warm_up, name="graphmem-warm-up", daemon=True).start()
        jobs = opened.job_worker() if opened.settings.jobs_enabled else None
        if jobs is not None:
            jobs.start()
        try:
            yield
        finally:
            if jobs is not None:
                await run_in_threadpool(jobs.stop)
            await run_in_threadpool(opened.close)

    app = FastAPI(title="graphmem", version=__version__, lifespan=lifespan)

    @app.exception_handler(GraphmemError)
    async def graphmem_error(_: Request, exc: GraphmemError) -> JSONResponse:
        return JSONResponse(status_code=exc.http_status, content={"error": exc.to_dict()})

    @app.get("/health")
    async def health(request: Request) -> JSONResponse:
        """200 with engine state, dialect and versions; 503 when the database cannot be reached."""
        current: Runtime = request.app.state.runtime
        healthy, report = await run_in_threadpool(current.health)
        return JSONResponse(status_code=200 if healthy else 503, content=report)

    return app
