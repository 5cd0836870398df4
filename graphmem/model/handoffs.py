"""Inputs of the handoff calls: a project's current state passed from one agent or person to the next (the
gateway seed's contract: its bounds, its optimistic versioning, its retry keys)."""

from __future__ import annotations

import re
from typing import Annotated

from pydantic import AfterValidator, Field

from graphmem.model.fields import INT64, Cursor, Input, check_segments

PROJECT_CHARS = 100
HANDOFF_REQUEST_ID = re.compile(r"^[A-Za-z0-9._-]{8,100}$")

Project = Annotated[str, Field(strict=True, description="1-100 characters: segments of A-Z a-z 0-9 . _ - joined by "
                                                        "'/', none '.' or '..'"),
                    AfterValidator(lambda value: check_segments(value, PROJECT_CHARS))]
Goal = Annotated[str, Field(strict=True, min_length=1, max_length=8000)]
Summary = Annotated[str, Field(strict=True, max_length=20000)]
ExpectedVersion = Annotated[int, Field(strict=True, ge=0, le=INT64[1],
                                       description="the latest version the writer read; 0 for the first revision")]
HandoffRequestId = Annotated[str, Field(strict=True, pattern=HANDOFF_REQUEST_ID.pattern,
                                        description="8-100 of A-Z a-z 0-9 . _ -")]
Entry = Annotated[str, Field(strict=True, max_length=2000)]
Entries = Annotated[list[Entry], Field(max_length=30, description="at most 30 strings of at most 2,000 characters")]


class HandoffInput(Input):
    """A new revision of a project's handoff. ``expected_version`` is the latest version the writer read (0
    for the first revision): any other is a conflict. ``request_id`` makes the save retry-safe."""

    project: Project
    goal: Goal
    summary: Summary = ""
    expected_version: ExpectedVersion
    request_id: HandoffRequestId
    decisions: Entries = Field(default_factory=list)
    next_steps: Entries = Field(default_factory=list)
    references: Entries = Field(default_factory=list)


class HandoffListOptions(Input):
    """A page of a namespace's projects (their latest revisions), by project name."""

    limit: Annotated[int, Field(strict=True, ge=1, le=200)] = 100
    cursor: Cursor = None
