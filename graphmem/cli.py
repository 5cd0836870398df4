"""The ``graphmem`` command: ``serve`` and ``engine start|stop|status``."""

from __future__ import annotations

import json
import logging
import sys
import time
from collections import Counter
from pathlib import Path
from typing import Annotated

import typer

from graphmem.config import Settings
from graphmem.errors import GraphmemError
from graphmem.store.engine import BundledEngine

app = typer.Typer(help="graphmem: a knowledge-graph memory server.", no_args_is_help=True)
engine_app = typer.Typer(help="The bundled graph engine (used when GRAPHMEM_NEO4J_URI is not set).",
                         no_args_is_help=True)
app.add_typer(engine_app, name="engine")

DataDir = Annotated[Path | None, typer.Option(help="Data directory [env: GRAPHMEM_DATA_DIR]")]


def _settings(data_dir: Path | None = None, **overrides: object) -> Settings:
    values = {k: v for k, v in overrides.items() if v is not None}
    if data_dir is not None:
        values["data_dir"] = data_dir
    return Settings(**values)  # type: ignore[arg-type]


def _fail(exc: GraphmemError) -> None:
    typer.echo(f"error: {exc.message}", err=True)
    for key, value in exc.details.items():
        typer.echo(f"{key}:\n{value}" if key == "log_tail" else f"{key}: {value}", err=True)
    raise typer.Exit(code=1)


@app.command()
def serve(
    host: Annotated[str | None, typer.Option(help="Bind address [default: 127.0.0.1]")] = None,
    port: Annotated[int | None, typer.Option(help="HTTP port [default: 8420]")] = None,
    data_dir: DataDir = None,
    log_level: Annotated[str, typer.Option(help="debug, info, warning, error")] = "info",
) -> None:
    """Run the HTTP server. Starts (and owns) the bundled engine unless one is running or
    GRAPHMEM_NEO4J_URI points at Neo4j."""
    import uvicorn

    from graphmem.app import create_app

    settings = _settings(data_dir, host=host, port=port)
    logging.basicConfig(level=log_level.upper(), format="%(asctime)s %(levelname)s %(name)s: %(message)s")
    try:
        uvicorn.run(create_app(settings), host=settings.host, port=settings.port, log_level=log_level)
    except GraphmemError as exc:
        _fail(exc)


@app.command()
def ingest(
    paths: Annotated[list[Path], typer.Argument(help=".txt, .md or .jsonl files, or directories of them")],
    namespace: Annotated[str, typer.Option("--namespace", "-n", help="Namespace to write into")],
    data_dir: DataDir = None,
    batch: Annotated[int, typer.Option(min=1, max=1000, help="Documents per transaction")] = 64,
    progress: Annotated[bool, typer.Option(help="Show a progress bar")] = True,
) -> None:
    """Ingest files: one document per text file (numbered parts past the size cap), one per JSONL line.
    Bad files and lines are reported and skipped; the exit code is 1 if anything failed."""
    from tqdm import tqdm

    from graphmem.ingest.files import read_paths
    from graphmem.model import CallerContext
    from graphmem.results import Change
    from graphmem.runtime import Runtime

    logging.basicConfig(level="WARNING", format="%(levelname)s %(name)s: %(message)s")
    try:
        runtime = Runtime.open(_settings(data_dir))
    except GraphmemError as exc:
        _fail(exc)
        return
    try:
        runtime.service.pipeline.warm_up()  # load the models first: the rate below is ingestion's own
        started = time.perf_counter()
        ctx = CallerContext.for_namespaces(namespace)
        found = read_paths(paths, runtime.settings.limits.content_chars)
        errors = list(found.errors)
        service = runtime.service
        before = service.namespace_counts(ctx, namespace)
        changes: Counter[Change] = Counter()
        with tqdm(total=len(found.items), unit="doc", disable=not progress, file=sys.stderr) as bar:
            for start in range(0, len(found.items), batch):
                chunk = found.items[start:start + batch]
                outcomes = service.ingest(ctx, namespace, [i.item for i in chunk])
                for item, outcome in zip(chunk, outcomes, strict=True):
                    changes[outcome.change] += 1
                    if outcome.error is not None:
                        errors.append(f"{item.where}: {outcome.error.message}")
                bar.update(len(chunk))
        after = service.namespace_counts(ctx, namespace)
    except GraphmemError as exc:
        runtime.close()
        _fail(exc)
        return
    runtime.close()
    seconds = time.perf_counter() - started
    for error in errors:
        typer.echo(f"error: {error}", err=True)
    written = len(found.items) - changes[Change.failed]
    typer.echo(f"{found.files} files: {changes[Change.created]} new memories, {changes[Change.versioned]} new "
               f"versions, {changes[Change.unchanged]} unchanged; {after.facts - before.facts} facts, "
               f"{after.entities - before.entities} entities, {after.triples - before.triples} triples; "
               f"{len(errors)} errors, {seconds:.1f} s, {written / seconds if seconds else 0:.1f} documents/s")
    if errors:
        raise typer.Exit(code=1)


