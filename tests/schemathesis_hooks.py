"""Schemathesis hooks for tests/test_schemathesis.py, loaded by the schemathesis process (its config's ``hooks``).

The run authenticates with the owner's token, and its stateful phase takes ids from earlier answers: left alone,
it sends ``DELETE /api/credentials/{the owner's id}``. The server refuses that with 409 (only the operator
revokes the owner), but the run must not depend on it: a case revoking the owner is never generated."""

from __future__ import annotations

import os

import schemathesis

OWNER_ID = "GRAPHMEM_SCHEMATHESIS_OWNER_ID"  # the environment variable holding the owner credential's id


@schemathesis.hook
def filter_case(context: schemathesis.HookContext, case: schemathesis.Case) -> bool:
    """Every case but the owner's revocation (hooks on cases see the ids the stateful phase put in)."""
    revokes = case.method.upper() == "DELETE" and case.operation.path == "/api/credentials/{credential_id}"
    return not (revokes and (case.path_parameters or {}).get("credential_id") == os.environ[OWNER_ID])
