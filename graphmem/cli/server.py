"""``graphmem serve``, ``graphmem worker`` and ``graphmem mcp``: the long-running processes."""

from __future__ import annotations

import os
import time
from typing import TYPE_CHECKING, Annotated

import typer

from graphmem.cli.common import DataDir, LogLevel, configure_logging, fail, settings
from graphmem.errors import GraphmemError, Unauthenticated
from graphmem.identity.credentials import OWNER_TOKEN_FILE

if TYPE_CHECKING:
    from fastapi import FastAPI

    from graphmem.config import Settings
    from graphmem.runtime import Runtime

# How long serve keeps an idle connection open. Clients pool connections and reuse them until their own
# expiry (httpx, under the MCP SDK's client too: 5 s; a proxy in front: nginx's 60 s): a server that closes
# an idle connection at the moment a client sends on it makes that call fail with a read error, which
# uvicorn's 5 s made happen under load. Longer than every client's, the client always closes first.
KEEP_ALIVE_S = 65
WORKER_LOG_LEVEL = "GRAPHMEM_SERVE_LOG_LEVEL"  # how ``serve --workers`` hands its --log-level to the workers


def serve(
    host: Annotated[str | None, typer.Option(envvar="GRAPHMEM_HOST", show_envvar=True, show_default="127.0.0.1",
                                             help="Bind address.")] = None,
    port: Annotated[int | None, typer.Option(envvar="GRAPHMEM_PORT", show_envvar=True, show_default="8420",
                                             help="HTTP port.")] = None,
    data_dir: DataDir = None,
    log_level: LogLevel = "info",
    workers: Annotated[int, typer.Option(envvar="GRAPHMEM_WORKERS", show_envvar=True, min=1, max=64,
                                         help="App processes sharing the port and the database.")] = 1,
) -> None:
    """Run the HTTP server. It starts (and owns) the bundled engine unless one is running or
    GRAPHMEM_NEO4J_URI points at Neo4j. With --workers N, N processes serve the port: this one starts or
    attaches to the engine first, restarts it if it dies, and stops it last."""
    import uvicorn

    from graphmem.app import create_app

    chosen = settings(data_dir, host=host, port=port)
    configure_logging(log_level)
    try:
        if workers > 1:
            _serve_workers(chosen, workers, log_level)
            return
        uvicorn.run(create_app(chosen), host=chosen.host, port=chosen.port, log_level=log_level,
                    timeout_keep_alive=KEEP_ALIVE_S)
    except GraphmemError as exc:
        fail(exc)


def _serve_workers(chosen: Settings, workers: int, log_level: str) -> None:
    """``serve --workers``: this process opens the database once (engine started or attached, schema, owner
    credential) and watches an engine it started; uvicorn then starts ``workers`` processes on the port, each
    building its app from the environment set here (``worker_app``) and attaching to the engine.
    Their request metrics are summed through a directory of their own (``http/metrics.py``)."""
    import tempfile

    import uvicorn

    from graphmem.http.metrics import MULTIPROCESS_DIR
    from graphmem.runtime import Runtime

    os.environ.update(GRAPHMEM_DATA_DIR=str(chosen.data_dir.resolve()), GRAPHMEM_HOST=chosen.host,
                      GRAPHMEM_PORT=str(chosen.port), **{WORKER_LOG_LEVEL: log_level})
    with tempfile.TemporaryDirectory(prefix="graphmem-metrics-") as metrics_dir:
        os.environ.setdefault(MULTIPROCESS_DIR, metrics_dir)
        with Runtime.open(chosen) as runtime:
            runtime.identity.ensure_owner(chosen.data_dir)
            runtime.warn_if_counting_alone(f"{workers} worker processes serve this port")
            stop_watch = runtime.watch_engine()
            try:
                uvicorn.run("graphmem.cli.server:worker_app", factory=True, workers=workers, host=chosen.host,
                            port=chosen.port, log_level=log_level, timeout_keep_alive=KEEP_ALIVE_S)
            finally:
                stop_watch()


def worker_app() -> FastAPI:
    """The app of one ``serve --workers`` process, from the environment its parent set (``_serve_workers``):
    its logging as the parent's, and a runtime that attaches to the engine the parent started."""
    from graphmem.app import create_app
    from graphmem.config import Settings

    configure_logging(os.environ.get(WORKER_LOG_LEVEL, "info"))
    return create_app(Settings())


def worker(data_dir: DataDir = None, log_level: LogLevel = "info") -> None:
    """Apply queued ingestion jobs until interrupted (serve runs one of these too)."""
    from graphmem.runtime import Runtime

    configure_logging(log_level)
    try:
        runtime = Runtime.open(settings(data_dir))
    except GraphmemError as exc:
        fail(exc)
    jobs = runtime.job_worker()
    typer.echo(f"worker {jobs.worker_id} ready", err=True)
    try:
        jobs.start()
        while True:
            time.sleep(3600)
    except KeyboardInterrupt:
        pass
    finally:
        jobs.stop()
        runtime.close()


def mcp(data_dir: DataDir = None, log_level: LogLevel = "info") -> None:
    """Run the MCP server over stdio, for desktop clients (Claude Desktop and the like). It runs as the
    credential whose token is in GRAPHMEM_TOKEN, or else as the data directory's owner credential (made when
    the store has none). It attaches to the engine a running server started, or starts its own, and applies
    logged exchanges as serve does. Logs go to stderr; stdout carries only MCP messages. GRAPHMEM_DATA_DIR
    must be absolute: clients start this command from any directory."""
    import anyio

    from graphmem.errors import InvalidInput
    from graphmem.mcp.server import build_server
    from graphmem.runtime import Runtime

    chosen = settings(data_dir)
    if not chosen.data_dir.is_absolute():
        fail(InvalidInput(f"the data directory {str(chosen.data_dir)!r} is relative: an MCP client starts "
                          "graphmem mcp from a directory of its own choosing, so set GRAPHMEM_DATA_DIR (or "
                          "--data-dir) to an absolute path, the one graphmem serve uses"))
    configure_logging(log_level)
    try:
        runtime = Runtime.open(chosen)
    except GraphmemError as exc:
        fail(exc)
    try:
        token = _stdio_token(runtime)
        runtime.identity.authenticate(token)  # a bad token stops here, before a client connects
    except GraphmemError as exc:
        runtime.close()
        fail(exc)
    stop = runtime.start_serving()  # logged exchanges are applied, as serve applies them
    try:
        anyio.run(build_server(lambda: runtime, chosen, fixed=token, limited=False).run_stdio_async)
    except GraphmemError as exc:
        fail(exc)
    finally:
        stop()
        runtime.close()


def _stdio_token(runtime: Runtime) -> str:
    """GRAPHMEM_TOKEN, or the owner's token (its file in the data directory, made when the store has no
    credential). The token is checked again at every call, so revoking it stops a running client."""
    token = os.environ.get("GRAPHMEM_TOKEN")
    if token:
        return token.strip()
    data_dir = runtime.settings.data_dir
    runtime.identity.ensure_owner(data_dir)
    owner_file = data_dir / OWNER_TOKEN_FILE
    if not owner_file.is_file():
        raise Unauthenticated(f"no GRAPHMEM_TOKEN, and no owner token file at {owner_file}: set GRAPHMEM_TOKEN "
                              "to a credential's token (graphmem credentials create)")
    return owner_file.read_text().strip()