@app.command()
def reembed(data_dir: DataDir = None) -> None:
    """Give every fact and entity a vector from the configured embedder (GRAPHMEM_EMBEDDER), then record
    it as the database's model. Stop the server first; an interrupted run can simply be run again."""
    from tqdm import tqdm

    from graphmem.ingest.reembed import reembed as run_reembed
    from graphmem.runtime import Runtime

    try:
        runtime = Runtime.open(_settings(data_dir), check_model=False)
    except GraphmemError as exc:
        _fail(exc)
        return
    try:
        embedder = runtime.service.pipeline.embedder
        with tqdm(unit="vector", file=sys.stderr) as bar:
            total = run_reembed(runtime.store, embedder, bar.update)
        typer.echo(f"re-embedded {total} facts and entities with {embedder.name}")
    except GraphmemError as exc:
        _fail(exc)
    finally:
        runtime.close()


@app.command()
def worker(
    data_dir: DataDir = None,
    log_level: Annotated[str, typer.Option(help="debug, info, warning, error")] = "info",
) -> None:
    """Apply queued ingestion jobs until interrupted (``serve`` runs one of these too)."""
    from graphmem.runtime import Runtime

    logging.basicConfig(level=log_level.upper(), format="%(asctime)s %(levelname)s %(name)s: %(message)s")
    try:
        runtime = Runtime.open(_settings(data_dir))
    except GraphmemError as exc:
        _fail(exc)
        return
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


@engine_app.command("start")
def engine_start(data_dir: DataDir = None) -> None:
    """Start the bundled engine detached (it keeps running after this command returns)."""
    engine = BundledEngine(_settings(data_dir))
    try:
        state, started = engine.ensure_running(owned=False)
    except GraphmemError as exc:
        _fail(exc)
        return
    verb = "started" if started else "already running"
    typer.echo(f"engine {verb}: pid {state.pid}, bolt 127.0.0.1:{state.bolt_port}, "
               f"http 127.0.0.1:{state.http_port}, data {engine.data_dir}")


@engine_app.command("stop")
def engine_stop(data_dir: DataDir = None) -> None:
    """Stop the bundled engine (SIGTERM, then SIGKILL after the stop timeout)."""
    engine = BundledEngine(_settings(data_dir))
    typer.echo("engine stopped" if engine.stop() else "engine was not running")


@engine_app.command("status")
def engine_status(
    data_dir: DataDir = None,
    as_json: Annotated[bool, typer.Option("--json", help="Machine-readable output")] = False,
) -> None:
    """Print running/stopped, PID, ports, data directory, version, uptime and the password file's path."""
    engine = BundledEngine(_settings(data_dir))
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


@app.command("cypher-statements", hidden=True)
def cypher_statements(
    dialect: Annotated[str, typer.Option(help="neo4j or arcadedb")] = "neo4j",
) -> None:
    """Print every named statement as that dialect sends it, as JSON (input of the Neo4j lint gate)."""
    from graphmem.store.dialect import ARCADEDB, NEO4J
    from graphmem.store.queries import statements

    chosen = NEO4J if dialect == "neo4j" else ARCADEDB
    out = [{"name": s.name, "source": s.source, "text": chosen.prepare(s.text)}
           for s in statements().values() if chosen.is_neo4j or not s.neo4j_only]
    typer.echo(json.dumps(out, indent=1))


def main() -> None:
    try:
        app()
    except KeyboardInterrupt:
        sys.exit(130)


if __name__ == "__main__":
    main()
