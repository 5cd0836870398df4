"""``graphmem engine start|stop|status``: the bundled engine of a data directory."""

from __future__ import annotations

import json
from typing import Annotated

import typer

from graphmem.cli.common import DataDir, fail, settings
from graphmem.errors import GraphmemError
from graphmem.store.engine import BundledEngine

engine_app = typer.Typer(help="The bundled graph engine (used when GRAPHMEM_NEO4J_URI is not set).",
                         no_args_is_help=True, rich_markup_mode=None)


@engine_app.command("start")
def engine_start(data_dir: DataDir = None) -> None:
    """Start the bundled engine detached (it keeps running after this command returns)."""
    engine = BundledEngine(settings(data_dir))
    try:
        state, started = engine.ensure_running(owned=False)
    except GraphmemError as exc:
        fail(exc)
    verb = "started" if started else "already running"
    typer.echo(f"engine {verb}: pid {state.pid}, bolt 127.0.0.1:{state.bolt_port}, "
               f"http 127.0.0.1:{state.http_port}, data {engine.data_dir}")


@engine_app.command("stop")
def engine_stop(data_dir: DataDir = None) -> None:
    """Stop the bundled engine (SIGTERM, then SIGKILL after the stop timeout)."""
    engine = BundledEngine(settings(data_dir))
    typer.echo("engine stopped" if engine.stop() else "engine was not running")


@engine_app.command("status")
def engine_status(
    data_dir: DataDir = None,
    as_json: Annotated[bool, typer.Option("--json", help="Machine-readable output.")] = False,
) -> None:
    """Print running or stopped, PID, ports, data directory, version, uptime and the password file's path."""
    engine = BundledEngine(settings(data_dir))
    status = engine.status()
    state = status.state
    report = {
        "state": "running" if status.running else "stopped",
        "pid": state.pid if status.running and state else None,
        "bolt_port": state.bolt_port if state else None,
        "http_port": state.http_port if state else None,
        "data_dir": str(status.data_dir),
        "version": state.version if state else engine.version,
        "uptime_s": round(status.uptime_s, 1) if status.uptime_s is not None else None,
        "owner_pid": state.owner_pid if status.running and state else None,
        "password_file": str(status.password_file),
        "log_file": str(status.log_file),
    }
    if as_json:
        typer.echo(json.dumps(report))
        return
    width = max(map(len, report))
    for key, value in report.items():
        typer.echo(f"{key:<{width}}  {'-' if value is None else value}")
