"""Inputs of the memory calls: a new memory, an exchange, an update, forgetting, and reading one memory."""

from __future__ import annotations

from enum import StrEnum
from typing import Annotated

from pydantic import Field

from graphmem.model.fields import (
    HARD_LIMITS,
    INT64,
    Content,
    Flag,
    Input,
    Metadata,
    Path,
    RequestId,
    Source,
    Title,
)


class DocumentInput(Input):
    """A new memory."""

    content: Content
    title: Title = None
    source: Source = None
    metadata: Metadata = None
    path: Path | None = None
    request_id: RequestId = None


    def stamped(self, client: str, credential: str | None) -> DocumentInput:
        """This memory with where it came from in its metadata: the front end (``client``) and the
        credential's name, written over any of the caller's keys of those names."""
        metadata: dict[str, str | int | float | bool] = {**(self.metadata or {}), "client": client}
        if credential is not None:
            metadata["credential"] = credential
        return self.model_copy(update={"metadata": metadata})


EXCHANGE = "User: {user}\nAssistant: {assistant}"  # one memory: the roles stay in the text
# each side's bound follows from the one content bound: the two with their labels always fit
TURN_CHARS = (HARD_LIMITS.content_chars - len(EXCHANGE.format(user="", assistant=""))) // 2
Turn = Annotated[str, Field(min_length=1, max_length=TURN_CHARS)]


class Exchange(Input):
    """One turn of a conversation: what the user said and what the assistant answered, kept as one memory."""

    user_message: Turn
    assistant_message: Turn
    conversation_id: Annotated[str | None, Field(max_length=100)] = None

    def document(self) -> DocumentInput:
        metadata: dict[str, str | int | float | bool] = {"kind": "exchange", "roles": "user,assistant"}
        if self.conversation_id:
            metadata["conversation_id"] = self.conversation_id
        return DocumentInput(content=EXCHANGE.format(user=self.user_message, assistant=self.assistant_message),
                             metadata=metadata)


class IngestItem(Input):
    """A memory from a file or a JSONL line. ``versioned``: its source is its identity (a file), so a
    changed file becomes a new version of the current memory with that source."""

    document: DocumentInput
    versioned: Flag = False


class UpdateInput(Input):
    """A new version of a memory. ``title``, ``metadata`` and ``path`` left out (None) keep the current ones."""

    content: Content
    title: Title = None
    metadata: Metadata = None
    path: Path | None = None
    expected_version: Annotated[int | None, Field(strict=True, ge=1, le=INT64[1],
                                                  description="compare-and-swap on the latest version")] = None
    request_id: RequestId = None


class ForgetMode(StrEnum):
    soft = "soft"
    hard = "hard"
    redact = "redact"


class ForgetRequest(Input):
    mode: ForgetMode = ForgetMode.soft
    reason: Annotated[str | None, Field(strict=True, max_length=500, description="kept on the versions")] = None
    request_id: RequestId = None


class MemoryDetailOptions(Input):
    """How much of a memory's facts and entities one read returns (in position and name order)."""

    facts: Annotated[int, Field(strict=True, ge=0, le=1000)] = 200
    entities: Annotated[int, Field(strict=True, ge=0, le=1000)] = 200
