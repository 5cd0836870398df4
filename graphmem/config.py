"""Settings, read once from the environment (prefix ``GRAPHMEM_``) and an optional ``.env`` file.

With no ``GRAPHMEM_NEO4J_URI`` graphmem runs on the bundled engine, which it starts itself in the data
directory. Secrets are ``SecretStr`` so they never print in logs, errors, reprs or ``/health``.
"""

from __future__ import annotations

import json
from enum import StrEnum
from pathlib import Path
from typing import Annotated

from pydantic import AfterValidator, BeforeValidator, Field, SecretStr
from pydantic_settings import BaseSettings, NoDecode, SettingsConfigDict


def _toolsets(value: list[Toolset]) -> list[Toolset]:
    if Toolset.memory in value and Toolset.neo4j_memory in value:
        raise ValueError("the memory and neo4j-memory tool sets cannot be served together: both have a "
                         "search_memories tool, with different meanings (neo4j-memory is always served alone at "
                         "/mcp/neo4j-memory; over stdio, choose one)")
    return value


def _listed(value: object) -> object:
    """A list setting from the environment: comma-separated (``a,b``) or a JSON list (``["a","b"]``)."""
    if isinstance(value, str):
        text = value.strip()
        return json.loads(text) if text.startswith("[") else [part.strip() for part in text.split(",")
                                                             if part.strip()]
    return value


Listed = Annotated[list[str], NoDecode, BeforeValidator(_listed)]


class Toolset(StrEnum):
    """The MCP tool sets (``GRAPHMEM_MCP_TOOLSETS``)."""

    memory = "memory"
    handoffs = "handoffs"
    conversation = "conversation"
    graph = "graph"
    mnemolog = "mnemolog"  # the Mnemolog seed's dotted names; off by default
    # Neo4j's memory MCP server's nine tools; always alone at /mcp/neo4j-memory, and never beside ``memory``
    # in one server, since both have a ``search_memories`` with another meaning
    neo4j_memory = "neo4j-memory"


class DialectChoice(StrEnum):
    auto = "auto"
    neo4j = "neo4j"
    arcadedb = "arcadedb"


class Limits(BaseSettings):
    """Bounds enforced at the edge. They are settings so an operator can lower them, never raise them
    past what the data model was designed for (the validators clamp to these values)."""

    model_config = SettingsConfigDict(env_prefix="GRAPHMEM_LIMIT_", extra="ignore")

    content_chars: int = Field(100_000, ge=1, le=100_000)
    title_chars: int = Field(500, ge=1, le=500)
    source_chars: int = Field(200, ge=1, le=200)
    metadata_bytes: int = Field(8192, ge=2, le=8192)
    page_size_max: int = Field(200, ge=1, le=200)
    history_max: int = Field(1000, ge=1, le=10_000)
    batch_max: int = Field(1000, ge=1, le=1000)


class EmbedderChoice(StrEnum):
    minilm = "minilm"  # sentence-transformers all-MiniLM-L6-v2 on torch (the reference)
    # The same model on onnxruntime: the default, since it is faster with the same vectors (cosine > 0.9999;
    # benchmarks/ingest.py measured 11.9 against 9.8 memories/s end to end). The model is exported from the
    # packaged weights into the data directory at first use (a few seconds, once).
    onnx = "onnx"
    onnx_int8 = "onnx-int8"  # that export quantised to int8: faster, with vectors of its own (nlp/embedder.py)
    hashing = "hashing"  # deterministic feature hashing: tests only, chosen explicitly


class EngineCollector(StrEnum):
    """The bundled engine's garbage collector (``graphmem/store/engine.py``, ``collector_options``)."""

    auto = "auto"  # the default: parallel with a heap of 4 GiB or more, G1 with less
    parallel = "parallel"  # bulk loads ran 10-13% faster than with G1 on two cores with a 4 GiB heap (two pairs)
    g1 = "g1"  # Java's own default on machines of two cores and 1.8 GB or more


