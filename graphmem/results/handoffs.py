"""Results of the handoff calls: a project's handoff revisions."""

from __future__ import annotations

from pydantic import BaseModel, Field


class HandoffContext(BaseModel):
    goal: str
    summary: str
    decisions: list[str]
    next_steps: list[str]
    references: list[str]


class Handoff(BaseModel):
    """A revision of a project's handoff; ``version`` 0 with no context when the project has none yet."""

    project: str
    version: int
    context: HandoffContext | None = None
    author: str | None = Field(None, description="the credential that saved it, or 'local'")
    created_at: int | None = None
    id: str | None = None


class HandoffPage(BaseModel):
    items: list[Handoff] = Field(description="the latest revision of each project, by project name")
    next_cursor: str | None = None
