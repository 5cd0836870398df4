"""/v1 jobs (a batch of memories ingested in the background) and handoffs (a project's state passed on)."""

from __future__ import annotations

from typing import Annotated

from fastapi import APIRouter, Depends

from graphmem.http.access import Caller, OwnScope, ReadScope, adder, reader, writer
from graphmem.http.errors import NamedRoute, named
from graphmem.http.schemas import HandoffBody, JobAccepted, JobBody
from graphmem.model import HandoffInput, HandoffListOptions, parse
from graphmem.results import Handoff, HandoffPage, JobInfo

router = APIRouter(prefix="/v1", tags=["jobs and handoffs"], route_class=NamedRoute)
Read = Annotated[Caller, Depends(reader)]
Write = Annotated[Caller, Depends(writer)]
Add = Annotated[Caller, Depends(adder)]


@router.post("/jobs", status_code=202, response_model=JobAccepted)
@named({"items": "memories"})
def submit_job(body: JobBody, caller: Add) -> JobAccepted:
    """Queue memories; a worker ingests them once. Ask ``GET /v1/jobs/{job_id}`` how it went."""
    ctx, ns = caller.scope(body.scope)
    return JobAccepted(job_id=caller.runtime.service.submit_memories(ctx, ns, body.memories).id)


@router.get("/jobs/{job_id}", response_model=JobInfo)
@named({"id": "job_id"})
def job_status(job_id: str, caller: Read, scope: ReadScope = None) -> JobInfo:
    ctx, _ = caller.reading(scope)
    return caller.runtime.service.job_status(ctx, job_id)


@router.get("/handoffs", response_model=HandoffPage)
def list_handoffs(caller: Read, scope: OwnScope = None, limit: int = 100, cursor: str | None = None) -> HandoffPage:
    """The latest revision of each project."""
    ctx, ns = caller.scope(scope)
    return caller.runtime.service.list_handoffs(ctx, ns, parse(HandoffListOptions, {"limit": limit, "cursor": cursor}))


@router.get("/handoffs/{project:path}", response_model=Handoff)
def get_handoff(project: str, caller: Read, scope: OwnScope = None, version: int | None = None) -> Handoff:
    """The latest (or ``version``) revision of a project; version 0 with no context when it has none."""
    ctx, ns = caller.scope(scope)
    return caller.runtime.service.get_handoff(ctx, ns, project, version)


@router.post("/handoffs", response_model=Handoff)
def save_handoff(body: HandoffBody, caller: Write) -> Handoff:
    """A new revision; ``expected_version`` must be the latest (0 for the first), ``request_id`` makes it
    retry-safe. The author is the credential's name."""
    ctx, ns = caller.scope(body.scope)
    return caller.runtime.service.save_handoff(ctx, ns, HandoffInput(**body.model_dump(exclude={"scope"})))
