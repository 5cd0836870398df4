"""What a memory version is made of, as the maps the UNWIND statements write, and the keys that make
writes retry-safe. Pure functions: no I/O, no clock of their own.
"""

from __future__ import annotations

import hashlib
import json
import time
import uuid
from typing import Any


def now_ms() -> int:
    """The clock: epoch milliseconds UTC (every time graphmem stores is one of these)."""
    return time.time_ns() // 1_000_000


def request_key(namespace: str, request_id: str) -> str:
    """The uniqueness key of a caller's request id: request ids are per namespace."""
    return f"{namespace}|{request_id}"


def content_hash(namespace: str, content: str) -> str:
    """Identity of a text within a namespace: white space is folded, so re-sent text matches."""
    normalised = " ".join(content.split())
    return hashlib.sha256(f"{namespace}\n{normalised}".encode()).hexdigest()


def request_hash(payload: dict[str, Any]) -> str:
    """What a request asked for; the same request_id with another hash is a different request."""
    return hashlib.sha256(json.dumps(payload, sort_keys=True, ensure_ascii=False).encode()).hexdigest()


def tombstone_key(key: str) -> str:
    """The key of the content-free marker a hard delete leaves for a request key that created it."""
    return f"deleted|{key}"


def document_record(*, now: int, namespace: str, content: str, digest: str, chain_id: str | None,
                    version: int, created_at: int | None, title: str | None, source: str | None,
                    metadata: str | None, path: str | None, request_key: str | None, request_hash: str | None,
                    fact_count: int) -> dict[str, Any]:
    """The Document node of one version, as the map ``documents_create`` writes.

    ``current_hash_key`` (unique) is the content hash while the version is current (latest, not
    forgotten): two identical current memories cannot exist in a namespace, even under a race.
    """
    doc_id = str(uuid.uuid4())
    chain = chain_id or doc_id
    document = {
        "id": doc_id, "namespace": namespace, "chain_id": chain, "version": version,
        "version_key": f"{chain}|{version}", "is_latest": True, "is_forgotten": False,
        "is_redacted": False, "title": title, "source": source, "metadata": metadata, "path": path,
        "content": content, "content_hash": digest, "current_hash_key": digest,
        "request_key": request_key, "request_hash": request_hash, "fact_count": fact_count,
        "created_at": created_at if created_at is not None else now, "recorded_at": now,
    }
    return {k: v for k, v in document.items() if v is not None}
