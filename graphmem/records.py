"""What a memory version is made of, as the maps the UNWIND statements write, and the keys that make
writes retry-safe. Pure functions: no I/O, no clock of their own.
"""

from __future__ import annotations

import hashlib
import json
import time
import uuid
from typing import Any

from graphmem.ingest.split import split_sentences

SPLITTER = "sentence-rule/1"


def now_ms() -> int:
    return time.time_ns() // 1_000_000


def content_hash(namespace: str, content: str) -> str:
    """Identity of a text within a namespace: white space is folded, so re-sent text matches."""
    normalised = " ".join(content.split())
    return hashlib.sha256(f"{namespace}\n{normalised}".encode()).hexdigest()


def request_hash(payload: dict[str, Any]) -> str:
    """What a request asked for; the same request_id with another hash is a different request."""
    return hashlib.sha256(json.dumps(payload, sort_keys=True, ensure_ascii=False).encode()).hexdigest()


def tombstone_key(request_key: str) -> str:
    """The key of the content-free marker a hard delete leaves for a request key that created it."""
    return f"deleted|{request_key}"


def version_records(*, now: int, namespace: str, content: str, chain_id: str | None, version: int,
                    created_at: int | None, title: str | None, source: str | None, metadata: str | None,
                    request_key: str | None, request_hash: str | None,
                    after: int = 0) -> tuple[dict[str, Any], list[dict[str, Any]]]:
    """The Document node of one version and its sentence Facts.

    ``after``: the previous version's ``recorded_at``; a new version is always recorded later, even
    within the same millisecond, so "as of T" never sees two versions of one memory."""
    now = max(now, after + 1)
    doc_id = str(uuid.uuid4())
    chain = chain_id or doc_id
    spans = split_sentences(content)
    facts = [
        {"id": str(uuid.uuid4()), "namespace": namespace, "document_id": doc_id, "position": i,
         "text": span.text, "start": span.start, "end": span.end, "is_latest": True,
         "is_forgotten": False, "is_inference": False, "recorded_at": now, "extractor": SPLITTER}
        for i, span in enumerate(spans)
    ]
    document = {
        "id": doc_id, "namespace": namespace, "chain_id": chain, "version": version,
        "version_key": f"{chain}|{version}", "is_latest": True, "is_forgotten": False,
        "is_redacted": False, "title": title, "source": source, "metadata": metadata,
        "content": content, "content_hash": content_hash(namespace, content),
        "request_key": request_key, "request_hash": request_hash, "fact_count": len(facts),
        "created_at": created_at if created_at is not None else now, "recorded_at": now,
    }
    return {k: v for k, v in document.items() if v is not None}, facts
