"""The terminal's reading commands (in this process, through typer's runner), attached to the test run's
engine: search, recall, show, export (json, graphml, cypher) and stats, as tables and as --json, stored text
shown as written (never as markup, one line per cell), and one-line errors on bad input."""

from __future__ import annotations

import json
import os
import re
import xml.etree.ElementTree as ET
from dataclasses import dataclass
from pathlib import Path

import pytest
from typer.testing import CliRunner

from graphmem.cli import app
from graphmem.cli.reading import CELL_CHARS, _cell
from graphmem.model import CallerContext, DocumentInput, UpdateInput
from graphmem.runtime import Runtime
from helpers import child_environment, make_settings, new_database

pytestmark = pytest.mark.engine  # starts engines or servers of its own


@dataclass(frozen=True)
class Ran:
    returncode: int
    stdout: str
    stderr: str


def cli(runtime: Runtime, *args: str, settings: dict[str, str] | None = None) -> Ran:
    """The command run in this process (the imports are paid once), attached to ``runtime``'s store, with the test
    embedder; ``settings``: more settings (``new_database``'s, lower-case)."""
    env: dict[str, str | None] = {k: None for k in os.environ if k.startswith("GRAPHMEM_")}
    more = child_environment(runtime, **(settings or {}), embedder="hashing")
    result = CliRunner().invoke(app, [*args, "--data-dir", str(runtime.settings.data_dir)],
                                env={**env, **more, "COLUMNS": "200"})
    if result.exception is not None and not isinstance(result.exception, SystemExit):
        raise result.exception
    return Ran(result.exit_code, result.stdout, result.stderr)


@pytest.fixture
def stored(runtime: Runtime, ns: str) -> dict[str, str]:
    ctx = CallerContext.for_namespaces(ns)
    first = runtime.service.add_memory(ctx, ns, DocumentInput(content="Priya Raman leads Project Falcon.",
                                                                title="Falcon lead")).document
    second = runtime.service.update_memory(ctx, first.id, UpdateInput(
        content="Priya Raman leads Project Falcon in Osaka.")).document
    runtime.service.add_memory(ctx, ns, DocumentInput(content="Jonas Weber joined Project Falcon."))
    return {"first": first.id, "latest": second.id}


def test_without_a_namespace_the_cli_reads_every_namespace(runtime: Runtime, tmp_path: Path) -> None:
    """On a database of its own: "every namespace" is the whole store's."""
    with new_database(runtime) as database, Runtime.open(make_settings(tmp_path, **database)) as store:
        both = CallerContext.for_namespaces("alpha", "beta")
        store.service.add_memory(both, "alpha", DocumentInput(content="The Harbour Guild runs the Eastmere yard."))
        falcon = store.service.add_memory(both, "beta",
                                          DocumentInput(content="Priya Raman leads Project Falcon.")).document
        table = cli(store, "search", "Who leads Project Falcon?", settings=database)
        assert table.returncode == 0, table.stderr
        assert "in alpha, beta" in table.stdout and "Priya Raman leads Project Falcon." in table.stdout
        hits = json.loads(cli(store, "search", "Who leads Project Falcon?", "--json", settings=database).stdout)
        assert hits[0]["document_id"] == falcon.id and hits[0]["namespace"] == "beta"
        recalled = cli(store, "recall", "Who leads Project Falcon?", settings=database)
        assert "Priya Raman" in recalled.stdout and "read alpha, beta" in recalled.stderr
        shown = cli(store, "show", falcon.id, settings=database)
        assert shown.returncode == 0 and "Priya Raman leads Project Falcon." in shown.stdout
        exported = cli(store, "export", "--query", "Project Falcon", "-o", str(tmp_path / "g.json"), settings=database)
        assert exported.returncode == 0 and "in beta" in exported.stdout, exported.stderr
        only = json.loads(cli(store, "search", "Who leads Project Falcon?", "-n", "alpha", "--json",
                              settings=database).stdout)
        assert falcon.id not in {hit["document_id"] for hit in only}


def test_search_recall_and_show(runtime: Runtime, ns: str, stored: dict[str, str]) -> None:
    table = cli(runtime, "search", "Who leads Falcon?", "--namespace", ns)
    assert table.returncode == 0, table.stderr
    assert "Falcon lead" in table.stdout and "Priya Raman leads Project Falcon in Osaka." in table.stdout
    hits = json.loads(cli(runtime, "search", "Who leads Falcon?", "-n", ns, "--json", "--limit", "1").stdout)
    assert [h["document_id"] for h in hits] == [stored["latest"]]

    recalled = cli(runtime, "recall", "Who leads Project Falcon?", "-n", ns, "--max-tokens", "100")
    assert recalled.returncode == 0 and "Priya Raman" in recalled.stdout and "tokens" in recalled.stderr

    shown = cli(runtime, "show", stored["latest"], "-n", ns)
    assert shown.returncode == 0, shown.stderr
    for expected in ("version 2", "Priya Raman leads Project Falcon in Osaka.", "Priya Raman", stored["first"]):
        assert expected in shown.stdout, (expected, shown.stdout)
    detail = json.loads(cli(runtime, "show", stored["latest"], "-n", ns, "--json").stdout)
    assert [v["version"] for v in detail["history"]["items"]] == [2, 1]
    assert detail["memory"]["memory"]["id"] == stored["latest"]


