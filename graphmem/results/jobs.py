"""Results of the job calls: an ingestion job's state."""

from __future__ import annotations

from enum import StrEnum

from pydantic import BaseModel


class JobStatus(StrEnum):
    queued = "queued"
    running = "running"
    done = "done"
    failed = "failed"


class JobInfo(BaseModel):
    id: str
    namespace: str
    status: JobStatus
    attempts: int
    items: int
    submitted_at: int
    started_at: int | None = None
    finished_at: int | None = None
    error: str | None = None
    document_ids: list[str] | None = None
