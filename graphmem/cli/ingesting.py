"""``graphmem ingest`` and ``graphmem reembed``: bulk work on the data directory, with the local operator's
trust (no credential: whoever can read the data directory owns the data)."""

from __future__ import annotations

import sys
import time
from collections import Counter
from pathlib import Path
from typing import Annotated

import typer

from graphmem.cli.common import DataDir, fail, settings
from graphmem.errors import GraphmemError, InvalidInput


def ingest(
    paths: Annotated[list[Path], typer.Argument(
        help=".txt, .md, .jsonl or extension-less text files, or directories of them.", metavar="PATH",
        show_default=False)],
    namespace: Annotated[str, typer.Option("--namespace", "-n", help="The namespace to write into.")],
    data_dir: DataDir = None,
    batch: Annotated[int, typer.Option(min=1, max=1000, help="Documents per transaction.")] = 64,
    progress: Annotated[bool, typer.Option(help="Show progress (facts done, and the rate) on stderr.")] = True,
) -> None:
    """Ingest files: one memory per text file (cut into numbered parts past the size cap), one per JSONL line.
    Text files (and files without an extension that hold UTF-8 text) are read as Markdown. A changed file
    becomes a new version of its memory; an unchanged one changes nothing. Bad files and lines are reported and
    skipped; the exit code is 1 if anything failed, or if nothing was left to ingest. Below a directory, the
    files not read (another extension, binary, hidden) are named with the reason and are no failure."""
    from tqdm import tqdm

    from graphmem.ingest.files import read_paths
    from graphmem.model import CallerContext, check_namespace
    from graphmem.results import Change

    try:
        check_namespace(namespace)  # before anything slow
    except InvalidInput as exc:
        fail(exc, code=2)
    chosen = settings(data_dir)
    found = read_paths(paths, chosen.limits.content_chars)
    for skipped in found.skipped:  # now, not after the run: what will not be read is known already
        typer.echo(f"skipped: {skipped}", err=True)
    errors = list(found.errors)
    if not found.items:
        for error in errors:
            typer.echo(f"error: {error}", err=True)
        typer.echo(f"{found.files} files: nothing to ingest ({len(found.skipped)} skipped)", err=True)
        raise typer.Exit(code=1)
    facts = found.fact_count()
    from graphmem.runtime import Runtime  # spaCy and torch come with it: seconds, after the cheap checks

    try:
        runtime = Runtime.open(chosen)
    except GraphmemError as exc:
        fail(exc)
    changes: Counter[Change] = Counter()
    with runtime:
        try:
            runtime.service.pipeline.warm_up()  # load the models first: the rate below is ingestion's own
            started = time.perf_counter()
            ctx = CallerContext.for_namespaces(namespace)
            service = runtime.service
            before = service.namespace_counts(ctx, namespace)
            with tqdm(total=facts, unit=" facts", disable=not progress, file=sys.stderr, dynamic_ncols=True,
                      desc=f"{len(found.items)} memories") as bar:
                for start in range(0, len(found.items), batch):
                    chunk = found.items[start:start + batch]
                    outcomes = service.ingest(ctx, namespace, [i.item for i in chunk],
                                              progress=lambda n: bar.update(min(n, facts - bar.n)))
                    for item, outcome in zip(chunk, outcomes, strict=True):
                        changes[outcome.change] += 1
                        if outcome.error is not None:
                            errors.append(f"{item.where}: {outcome.error.message}")
            after = service.namespace_counts(ctx, namespace)
        except GraphmemError as exc:
            fail(exc)
    seconds = time.perf_counter() - started
    for error in errors:
        typer.echo(f"error: {error}", err=True)
    done = len(found.items) - changes[Change.failed]
    typer.echo(f"{found.files} files: {changes[Change.created]} new memories, {changes[Change.versioned]} new "
               f"versions, {changes[Change.unchanged]} unchanged; {after.facts - before.facts} facts, "
               f"{after.entities - before.entities} entities, {after.triples - before.triples} triples; "
               f"{len(errors)} errors, {len(found.skipped)} skipped, {seconds:.1f} s, "
               f"{done / seconds if seconds else 0:.1f} memories/s")
    if errors:
        raise typer.Exit(code=1)


def reembed(data_dir: DataDir = None) -> None:
    """Give every fact and entity a vector from the configured embedder (GRAPHMEM_EMBEDDER), then record it
    as the database's model. Stop the server first; an interrupted run can simply be run again."""
    from tqdm import tqdm

    from graphmem.runtime import Runtime

    try:
        runtime = Runtime.open(settings(data_dir), check_model=False)
    except GraphmemError as exc:
        fail(exc)
    with runtime:
        try:
            with tqdm(unit=" vectors", file=sys.stderr) as bar:
                total, embedder = runtime.service.reembed(bar.update)
            typer.echo(f"re-embedded {total} facts and entities with {embedder}")
        except GraphmemError as exc:
            fail(exc)
