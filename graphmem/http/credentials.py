"""/api/credentials: an admin credential lists, creates and revokes the credentials it administers (the rule is
the identity module's: ``graphmem/identity/access.py``)."""

from __future__ import annotations

from typing import Annotated

from fastapi import APIRouter, Depends

from graphmem.http.access import Caller, adder, reader, writer
from graphmem.http.schemas import CreatedCredential, CredentialBody
from graphmem.identity import Credential, NewCredential, Scope
from graphmem.model import parse

router = APIRouter(prefix="/api/credentials", tags=["credentials"])
Read = Annotated[Caller, Depends(reader)]
Write = Annotated[Caller, Depends(writer)]
Add = Annotated[Caller, Depends(adder)]


@router.get("", response_model=list[Credential])
def list_credentials(caller: Read) -> list[Credential]:
    """Every credential this admin administers (an admin limited to some namespaces: those whose namespaces lie
    inside its own), never a token or a digest."""
    return caller.identity.list(by=caller.credential)


@router.post("", status_code=201, response_model=CreatedCredential)
def create_credential(body: CredentialBody, caller: Add) -> CreatedCredential:
    """A new credential; its token is in this answer only. A credential grants only what it holds: its scopes,
    namespaces inside its own, and admin only from an admin over every namespace."""
    scopes = [Scope.read] if body.access == "read_only" else [Scope.read, Scope.write]
    new = parse(NewCredential, {"name": body.name, "scopes": scopes, "namespaces": body.namespaces,
                                "admin": body.admin})
    credential, token = caller.identity.create(new, by=caller.credential)
    return CreatedCredential(id=credential.id, token=token)


@router.delete("/{credential_id}", response_model=Credential)
def revoke_credential(credential_id: str, caller: Write) -> Credential:
    """Revoke at once in this process, within seconds in every other. The owner and the last writing admin over every
    namespace answer 409: only the operator's ``graphmem credentials revoke`` revokes them."""
    return caller.identity.revoke(credential_id, by=caller.credential)
