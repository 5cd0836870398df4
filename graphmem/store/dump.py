"""Every named statement as one dialect sends it, as JSON (``name``, ``source``, ``text``): the input of the
Neo4j lint gate, ``python -m graphmem.store.dump neo4j | node tools/cypher-gate/lint.mjs``. The bundled
engine's side leaves out the Neo4j-only statements."""

from __future__ import annotations

import argparse
import json

from graphmem.store.dialect import ARCADEDB, NEO4J
from graphmem.store.queries import statements


def dump(dialect_name: str) -> str:
    chosen = NEO4J if dialect_name == "neo4j" else ARCADEDB
    return json.dumps([{"name": s.name, "source": s.source, "text": chosen.prepare(s.text)}
                       for s in statements().values() if chosen.is_neo4j or not s.neo4j_only], indent=1)


def main() -> None:
    parser = argparse.ArgumentParser(prog="python -m graphmem.store.dump", description=__doc__)
    parser.add_argument("dialect", nargs="?", choices=["neo4j", "arcadedb"], default="neo4j")
    print(dump(parser.parse_args().dialect))


if __name__ == "__main__":
    main()
