"""Dialect detection and the statement loader (no server needed)."""

from __future__ import annotations

from pathlib import Path

import pytest

from graphmem.config import DialectChoice, Settings
from graphmem.errors import ConfigurationError
from graphmem.store import dialect as dialects
from graphmem.store.queries import load_statements


@pytest.mark.parametrize(("agent", "expected"), [
    ("Neo4j/5.26.0 compatible (ArcadeDB 26.10.2)", "arcadedb"),
    ("Neo4j/5.26.3", "neo4j"),
    ("Neo4j/2026.01.4", "neo4j"),
    ("Neo4j/2025.10.1", "neo4j"),
])
def test_detect(agent: str, expected: str) -> None:
    assert dialects.detect(agent).name == expected


@pytest.mark.parametrize("agent", ["Neo4j/5.25.1", "Neo4j/4.4.0", "Memgraph/2.1", "FalkorDB", ""])
def test_unsupported_server_is_a_clear_error(agent: str) -> None:
    with pytest.raises(ConfigurationError) as raised:
        dialects.detect(agent)
    assert "5.26" in raised.value.message


def test_override_wins() -> None:
    assert dialects.detect("Memgraph/2.1", DialectChoice.neo4j) is dialects.NEO4J
    assert dialects.detect("Neo4j/5.26.3", DialectChoice.arcadedb) is dialects.ARCADEDB


def _write(tmp_path: Path, text: str) -> Path:
    (tmp_path / "x.cypher").write_text(text)
    return tmp_path


def test_loader_expands_fragments(tmp_path: Path) -> None:
    named = load_statements(_write(tmp_path, "// fragment: alive\nn.ok = true\n\n"
                                             "// fragment: live\n_x_.ok AND NOT _x_.gone\n\n"
                                             "// name: q\n// a comment\nMATCH (n) WHERE {{ alive }} RETURN n\n\n"
                                             "// name: r\nMATCH (d), (f) "
                                             "WHERE {{ live(d) }} AND {{live( f )}} RETURN d\n"))
    assert named["q"].text == "MATCH (n) WHERE n.ok = true RETURN n"
    assert named["r"].text == "MATCH (d), (f) WHERE d.ok AND NOT d.gone AND f.ok AND NOT f.gone RETURN d"


@pytest.mark.parametrize("text", [
    "MATCH (n) RETURN n",  # no name
    "// name: a\nRETURN 1\n// name: a\nRETURN 2",  # twice
    "// name: a\nRETURN {{ missing }}",
    "// name: a\nCYPHER 5 RETURN 1",
    "// name: a\n// only a comment",
    "// fragment: v\n_x_.ok\n// name: a\nMATCH (n) WHERE {{ v }} RETURN n",  # needs a variable
    "// fragment: v\nn.ok\n// name: a\nMATCH (n) WHERE {{ v(n) }} RETURN n",  # takes none
])
def test_loader_rejects_malformed_files(tmp_path: Path, text: str) -> None:
    with pytest.raises(ValueError):
        load_statements(_write(tmp_path, text))


def test_secrets_never_print() -> None:
    settings = Settings(_env_file=None, neo4j_uri="bolt://db:7687", neo4j_password="hunter2-secret")  # type: ignore[call-arg]
    assert "hunter2-secret" not in repr(settings) and "hunter2-secret" not in str(settings.model_dump())
