"""/api/credentials: the owner (an admin credential) lists, creates and revokes credentials."""

from __future__ import annotations

from typing import Annotated

from fastapi import APIRouter, Depends

from graphmem.http.access import Caller, reader, writer
from graphmem.http.schemas import CreatedCredential, CredentialBody
from graphmem.identity import Credential, NewCredential, Scope
from graphmem.model import parse

router = APIRouter(prefix="/api/credentials", tags=["credentials"])
Read = Annotated[Caller, Depends(reader)]
Write = Annotated[Caller, Depends(writer)]


@router.get("", response_model=list[Credential])
def list_credentials(caller: Read) -> list[Credential]:
    """Every credential, never a token or a digest."""
    caller.identity.require_admin(caller.credential)
    return caller.identity.list()


@router.post("", status_code=201, response_model=CreatedCredential)
def create_credential(body: CredentialBody, caller: Write) -> CreatedCredential:
    """A new credential; its token is in this answer only."""
    caller.identity.require_admin(caller.credential)
    scopes = [Scope.read] if body.access == "read_only" else [Scope.read, Scope.write]
    new = parse(NewCredential, {"name": body.name, "scopes": scopes, "namespaces": body.namespaces,
                                "admin": body.admin})
    credential, token = caller.identity.create(new)
    return CreatedCredential(id=credential.id, token=token)


@router.delete("/{credential_id}", response_model=Credential)
def revoke_credential(credential_id: str, caller: Write) -> Credential:
    """Revoke at once in this process, within seconds in every other."""
    caller.identity.require_admin(caller.credential)
    return caller.identity.revoke(credential_id)
