"""Loads the named Cypher statements of ``cypher/*.cypher``: the only place query text comes from.

File format: a line ``// name: some_statement`` starts a statement; ``// fragment: some_fragment``
starts a reusable piece (a view predicate, a projection) that statements include as
``{{ some_fragment }}``, or as ``{{ some_fragment(d) }}`` to bind the fragment's node placeholder ``_x_``
to the statement's variable ``d``. Inclusion happens once, at load time, from these files only: user
input is never part of query text, it always travels as parameters. Other ``//`` lines are comments.

Files named ``*.neo4j.cypher`` hold the few statements only Neo4j accepts (index DDL,
``db.awaitIndexes``); the dialect seam decides when they run.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import cache
from importlib.resources import files
from pathlib import Path

# The repository's cypher/ folder, which the wheel (and an editable install) maps to graphmem.cypher.
CYPHER_DIR = Path(str(files("graphmem.cypher")))

_HEADER = re.compile(r"^//\s*(name|fragment):\s*([a-z][a-z0-9_]*)\s*$")
_INCLUDE = re.compile(r"\{\{\s*([a-z][a-z0-9_]*)\s*(?:\(\s*([a-z_][a-z0-9_]*)\s*\))?\s*\}\}")
PLACEHOLDER = "_x_"


@dataclass(frozen=True)
class Statement:
    name: str
    text: str
    source: str  # file name, for error messages and the lint gate
    neo4j_only: bool


def _blocks(path: Path) -> list[tuple[str, str, str]]:
    """Split one file into (kind, name, body) blocks."""
    blocks: list[tuple[str, str, str]] = []
    current: tuple[str, str] | None = None
    lines: list[str] = []

    def flush() -> None:
        if current is not None:
            body = "\n".join(line for line in lines if not line.lstrip().startswith("//")).strip()
            if not body:
                raise ValueError(f"{path.name}: {current[1]} is empty")
            blocks.append((current[0], current[1], body))

    for line in path.read_text(encoding="utf-8").splitlines():
        header = _HEADER.match(line.strip())
        if header:
            flush()
            current, lines = (header.group(1), header.group(2)), []
        elif current is not None:
            lines.append(line)
        elif line.strip() and not line.lstrip().startswith("//"):
            raise ValueError(f"{path.name}: text before the first '// name:' line")
    flush()
    return blocks


def load_statements(directory: Path = CYPHER_DIR) -> dict[str, Statement]:
    """Read every ``*.cypher`` file, expand fragments and return the statements by name."""
    fragments: dict[str, str] = {}
    raw: list[tuple[str, str, str, bool]] = []
    for path in sorted(directory.glob("*.cypher")):
        neo4j_only = path.name.endswith(".neo4j.cypher")
        for kind, name, body in _blocks(path):
            if name in fragments or any(name == r[0] for r in raw):
                raise ValueError(f"{path.name}: {name} is defined twice")
            if kind == "fragment":
                fragments[name] = body
            else:
                raw.append((name, body, path.name, neo4j_only))

    def expand(text: str, seen: tuple[str, ...] = ()) -> str:
        def include(match: re.Match[str]) -> str:
            name = match.group(1)
            if name not in fragments:
                raise ValueError(f"unknown fragment {{{{ {name} }}}}")
            if name in seen:
                raise ValueError(f"fragment {name} includes itself")
            body = expand(fragments[name], (*seen, name))
            variable = match.group(2)
            if (variable is None) != (PLACEHOLDER not in body):
                raise ValueError(f"fragment {name} {'needs' if variable is None else 'takes no'} a variable")
            return body.replace(PLACEHOLDER, variable) if variable else body

        return _INCLUDE.sub(include, text)

    statements: dict[str, Statement] = {}
    for name, body, source, neo4j_only in raw:
        text = expand(body)
        if text.upper().startswith("CYPHER "):
            raise ValueError(f"{source}: {name} must not carry a CYPHER prefix (the dialect adds it)")
        statements[name] = Statement(name, text, source, neo4j_only)
    return statements


@cache
def statements() -> dict[str, Statement]:
    """The process-wide statement set, read once."""
    return load_statements()


def load_sql(name: str, directory: Path = CYPHER_DIR) -> list[str]:
    """Read a ``.sql`` file of the bundled engine: one command per line, ``--`` comments."""
    lines = (directory / name).read_text(encoding="utf-8").splitlines()
    return [line.strip() for line in lines if line.strip() and not line.strip().startswith("--")]
