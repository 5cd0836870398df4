"""`graphmem ingest` as a user runs it: mixed good and bad files and lines, summary and exit code."""

from __future__ import annotations

import json
import re
import subprocess
import sys
import time
from pathlib import Path

import neo4j
import pytest

from graphmem.ingest.files import split_paragraphs
from graphmem.runtime import Runtime
from helpers import child_environment, query

pytestmark = pytest.mark.engine  # starts engines or servers of its own


def ingest(runtime: Runtime, *args: str, **env: str) -> subprocess.CompletedProcess[str]:
    """Run the CLI attached to the test process's store (with the same test embedder)."""
    environ = {**child_environment(runtime, embedder="hashing"), **env}
    return subprocess.run([sys.executable, "-m", "graphmem.cli", "ingest", *args, "--no-progress",
                           "--data-dir", str(runtime.settings.data_dir)], capture_output=True, text=True,
                          timeout=300, env=environ, check=False)


def test_mixed_good_and_bad_inputs(runtime: Runtime, ns: str, tmp_path: Path, graph: neo4j.Driver) -> None:
    (tmp_path / "alice.txt").write_text("Alice Johnson works at Microsoft.\n\nShe lives in Seattle.\n")
    (tmp_path / "atlas.md").write_text("# Project Atlas\n\nBob leads Project Atlas at Google. I use Neo4j.\n")
    (tmp_path / "lines.jsonl").write_text("\n".join([
        json.dumps({"content": "Carol joined Spotify.", "request_id": "line-0001"}),
        "{not json",
        json.dumps({"title": "no content here"}),
        json.dumps({"content": "Dave bought a MacBook Pro.", "metadata": {"nested": {"no": 1}}}),
        json.dumps({"content": "Erin moved to Oslo.", "source": "crm/erin", "metadata": {"stars": 4}}),
    ]) + "\n")
    (tmp_path / "latin1.txt").write_bytes("Café in Zürich.".encode("latin-1"))
    (tmp_path / "image.png").write_bytes(b"\x89PNG")
    result = ingest(runtime, str(tmp_path), str(tmp_path / "missing.md"), "--namespace", ns)
    assert result.returncode == 1, result.stderr
    errors = [line for line in result.stderr.splitlines() if line.startswith("error:")]
    assert len(errors) == 5, result.stderr
    for expected in ("lines.jsonl:2: invalid JSON", "lines.jsonl:3: missing content",
                     "lines.jsonl:4: metadata", "latin1.txt: not UTF-8", "missing.md: unreadable"):
        assert any(expected in e for e in errors), (expected, errors)
    summary = result.stdout.strip().splitlines()[-1]
    # the heading of atlas.md is its title and its facts' section, not a fact
    assert re.fullmatch(r"5 files: 4 new memories, 0 new versions, 0 unchanged; 6 facts, \d+ entities, \d+ triples; "
                        r"5 errors, 1 skipped, [\d.]+ s, [\d.]+ memories/s", summary), summary
    assert f"skipped: {tmp_path / 'image.png'}: unsupported file type .png" in result.stderr, result.stderr
    titles = {r["t"]: r["s"] for r in query(graph, "MATCH (d:Document) WHERE d.namespace = $ns "
                                                   "RETURN d.title AS t, d.source AS s", ns=ns)}
    assert titles["Project Atlas"] == str(tmp_path / "atlas.md") and titles["alice"] == str(tmp_path / "alice.txt")

    (tmp_path / "alice.txt").write_text("Alice Johnson works at Microsoft.\n\nShe moved to Boston.\n")
    again = ingest(runtime, str(tmp_path / "alice.txt"), str(tmp_path / "atlas.md"), "--namespace", ns)
    assert again.returncode == 0, again.stderr
    # changed file: a version; same file: nothing
    assert "2 files: 0 new memories, 1 new versions, 1 unchanged; " in again.stdout, again.stdout
    assert "; 0 errors, " in again.stdout, again.stdout
    versions = query(graph, "MATCH (d:Document) WHERE d.namespace = $ns AND d.source = $s "
                            "RETURN d.version AS v, d.is_latest AS l ORDER BY v", ns=ns, s=str(tmp_path / "alice.txt"))
    assert versions == [{"v": 1, "l": False}, {"v": 2, "l": True}]