def test_export_in_three_formats(runtime: Runtime, ns: str, stored: dict[str, str], tmp_path: Path) -> None:
    for form in ("json", "graphml", "cypher"):
        out = tmp_path / f"graph.{form}"
        done = cli(runtime, "export", "-n", ns, "--query", "Project Falcon", "--format", form, "-o", str(out))
        assert done.returncode == 0, done.stderr
        assert "nodes" in done.stdout and " memories" in done.stdout
        text = out.read_text()
        if form == "json":
            page = json.loads(text)
            assert page["nodes"] and f"{page['total_documents']} of {page['reachable_documents']} memories" \
                in done.stdout
        elif form == "graphml":
            assert ET.fromstring(text).tag.endswith("graphml")
        else:
            assert "MERGE" in text or "CREATE" in text
    by_document = cli(runtime, "export", "-n", ns, "--document", stored["latest"], "-o", str(tmp_path / "d.json"))
    assert by_document.returncode == 0 and json.loads((tmp_path / "d.json").read_text())["nodes"]
    uncounted = cli(runtime, "export", "-n", ns, "--query", "Project Falcon", "--max-nodes", "1", "--no-count",
                    "-o", str(tmp_path / "u.json"))
    assert uncounted.returncode == 0 and "(not counted) memories" in uncounted.stdout
    assert json.loads((tmp_path / "u.json").read_text())["reachable_documents"] is None


def test_tables_show_stored_text_as_written(runtime: Runtime, ns: str) -> None:
    title = "Deploy [grpc] notes :bug:"  # Rich would read the brackets as a style and the colons as an emoji
    memory = runtime.service.add_memory(CallerContext.for_namespaces(ns), ns, DocumentInput(
        title=title, content="We use [grpc] between services. Read [docs](https://example.com) first.")).document
    searched = cli(runtime, "search", "grpc between services", "-n", ns)
    assert searched.returncode == 0, searched.stderr
    assert title in searched.stdout and "[grpc]" in searched.stdout.split(title, 1)[1], searched.stdout
    shown = cli(runtime, "show", memory.id, "-n", ns)
    assert shown.returncode == 0, shown.stderr
    assert shown.stdout.startswith(title), shown.stdout
    for expected in ("We use [grpc] between services.", "Read [docs](https://example.com) first."):
        assert shown.stdout.count(expected) == 2, (expected, shown.stdout)  # in the text, and in a fact's cell


def test_a_cell_is_one_line_of_bounded_length(runtime: Runtime, ns: str) -> None:
    assert _cell("| a | b |\n|---|---|\n| 1 | 2 |").plain == "| a | b | |---|---| | 1 | 2 |"
    long = " ".join(f"word{i}" for i in range(100))
    assert _cell(long).plain == long[:CELL_CHARS - 1] + "…"
    assert _cell("x" * CELL_CHARS).plain == "x" * CELL_CHARS
    rows = "".join(f"| team {i} | ships feature {i} |\n" for i in range(60))
    runtime.service.add_memory(CallerContext.for_namespaces(ns), ns, DocumentInput(
        content=f"Team features.\n\n| team | feature |\n|---|---|\n{rows}"))
    searched = cli(runtime, "search", "which team ships feature 7", "-n", ns, "--limit", "1")
    assert searched.returncode == 0, searched.stderr
    assert "| team 0 |" in searched.stdout and "| team 59 |" not in searched.stdout, searched.stdout
    assert len(searched.stdout.splitlines()) < 15, searched.stdout


def test_stats_counts_memories_and_their_versions(runtime: Runtime, ns: str) -> None:
    ctx = CallerContext.for_namespaces(ns)
    first = runtime.service.add_memory(ctx, ns, DocumentInput(content="Priya Raman leads Project Falcon.")).document
    second = runtime.service.update_memory(ctx, first.id, UpdateInput(content="Priya Raman leads Falcon.")).document
    runtime.service.update_memory(ctx, second.id, UpdateInput(content="Priya Raman leads Falcon in Osaka."))
    rows = json.loads(cli(runtime, "stats", "--json").stdout)
    mine = next(r for r in rows if r["namespace"] == ns)
    assert (mine["memories"], mine["versions"]) == (1, 3) and mine["facts"] >= 3 and mine["entities"] >= 2
    table = cli(runtime, "stats")
    assert table.returncode == 0, table.stderr
    header = next(line for line in table.stdout.splitlines() if "versions" in line)
    row = next(line for line in table.stdout.splitlines() if ns in line)
    cells = dict(zip(re.split(r"\s*[│┃|]\s*", header.strip()), re.split(r"\s*[│┃|]\s*", row.strip()), strict=True))
    assert (cells["memories"], cells["versions"]) == ("1", "3"), table.stdout


@pytest.mark.parametrize("args", [
    ("search", "x", "-n", "bad namespace!"),
    ("search", "x", "-n", "{ns}", "--limit", "0"),
    ("search", "", "-n", "{ns}"),
    ("recall", "x", "-n", "{ns}", "--max-tokens", "5"),
    ("show", "no-such-id", "-n", "{ns}"),
    ("export", "-n", "{ns}", "-o", "{tmp}/x.json"),
    ("export", "-n", "{ns}", "--query", "x", "--entity", "e", "-o", "{tmp}/x.json"),
    ("export", "-n", "{ns}", "--query", "x", "--format", "png", "-o", "{tmp}/x.json"),
    ("export", "-n", "{ns}", "--query", "x", "--depth", "9", "-o", "{tmp}/x.json"),
])
def test_bad_input_is_one_line_and_a_non_zero_exit(runtime: Runtime, ns: str, tmp_path: Path,
                                                   args: tuple[str, ...]) -> None:
    done = cli(runtime, *(a.format(ns=ns, tmp=tmp_path) for a in args))
    assert done.returncode == 2  # bad input; 1 is kept for a database that fails
    lines = [line for line in done.stderr.splitlines() if line.strip()]
    assert lines and lines[0].startswith("error: ") and "Traceback" not in done.stderr, done.stderr
