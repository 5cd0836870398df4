"""Writes larger than one Bolt message: the bundled engine refuses a message over 16 MiB, so every write is
cut by encoded size into statements of one transaction. A 100,000-character memory of short sentences and a
batch of large files both used to fail whole; they are written, and a failure in a late part still leaves
nothing behind. A write's parameters are sent as they are, but never turned into text on the way (what the
driver's debug line cost a large write)."""

from __future__ import annotations

import io
import logging
import subprocess
import sys
from pathlib import Path
from typing import Any

import neo4j
import pytest
from neo4j._codec.packstream import v1 as packstream
from neo4j._codec.packstream.v1 import Packer

from graphmem.model import CallerContext, DocumentInput
from graphmem.runtime import Runtime
from graphmem.service import MemoryService
from graphmem.store import dialect
from graphmem.store.dialect import ARCADEDB_MESSAGE_CAP_BYTES
from graphmem.store.driver import Tx, chunks, encoded_size, quiet
from helpers import child_environment, counts, query

SHORT = "Ann met Bo. "  # 12 characters: a fact, its 384 floats and its ids are about 3.7 KB as PackStream


def test_chunks_keep_order_and_stay_under_the_budget() -> None:
    rows = [{"id": str(i), "embedding": [0.5] * 384, "text": "x" * (i % 50)} for i in range(5000)]
    parts = chunks(rows, 1_000_000)
    assert [row for part in parts for row in part] == rows and all(parts)
    assert all(sum(encoded_size(row) for row in part) <= 1_000_000 for part in parts)
    assert sum(encoded_size(row) for row in rows) > ARCADEDB_MESSAGE_CAP_BYTES  # the case that used to fail
    assert chunks([{"big": "y" * 2_000_000}], 1_000_000) == [[{"big": "y" * 2_000_000}]]
    assert encoded_size("zoë 😀") >= len("zoë 😀".encode())


def test_a_100k_memory_of_short_sentences_is_written(service: MemoryService, ctx: CallerContext, ns: str,
                                                     graph: neo4j.Driver, monkeypatch: pytest.MonkeyPatch) -> None:
    content = (SHORT * (100_000 // len(SHORT)))[:100_000]
    sentences = content.count(".")
    parts = record_parts(monkeypatch)
    document = service.add_memory(ctx, ns, DocumentInput(content=content)).document
    assert len(parts) > 1 and sum(parts) == sentences
    assert document.fact_count == sentences
    stored = query(graph, "MATCH (d:Document {id: $id})-[:CONTAINS]->(f:Fact) RETURN count(f) AS n", id=document.id)
    assert stored == [{"n": sentences}]


def test_the_driver_never_turns_a_write_s_parameters_into_text(service: MemoryService, ctx: CallerContext,
                                                                ns: str, graph: neo4j.Driver,
                                                                caplog: pytest.LogCaptureFixture) -> None:
    """The driver formats a statement's parameters for its debug log before it knows whether the line is
    written (``graphmem.store.driver.quiet``: 317 ms a statement of 750 facts' embeddings). With its debug log
    on, a write's lines show the sizes of its lists, never a memory's words or its vectors; what is stored is
    the memory itself."""
    caplog.set_level(logging.DEBUG, logger="neo4j")
    document = service.add_memory(ctx, ns, DocumentInput(content="Quentin Marlow signed the Zephyr lease.")).document
    runs = [record.getMessage() for record in caplog.records if " C: RUN " in record.getMessage()]
    assert any("items]" in line for line in runs), runs
    assert not any("Zephyr" in line for line in runs), runs
    stored = query(graph, "MATCH (:Document {id: $id})-[:CONTAINS]->(f:Fact) RETURN f.text AS text, "
                          "size(f.embedding) AS dimensions", id=document.id)
    assert stored == [{"text": "Quentin Marlow signed the Zephyr lease.", "dimensions": 384}]


def test_quiet_parameters_pack_to_the_same_bytes() -> None:
    """What ``quiet`` wraps is sent exactly as before, by the driver's Rust codec and by its Python one (a
    codec that checked exact types would fail here, not in production)."""
    params = {"facts": [{"id": "f1", "text": "Ann met Bo.", "embedding": [0.25, -1.5, 3e-7] * 128}],
              "visited": {"f1": True, "e2": True}, "ids": ["f1", "e2"], "namespace": "ns", "limit": 5, "none": None}
    assert packstream._rust_pack is not None  # the Rust codec is a core dependency (pyproject.toml)
    packed: dict[str, bytes] = {}
    for codec in ("rust", "python"):
        for name, value in (("plain", params), ("quiet", quiet(params))):
            out = io.BytesIO()
            packer = Packer(out)
            if codec == "rust":
                packer.pack(value)
            else:
                packer._py_pack(value)
            packed[f"{codec} {name}"] = out.getvalue()
    assert packed["rust plain"] == packed["rust quiet"] == packed["python plain"] == packed["python quiet"]


def test_a_failure_in_a_late_part_leaves_nothing(service: MemoryService, ctx: CallerContext, ns: str,
                                                 graph: neo4j.Driver, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(dialect, "WRITE_BUDGET_BYTES", 50_000)  # ~13 facts a part: many parts, quickly
    parts = record_parts(monkeypatch, fail_at=3)
    with pytest.raises(RuntimeError, match="injected"):
        service.add_memory(ctx, ns, DocumentInput(content=SHORT * 300))
    assert len(parts) == 3 and counts(graph, ns) == (0, 0)  # the parts written before went with it


def record_parts(monkeypatch: pytest.MonkeyPatch, fail_at: int | None = None) -> list[int]:
    """Count the facts of each facts_create statement; optionally fail the ``fail_at``-th."""
    parts: list[int] = []
    original = Tx.run

    def counted(self: Tx, name: str, /, **params: Any) -> list[dict[str, Any]]:
        if name == "facts_create":
            parts.append(len(params["facts"]))
            if len(parts) == fail_at:
                raise RuntimeError("injected: a late part of the write fails")
        return original(self, name, **params)

    monkeypatch.setattr(Tx, "run", counted)
    return parts


def test_a_batch_of_large_files_is_ingested(runtime: Runtime, ns: str, tmp_path: Path, graph: neo4j.Driver) -> None:
    for number in range(4):
        (tmp_path / f"log{number}.txt").write_text(f"This is file {number}. " + SHORT * 1200)  # 4 x 1,201 facts: 18 MB
    (tmp_path / "small.md").write_text("# Small\n\nBob joined Acme.\n")
    result = subprocess.run([sys.executable, "-m", "graphmem.cli", "ingest", str(tmp_path), "-n", ns, "--no-progress",
                             "--data-dir", str(runtime.settings.data_dir)], capture_output=True, text=True,
                            timeout=600, env=child_environment(runtime, embedder="hashing"), check=False)
    assert result.returncode == 0, result.stderr
    assert "5 files: 5 new memories" in result.stdout and "; 0 errors" in result.stdout, result.stdout
    facts = query(graph, "MATCH (f:Fact) WHERE f.namespace = $ns RETURN count(f) AS n", ns=ns)[0]["n"]
    assert facts == 4 * 1201 + 1