def test_a_directory_names_every_file_it_skips(runtime: Runtime, ns: str, tmp_path: Path,
                                              graph: neo4j.Driver) -> None:
    (tmp_path / "README").write_text("# Falcon\n\nPriya Raman leads Project Falcon.\n")  # text: read as Markdown
    (tmp_path / "tool").write_bytes(b"\x7fELF\x02\x01\x01\x00" + bytes(range(256)))
    (tmp_path / "notes").write_bytes("Café in Zürich.".encode("latin-1"))
    (tmp_path / "logo.png").write_bytes(b"\x89PNG\r\n")
    (tmp_path / ".env").write_text("TOKEN=secret\n")  # hidden entries are no memories, text or not
    (tmp_path / ".git").mkdir()
    (tmp_path / ".git" / "HEAD").write_text("ref: refs/heads/main\n")
    result = ingest(runtime, str(tmp_path), "--namespace", ns)
    assert result.returncode == 0, result.stderr  # skipping is not failing
    skipped = sorted(line for line in result.stderr.splitlines() if line.startswith("skipped: "))
    assert skipped == sorted(f"skipped: {tmp_path / name}: {why}" for name, why in (
        ("tool", "not text (a NUL byte)"), ("notes", "not UTF-8 text (byte 3)"),
        ("logo.png", "unsupported file type .png (use .txt, .md or .jsonl)"), (".env", "hidden"),
        (".git", "hidden"))), result.stderr
    assert "error:" not in result.stderr, result.stderr
    assert result.stdout.startswith("1 files: 1 new memories, ") and "; 0 errors, 5 skipped, " in result.stdout
    rows = query(graph, "MATCH (d:Document) WHERE d.namespace = $ns RETURN d.title AS t, d.source AS s", ns=ns)
    assert rows == [{"t": "Falcon", "s": str(tmp_path / "README")}]

    (tmp_path / "README").unlink()  # nothing left to read: that fails, as a file named on the line does
    nothing = ingest(runtime, str(tmp_path), str(tmp_path / "tool"), "--namespace", ns)
    assert nothing.returncode == 1, nothing.stderr
    assert f"error: {tmp_path / 'tool'}: not text (a NUL byte)" in nothing.stderr, nothing.stderr
    assert f"skipped: {tmp_path / 'tool'}: not text (a NUL byte)" in nothing.stderr, nothing.stderr
    assert "1 files: nothing to ingest (5 skipped)" in nothing.stderr, nothing.stderr


def test_large_files_are_split_into_numbered_parts(runtime: Runtime, ns: str, tmp_path: Path,
                                                   graph: neo4j.Driver) -> None:
    paragraphs = [f"Paragraph {i} says that team {i} shipped feature {i}." for i in range(12)]
    (tmp_path / "big.md").write_text("\n\n".join(paragraphs) + "\n")
    result = ingest(runtime, str(tmp_path / "big.md"), "--namespace", ns, GRAPHMEM_LIMIT_CONTENT_CHARS="200")
    assert result.returncode == 0, result.stderr
    rows = query(graph, "MATCH (d:Document) WHERE d.namespace = $ns RETURN d.source AS s, d.content AS c, "
                        "d.metadata AS m ORDER BY s", ns=ns)
    assert len(rows) > 1
    assert [json.loads(r["m"])["part"] for r in sorted(rows, key=lambda r: json.loads(r["m"])["part"])] == \
        list(range(1, len(rows) + 1))
    assert all(r["s"].startswith(str(tmp_path / "big.md") + "#part") and len(r["c"]) <= 200 for r in rows)
    joined = "".join(r["c"] for r in sorted(rows, key=lambda r: json.loads(r["m"])["part"]))
    assert joined == "\n\n".join(paragraphs) + "\n"  # cut at paragraph breaks, nothing lost


