"""``graphmem serve`` and ``graphmem worker``: the long-running processes."""

from __future__ import annotations

import time
from typing import Annotated

import typer

from graphmem.cli.common import DataDir, LogLevel, configure_logging, fail, settings
from graphmem.errors import GraphmemError


def serve(
    host: Annotated[str | None, typer.Option(envvar="GRAPHMEM_HOST", show_envvar=True, show_default="127.0.0.1",
                                             help="Bind address.")] = None,
    port: Annotated[int | None, typer.Option(envvar="GRAPHMEM_PORT", show_envvar=True, show_default="8420",
                                             help="HTTP port.")] = None,
    data_dir: DataDir = None,
    log_level: LogLevel = "info",
) -> None:
    """Run the HTTP server. It starts (and owns) the bundled engine unless one is running or
    GRAPHMEM_NEO4J_URI points at Neo4j."""
    import uvicorn

    from graphmem.app import create_app

    chosen = settings(data_dir, host=host, port=port)
    configure_logging(log_level)
    try:
        uvicorn.run(create_app(chosen), host=chosen.host, port=chosen.port, log_level=log_level)
    except GraphmemError as exc:
        fail(exc)


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
