"""The front ends only authenticate, translate and shape: no module under ``graphmem/{http,graphql,mcp,web}``
imports the search, ingestion or storage layers or reaches the store through the runtime; the CLI may import
the bundled engine's process control (``store.engine``) and the file reader (``ingest.files``) and nothing
else of them. Everything else goes through ``MemoryService``."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

PACKAGE = Path(__file__).resolve().parents[1] / "graphmem"
LAYERS = ("graphmem.search", "graphmem.ingest", "graphmem.store")
FRONT_ENDS = ("http", "graphql", "mcp", "web")
CLI_MAY_IMPORT = {"graphmem.store.engine", "graphmem.ingest.files"}


def imported(tree: ast.AST) -> set[str]:
    """Every module an import statement names (``from graphmem import store`` names ``graphmem.store``)."""
    names: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            names.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module:
            names.add(node.module)
            names.update(f"{node.module}.{alias.name}" for alias in node.names)
    return names


def store_reaches(tree: ast.AST) -> list[int]:
    """Lines that read ``runtime.store`` (or ``....runtime.store``)."""
    return [node.lineno for node in ast.walk(tree)
            if isinstance(node, ast.Attribute) and node.attr == "store"
            and ((isinstance(node.value, ast.Name) and node.value.id == "runtime")
                 or (isinstance(node.value, ast.Attribute) and node.value.attr == "runtime"))]


def below(layer: str, name: str) -> bool:
    return name == layer or name.startswith(layer + ".")


def modules(folder: str) -> list[Path]:
    return sorted((PACKAGE / folder).rglob("*.py"))


@pytest.mark.parametrize("folder", [*FRONT_ENDS, "cli"])
def test_front_ends_reach_the_graph_only_through_the_service(folder: str) -> None:
    broken = []
    for path in modules(folder):
        tree = ast.parse(path.read_text(encoding="utf-8"))
        allowed = CLI_MAY_IMPORT if folder == "cli" else set()
        for name in imported(tree):
            if any(below(layer, name) for layer in LAYERS) and not any(below(a, name) for a in allowed):
                broken.append(f"{path.relative_to(PACKAGE)} imports {name}")
        broken.extend(f"{path.relative_to(PACKAGE)}:{line} reads runtime.store" for line in store_reaches(tree))
    assert not broken, "\n".join(broken)


def test_the_check_sees_a_forbidden_import_and_a_store_read() -> None:
    tree = ast.parse("from graphmem.search.recall import count_tokens\nimport graphmem.store.driver\n"
                     "from graphmem import ingest\nrows = request.app.state.runtime.store.read(f)\n")
    assert {"graphmem.search.recall", "graphmem.store.driver", "graphmem.ingest"} <= imported(tree)
    assert store_reaches(tree) == [4]
