"""The seam between Neo4j and the bundled engine (ArcadeDB): the only place the two servers differ.

It is chosen once per connection, from the Bolt ``server_info.agent`` (or ``GRAPHMEM_DIALECT``), and it
only *chooses*: which prefix a statement gets, which named statements create the search indexes, what
the physical index names are (passed to procedures as parameters), whether ``db.awaitIndexes`` exists,
and how ``vector.similarity.cosine`` is scaled. It never edits query text.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from enum import StrEnum

from graphmem.config import DialectChoice
from graphmem.errors import ConfigurationError
from graphmem.store.names import StatementName


class SearchIndex(StrEnum):
    """Logical names of the full-text and vector indexes (one per label and property)."""

    fact_text = "fact_text"
    entity_name = "entity_name"
    chunk_text = "chunk_text"
    fact_embedding = "fact_embedding"
    entity_embedding = "entity_embedding"
    chunk_embedding = "chunk_embedding"


# label and property behind each logical index; ArcadeDB names an index ``Label[property]``.
_INDEX_TARGET: dict[SearchIndex, tuple[str, str]] = {
    SearchIndex.fact_text: ("Fact", "text"),
    SearchIndex.entity_name: ("Entity", "name"),
    SearchIndex.chunk_text: ("Chunk", "text"),
    SearchIndex.fact_embedding: ("Fact", "embedding"),
    SearchIndex.entity_embedding: ("Entity", "embedding"),
    SearchIndex.chunk_embedding: ("Chunk", "embedding"),
}

MIN_NEO4J = (5, 26)
# The bundled engine refuses a Bolt message over 16 MiB after chunk reassembly (and then misreads the rest
# of the stream as new messages). Neo4j sets no size limit on a message (its drivers' team: "there exists no
# limit on number or size of parameters"; transaction memory is what bounds it). Writes are cut into parts of
# a quarter of the smaller cap on both servers, so a statement's memory stays small on either.
ARCADEDB_MESSAGE_CAP_BYTES = 16 * 1024 * 1024
WRITE_BUDGET_BYTES = ARCADEDB_MESSAGE_CAP_BYTES // 4


@dataclass(frozen=True)
class Dialect:
    name: str  # "neo4j" or "arcadedb"

    @property
    def is_neo4j(self) -> bool:
        return self.name == "neo4j"

    @property
    def write_budget_bytes(self) -> int:
        """The most one write statement sends (``Tx.run_chunked`` cuts larger writes into parts)."""
        return WRITE_BUDGET_BYTES

    def prepare(self, text: str) -> str:
        """Neo4j 2026.02+ defaults to Cypher 25; the statements are Cypher 5. ArcadeDB rejects the prefix."""
        return f"CYPHER 5\n{text}" if self.is_neo4j else text

    def index_name(self, index: SearchIndex) -> str:
        """Physical name to pass as ``$index`` to ``db.index.*.queryNodes``."""
        if self.is_neo4j:
            return index.value
        label, prop = _INDEX_TARGET[index]
        return f"{label}[{prop}]"

    def cosine_score(self, raw: float) -> float:
        """``vector.similarity.cosine`` on a 0..1 scale, as ``db.index.vector.queryNodes`` scores are on both
        engines: Neo4j already returns (1 + cos) / 2, ArcadeDB returns the raw cosine. Clamped to 0..1, so
        the -1 the ``similarity`` fragment gives a node without an embedding reads as 0 on both."""
        return min(1.0, max(0.0, raw if self.is_neo4j else (1.0 + raw) / 2.0))

    @property
    def schema_statements(self) -> tuple[StatementName, ...]:
        """Named statements of ``schema.neo4j.cypher`` that create the search indexes (Neo4j only); the
        bundled engine's equivalents are the SQL commands of ``schema.arcadedb.sql``."""
        return NEO4J_SEARCH_INDEX_DDL if self.is_neo4j else ()

    @property
    def await_indexes_statement(self) -> StatementName | None:
        return "await_indexes" if self.is_neo4j else None


# one per SearchIndex, and the predicate index of RELATES (tests/test_schema.py checks the list is whole)
NEO4J_SEARCH_INDEX_DDL: tuple[StatementName, ...] = (
    "create_fact_text_index", "create_entity_name_index", "create_chunk_text_index", "create_fact_embedding_index",
    "create_entity_embedding_index", "create_chunk_embedding_index", "create_relates_predicate_index")
ARCADEDB_SCHEMA_SQL = "schema.arcadedb.sql"
ARCADEDB_SETTLING_SQL = "settling.arcadedb.sql"

NEO4J = Dialect("neo4j")
ARCADEDB = Dialect("arcadedb")

_NEO4J_AGENT = re.compile(r"^Neo4j/(\d+)\.(\d+)")


def detect(agent: str, choice: DialectChoice = DialectChoice.auto) -> Dialect:
    """Pick the dialect from the Bolt agent string, unless the operator forced one.

    ArcadeDB announces "Neo4j/5.26.0 compatible (ArcadeDB x.y)", so its marker is checked first; its
    ``dbms.components()`` claims to be Neo4j and cannot be used to tell them apart.
    """
    if choice is DialectChoice.neo4j:
        return NEO4J
    if choice is DialectChoice.arcadedb:
        return ARCADEDB
    if "arcadedb" in agent.lower():
        return ARCADEDB
    match = _NEO4J_AGENT.match(agent)
    if match:
        version = (int(match.group(1)), int(match.group(2)))
        if version < MIN_NEO4J:
            raise ConfigurationError(
                f"server {agent!r} is older than Neo4j 5.26, the oldest supported release"
            )
        return NEO4J
    raise ConfigurationError(
        f"unsupported graph server {agent!r}: graphmem runs on Neo4j 5.26+ or its bundled engine "
        "(set GRAPHMEM_DIALECT=neo4j|arcadedb to override the detection)"
    )