def test_split_paragraphs_at_the_real_cap() -> None:
    text = "\n\n".join(f"Paragraph {i}. " + "word " * 2000 for i in range(30))
    parts = split_paragraphs(text, 100_000)
    assert len(parts) == 4 and all(len(p) <= 100_000 for p in parts) and "".join(parts) == text
    assert all(p.startswith("Paragraph") for p in parts)
    huge = "x " * 120_000  # one paragraph over the cap: cut at a space
    assert "".join(split_paragraphs(huge, 100_000)) == huge


def test_jsonl_lines_sharing_a_source_stay_separate_memories(runtime: Runtime, ns: str, tmp_path: Path,
                                                             graph: neo4j.Driver) -> None:
    lines = [json.dumps({"content": f"Chat turn {i}: Bob asked about Berlin.", "source": "chat"}) for i in range(5)]
    (tmp_path / "chat.jsonl").write_text("\n".join(lines) + "\n")
    first = ingest(runtime, str(tmp_path / "chat.jsonl"), "--namespace", ns, "--batch", "2")
    assert first.returncode == 0, first.stderr
    assert "1 files: 5 new memories, 0 new versions, 0 unchanged; " in first.stdout, first.stdout
    before = query(graph, "MATCH (d:Document) WHERE d.namespace = $ns RETURN count(d) AS c, "
                          "sum(CASE WHEN d.is_latest THEN 1 ELSE 0 END) AS latest", ns=ns)
    assert before == [{"c": 5, "latest": 5}]
    again = ingest(runtime, str(tmp_path / "chat.jsonl"), "--namespace", ns, "--batch", "2")
    assert again.returncode == 0, again.stderr
    assert "1 files: 0 new memories, 0 new versions, 5 unchanged; " in again.stdout, again.stdout


def test_bad_namespace_and_missing_paths_fail_before_any_model_loads(runtime: Runtime, tmp_path: Path) -> None:
    (tmp_path / "note.md").write_text("Alice joined Google.\n")
    started = time.perf_counter()
    bad = ingest(runtime, str(tmp_path / "note.md"), "--namespace", "has space")
    assert bad.returncode == 2 and "namespace" in bad.stderr and "Traceback" not in bad.stderr
    missing = ingest(runtime, str(tmp_path / "nope.md"), "--namespace", "fine")
    assert missing.returncode == 1 and "nope.md: unreadable" in missing.stderr
    assert "nothing to ingest" in missing.stderr
    assert time.perf_counter() - started < 10, "the checks ran after loading models"


def test_help_shows_defaults_and_environment_variables_without_markup() -> None:
    environ = child_environment()
    for command in (["ingest"], ["serve"], ["worker"], ["engine", "status"]):
        shown = subprocess.run([sys.executable, "-m", "graphmem.cli", *command, "--help"], capture_output=True,
                               text=True, env={**environ, "COLUMNS": "200"}, check=True).stdout
        assert "GRAPHMEM_DATA_DIR" in shown and "default" in shown, shown
        assert "``" not in shown and "[bold" not in shown, shown


def test_progress_moves_per_fact_with_a_rate(runtime: Runtime, ns: str, tmp_path: Path) -> None:
    (tmp_path / "a.md").write_text(" ".join(f"Sentence {i} is here." for i in range(40)) + "\n")
    result = subprocess.run([sys.executable, "-m", "graphmem.cli", "ingest", str(tmp_path / "a.md"), "-n", ns,
                             "--data-dir", str(runtime.settings.data_dir)], capture_output=True, text=True,
                            timeout=300, env=child_environment(runtime, embedder="hashing"), check=False)
    assert result.returncode == 0, result.stderr
    final = [line for line in re.split(r"[\r\n]", result.stderr) if "facts" in line][-1]
    assert re.search(r"40/40 \[.*facts/s\]", final), result.stderr
