"""The ``handoffs`` tool set: a project's state passed from one agent to the next (the gateway seed's tools,
bounds and messages)."""

from __future__ import annotations

from typing import Annotated

from mcp.server.mcpserver import MCPServer
from pydantic import Field

from graphmem.identity import Charge
from graphmem.mcp.calls import Calls
from graphmem.mcp.memory_tools import READ, WRITE, OwnNamespace
from graphmem.model import (
    Entries,
    ExpectedVersion,
    Goal,
    HandoffInput,
    HandoffListOptions,
    HandoffRequestId,
    Project,
    Summary,
)
from graphmem.results import Handoff, HandoffPage


def register(server: MCPServer, calls: Calls) -> None:
    @server.tool(title="List handoffs", annotations=READ, structured_output=True)
    def list_handoffs(namespace: OwnNamespace = None) -> HandoffPage:
        """The latest handoff of each project (up to 100, by project name): what to pick up where another
        agent left off."""
        return calls.run(Charge.read, namespace, lambda c: c.runtime.service.list_handoffs(
            c.context, c.own, HandoffListOptions(limit=100)))

    @server.tool(title="Get a handoff", annotations=READ, structured_output=True)
    def get_handoff(project: Project, version: Annotated[int | None, Field(ge=1)] = None,
                    namespace: OwnNamespace = None) -> Handoff:
        """A project's latest handoff (or `version`): goal, summary, decisions, next steps, references, who saved
        it. A project with none yet answers version 0 and no context: save the first with expected_version 0."""
        return calls.run(Charge.read, namespace,
                         lambda c: c.runtime.service.get_handoff(c.context, c.own, project, version))

    @server.tool(title="Save a handoff", annotations=WRITE, structured_output=True)
    def save_handoff(project: Project, goal: Goal, summary: Summary, expected_version: ExpectedVersion,
                     request_id: HandoffRequestId, decisions: Entries | None = None, next_steps: Entries | None = None,
                     references: Entries | None = None, namespace: OwnNamespace = None) -> Handoff:
        """Save a project's state for the next agent. `expected_version` is the version you read (0 for a new
        project); if someone saved since, this fails and says which version to reconcile with. Retrying with
        the same `request_id` and content returns the first save."""
        handoff = HandoffInput(project=project, goal=goal, summary=summary, expected_version=expected_version,
                               request_id=request_id, decisions=decisions or [], next_steps=next_steps or [],
                               references=references or [])
        return calls.run(Charge.write, namespace,
                         lambda c: c.runtime.service.save_handoff(c.context, c.own, handoff))
