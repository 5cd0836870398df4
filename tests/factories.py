"""Building test data through the service, one way for every test module: a memory, a new version of one.
Each returns the version the service answered with."""

from __future__ import annotations

from typing import Any

from graphmem.model import CallerContext, DocumentInput, UpdateInput
from graphmem.results import Document
from graphmem.service.memory import MemoryService


def add(service: MemoryService, ctx: CallerContext, ns: str, content: str, **fields: Any) -> Document:
    """A new memory in ``ns`` (``fields``: the rest of ``DocumentInput``)."""
    return service.add_memory(ctx, ns, DocumentInput(content=content, **fields)).document


def update(service: MemoryService, ctx: CallerContext, doc_id: str, content: str, **fields: Any) -> Document:
    """A new version of the memory ``doc_id`` (``fields``: the rest of ``UpdateInput``)."""
    return service.update_memory(ctx, doc_id, UpdateInput(content=content, **fields)).document
