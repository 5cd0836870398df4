"""What every command shares: the options read from the environment, settings, quiet logging, and how a
typed error becomes a one-line message and an exit code."""

from __future__ import annotations

import logging
from pathlib import Path
from typing import Annotated, Any, NoReturn

import typer

from graphmem.config import Settings
from graphmem.errors import GraphmemError
from graphmem.model.flat import Flat

DataDir = Annotated[Path | None, typer.Option(
    "--data-dir", envvar="GRAPHMEM_DATA_DIR", show_envvar=True, show_default=".graphmem",
    help="Data directory: the bundled engine's home and its keys.")]
LogLevel = Annotated[str, typer.Option(help="debug (every request and probe line), info, warning or error.")]

def as_option(flat: Flat) -> Any:
    """An option made from a service model's field (``model/flat.py``): ``--as-of`` for ``as_of``, its default
    and description; the model built from it checks the bounds."""
    return typer.Option(flat.default, help=flat.help or None)


QUIET_PATHS = ("/health", "/ready", "/metrics")  # probes: their access lines only at --log-level debug


def settings(data_dir: Path | None = None, **overrides: object) -> Settings:
    values = {k: v for k, v in overrides.items() if v is not None}
    if data_dir is not None:
        values["data_dir"] = data_dir
    return Settings(**values)  # type: ignore[arg-type]


class _ProbeFilter(logging.Filter):
    """Drops uvicorn's access lines for health probes and metrics scrapes."""

    def filter(self, record: logging.LogRecord) -> bool:
        args = record.args if isinstance(record.args, tuple) else ()
        return not (len(args) >= 3 and str(args[2]).split("?")[0] in QUIET_PATHS)


def configure_logging(level: str) -> None:
    """Quiet by default: no per-request lines of the HTTP client graphmem uses for the engine's schema, no
    probe access lines; ``debug`` shows everything."""
    logging.basicConfig(level=level.upper(), format="%(asctime)s %(levelname)s %(name)s: %(message)s")
    if level.lower() != "debug":
        for noisy in ("httpx", "httpcore"):
            logging.getLogger(noisy).setLevel(logging.WARNING)
        logging.getLogger("uvicorn.access").addFilter(_ProbeFilter())


def fail(exc: GraphmemError, code: int = 1) -> NoReturn:
    """Print a typed error as people read it (never a stack trace) and exit."""
    typer.echo(f"error: {exc.message}", err=True)
    for key, value in exc.details.items():
        typer.echo(f"{key}:\n{value}" if key == "log_tail" else f"{key}: {value}", err=True)
    raise typer.Exit(code=code)