class Settings(BaseSettings):
    model_config = SettingsConfigDict(env_prefix="GRAPHMEM_", env_file=".env", extra="ignore")

    # External server (Neo4j). Empty URI = use the bundled engine.
    neo4j_uri: str | None = None
    neo4j_user: str = "neo4j"
    neo4j_password: SecretStr | None = None
    neo4j_database: str = "neo4j"
    dialect: DialectChoice = DialectChoice.auto
    # Only for an external ArcadeDB server (its search-index DDL goes over HTTP, not Bolt).
    arcadedb_http_url: str | None = None

    # Bundled engine.
    data_dir: Path = Path(".graphmem")
    engine_http_port: int | None = Field(None, ge=1, le=65535, description="None = pick a free port once")
    engine_bolt_port: int | None = Field(None, ge=1, le=65535, description="None = pick a free port once")
    engine_heap: str = Field("1g", pattern=r"^[0-9]+[kKmMgG]$")
    engine_gc: EngineCollector = EngineCollector.auto
    engine_database: str = Field("graphmem", pattern=r"^[A-Za-z][A-Za-z0-9_]{0,63}$")
    engine_start_timeout_s: float = Field(90.0, gt=0)
    engine_stop_timeout_s: float = Field(20.0, gt=0)

    # Driver behaviour.
    connect_timeout_s: float = Field(2.0, gt=0, description="Bolt connect; bounds how fast 503 is reported")
    transaction_timeout_s: float = Field(30.0, gt=0)
    # Writes that meet concurrent changes to the same records are retried for this long (jittered backoff),
    # then answered 503 with Retry-After: the server's contention, not the caller's conflict.
    write_retry_budget_s: float = Field(10.0, gt=0, le=300, description="how long a write is retried")
    # Replaced by write_retry_budget_s; read only so that start-up can say it is ignored.
    write_retry_attempts: int | None = None

    # Export cursors are signed with this key. Unset: a random key kept in <data_dir>/cursor.key, which is
    # per machine, so replicas serving one endpoint must all set the same secret (32+ characters).
    cursor_secret: SecretStr | None = None
    # An export with more pages keeps its walk in the database (`_system`) this long after each page, so a
    # later page goes on from there; after it, its cursor is refused with "start again".
    export_walk_ttl_s: int = Field(900, ge=10, le=86_400, description="how long an export's walk is kept")

    # HTTP server.
    host: str = "127.0.0.1"
    port: int = Field(8420, ge=1, le=65535)
    public_url: str = Field("http://127.0.0.1:8420", description="where clients reach this server")
    cors_origins: Listed = Field(default_factory=list, description="origins allowed by CORS; none by default")
    browser_origin: Listed = Field(
        default_factory=lambda: ["http://localhost:7474", "http://127.0.0.1:7474"],
        description="Neo4j Browser's origins (comma-separated): the only origins the style and the guide "
                    "(/browser/...) answer CORS for; both spellings of the compose stack's Browser by default")
    # MCP (Streamable HTTP at /mcp, stdio with `graphmem mcp`).
    allowed_hosts: Listed = Field(default_factory=lambda: ["127.0.0.1:*", "localhost:*"],
                                  description="Host headers /mcp accepts (DNS-rebinding protection)")
    mcp_toolsets: Annotated[list[Toolset], NoDecode, BeforeValidator(_listed), AfterValidator(_toolsets)] = Field(
        default_factory=lambda: [Toolset.memory, Toolset.handoffs, Toolset.conversation, Toolset.graph], min_length=1)
    body_max_bytes: int = Field(2 * 1024 * 1024, ge=1024, description="request body cap")
    jobs_body_max_bytes: int = Field(10 * 1024 * 1024, ge=1024, description="request body cap of POST /v1/jobs")
    # GraphQL operation limits (graphmem/graphql/schema.py), each answered with a BAD_INPUT error
    graphql_max_depth: int = Field(10, ge=2, le=50, description="nesting depth of a GraphQL operation")
    graphql_max_aliases: int = Field(30, ge=1, le=1000, description="aliases in a GraphQL operation")
    graphql_max_tokens: int = Field(2000, ge=100, le=100_000, description="tokens in a GraphQL operation")

    # Identity: namespaces, credentials' rate limits (per credential, per window; 0 = off).
    default_namespace: str = Field("default", pattern=r"^[A-Za-z0-9.:-][A-Za-z0-9._:-]{0,63}$")
    rate_limit_reads: int = Field(300, ge=0, description="reads and searches per window")
    rate_limit_writes: int = Field(180, ge=0, description="writes per window")
    rate_limit_window_s: int = Field(60, ge=1)
    rate_limit_storage: str = Field("memory://", description="limits storage URI (redis://host:6379 to share)")

    # Ingestion and models.
    embedder: EmbedderChoice = EmbedderChoice.onnx
    # Two: ingestion embeds while spaCy parses, and once spaCy is done the embedder has both cores (measured on
    # 2 cores, 500 memories: 15.5 memories/s end to end with 2 onnxruntime threads that do not spin, 12.6 with 1
    # spinning thread, onnxruntime's default, and 14.1 with 2 spinning ones).
    embed_threads: int = Field(2, ge=1, le=64, description="embedder threads (torch or onnxruntime)")
    # Searches the server's warm-up runs in its largest namespace before /ready answers 200 (at most 20 s):
    # after a restart the database's first searches are slow until their paths are compiled and cached.
    warm_up_searches: int = Field(300, ge=0, le=10_000, description="searches run by the start-up warm-up")
    # Exports it runs there next (at most 10 s): they take a third off the first export (``Exporting.warm_up``).
    warm_up_exports: int = Field(20, ge=0, le=1_000, description="exports run by the start-up warm-up")
    # A call needing a model still loading (at start) waits this long for it, then is answered 503 Retry-After.
    model_wait_s: float = Field(30.0, gt=0, le=600, description="how long a call waits for a model's first load")
    entity_patterns_file: Path | None = Field(None, description="extra EntityRuler patterns (JSONL)")
    user_entity_name: str = Field("user", min_length=1, max_length=100)
    similar_entity_cosine: float = Field(0.85, gt=0, le=1, description="SIMILAR_TO link threshold")
    ingest_batch_sentences: int = Field(256, ge=8, le=4096, description="sentences per NLP batch")
    # Concurrent single remembers share one NLP pass (service/coalescing.py): those arriving within the window
    # of the first one waiting, up to the maximum. 0 adds each at once, alone.
    coalesce_window_ms: float = Field(5.0, ge=0, le=1000, description="how long a remember waits for others")
    coalesce_max: int = Field(64, ge=1, le=1000, description="memories one shared pass takes at most")

    # Durable jobs.
    jobs_enabled: bool = True
    job_lease_s: float = Field(30.0, gt=0)
    job_poll_s: float = Field(0.5, gt=0)
    job_retention_days: float = Field(7.0, gt=0)
    job_max_attempts: int = Field(3, ge=1, le=10)
    # Fault injection for the crash tests: the job worker stops dead at this point and waits to be
    # killed. Never set in production.
    fault_point: str | None = None
    # Statement coverage for the tests: each process appends the named statements it runs to a file of its own
    # in this directory (graphmem/store/statement_log.py). Never set in production.
    statement_log: Path | None = None

    limits: Limits = Field(default_factory=Limits)

    @property
    def uses_bundled_engine(self) -> bool:
        return not self.neo4j_uri

