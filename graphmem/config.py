"""Settings, read once from the environment (prefix ``GRAPHMEM_``) and an optional ``.env`` file.

With no ``GRAPHMEM_NEO4J_URI`` graphmem runs on the bundled engine, which it starts itself in the data
directory. Secrets are ``SecretStr`` so they never print in logs, errors, reprs or ``/health``.
"""

from __future__ import annotations

from enum import StrEnum
from pathlib import Path

from pydantic import Field, SecretStr
from pydantic_settings import BaseSettings, SettingsConfigDict


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
    engine_database: str = Field("graphmem", pattern=r"^[A-Za-z][A-Za-z0-9_]{0,63}$")
    engine_start_timeout_s: float = Field(90.0, gt=0)
    engine_stop_timeout_s: float = Field(20.0, gt=0)

    # Driver behaviour.
    connect_timeout_s: float = Field(2.0, gt=0, description="Bolt connect; bounds how fast 503 is reported")
    transaction_timeout_s: float = Field(30.0, gt=0)
    write_retry_attempts: int = Field(12, ge=1, le=100)

    # HTTP server.
    host: str = "127.0.0.1"
    port: int = Field(8420, ge=1, le=65535)

    limits: Limits = Field(default_factory=Limits)

    @property
    def uses_bundled_engine(self) -> bool:
        return not self.neo4j_uri

