"""The ``graphmem`` command: one module per group of commands (``server``, ``ingesting``, ``engine``), what
they share in ``common``. Help text is plain (no markup), and every option says its default and the
environment variable it reads."""

from __future__ import annotations

import sys

import typer

from graphmem.cli.credentials import credentials_app
from graphmem.cli.engine import engine_app
from graphmem.cli.ingesting import ingest, reembed
from graphmem.cli.reading import export, recall, search, show, stats
from graphmem.cli.server import mcp, serve, worker

app = typer.Typer(help="graphmem: a knowledge-graph memory server.", no_args_is_help=True, rich_markup_mode=None)
app.command()(serve)
app.command()(ingest)
app.command()(reembed)
for reading in (search, recall, show, export, stats):
    app.command()(reading)
app.command()(worker)
app.command()(mcp)
app.add_typer(engine_app, name="engine")
app.add_typer(credentials_app, name="credentials")


@app.command("graphql-schema")
def graphql_schema() -> None:
    """Print the GraphQL schema (SDL); the repository's schema.graphql is this output."""
    from graphmem.graphql.schema import schema

    typer.echo(schema.as_str())


def main() -> None:
    try:
        app()
    except KeyboardInterrupt:
        sys.exit(130)
