"""Handoffs: a project's current state, passed from one agent or person to the next.

Each save is one transaction. A retried save (same ``request_id``, same project and context) returns the
revision it made; the same ``request_id`` with another context is a conflict; an ``expected_version`` that
is not the project's latest version is a conflict that says which version to reconcile with. Concurrent
saves of one project serialise on its latest revision, and a unique ``namespace|project|version`` key makes
a fork impossible even if two first revisions race.
"""

from __future__ import annotations

import uuid
from typing import Annotated, Any

from pydantic import BaseModel, Field

from graphmem import records
from graphmem.cursors import mismatch
from graphmem.errors import Conflict, NotFound
from graphmem.model import INT64, CallerContext, HandoffInput, HandoffListOptions, Input, Project, parse
from graphmem.results import Handoff, HandoffContext, HandoffPage
from graphmem.service.access import readable, writable
from graphmem.service.shared import Core, check_same_request
from graphmem.store.driver import Tx

LOCAL_AUTHOR = "local"  # the author of a save without a credential (the local operator, stdio, tests)


class _HandoffAddress(Input):
    project: Project
    version: Annotated[int | None, Field(strict=True, ge=1, le=INT64[1])] = None


class _HandoffCursor(BaseModel):
    ns: str
    after: str


def _handoff(row: dict[str, Any]) -> Handoff:
    return Handoff(project=row["project"], version=row["version"], id=row["id"], author=row.get("author"),
                   created_at=row.get("created_at"), context=HandoffContext.model_validate(row))


class Handoffs:
    def __init__(self, core: Core) -> None:
        self.core = core

    def save(self, ctx: CallerContext, namespace: str, handoff: HandoffInput) -> Handoff:
        ns = writable(ctx, namespace)
        context = HandoffContext(goal=handoff.goal, summary=handoff.summary, decisions=handoff.decisions,
                                 next_steps=handoff.next_steps, references=handoff.references)
        request_key = f"handoff|{records.request_key(ns, handoff.request_id)}"
        request_hash = records.request_hash({"op": "handoff", "project": handoff.project,
                                             "context": context.model_dump()})
        author = ctx.credential_name or LOCAL_AUTHOR

        def write(tx: Tx) -> Handoff:
            earlier = tx.single("handoff_by_request_key", request_key=request_key, namespace=ns)
            if earlier is not None:
                check_same_request(earlier["handoff"]["request_hash"], request_hash, handoff.request_id)
                return _handoff(earlier["handoff"])
            latest = tx.single("handoff_lock_latest", project=handoff.project, namespace=ns, token=uuid.uuid4().hex)
            version = int(latest["version"]) if latest else 0
            if handoff.expected_version != version:
                raise Conflict(f"project {handoff.project!r} is at version {version}, not {handoff.expected_version}",
                               next_step=f"read the handoff, reconcile, and save with expected_version {version}",
                               latest_version=version)
            record = {"id": str(uuid.uuid4()), "namespace": ns, "project": handoff.project, "version": version + 1,
                      "handoff_key": f"{ns}|{handoff.project}|{version + 1}", "is_latest": True,
                      **context.model_dump(), "author": author, "created_at": self.core.clock(),
                      "request_key": request_key, "request_hash": request_hash}
            created = tx.single("handoff_create", handoff=record)
            assert created is not None
            if latest is not None:
                tx.run("handoff_supersede", new_id=record["id"], old_id=latest["id"], namespace=ns)
            return _handoff(created["handoff"])

        return self.core.store.write(write)

    def get(self, ctx: CallerContext, namespace: str, project: str, version: int | None = None) -> Handoff:
        """The latest (or the asked) revision; version 0 with no context when the project has none."""
        ns = readable(ctx, namespace)
        asked = parse(_HandoffAddress, {"project": project, "version": version})
        name, version = asked.project, asked.version
        row = self.core.store.read(lambda tx: tx.single("handoff_get", project=name, namespace=ns, version=version))
        if row is not None:
            return _handoff(row["handoff"])
        if version is None:
            return Handoff(project=name, version=0, context=None)
        raise NotFound(f"project {name!r} has no version {version}", project=name, version=version)

    def list(self, ctx: CallerContext, namespace: str, options: HandoffListOptions) -> HandoffPage:
        ns = readable(ctx, namespace)
        after = None
        if options.cursor is not None:
            state = self.core.cursors.open("handoffs", options.cursor, _HandoffCursor)
            if state.ns != ns:
                raise mismatch()
            after = state.after
        rows = self.core.store.read(lambda tx: tx.run("handoffs_latest", namespace=ns, after=after,
                                                      limit=options.limit + 1))
        items = [_handoff(row["handoff"]) for row in rows[:options.limit]]
        more = len(rows) > options.limit
        cursor = self.core.cursors.seal("handoffs", _HandoffCursor(ns=ns, after=items[-1].project)) if more else None
        return HandoffPage(items=items, next_cursor=cursor)
