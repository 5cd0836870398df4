"""Credentials: who may call graphmem, with which scopes, in which namespaces.

A credential has an id, a name, scopes ``read`` or ``read,write``, the namespaces it may use (a list, or
``*``: any namespace that does not start with ``_``), an ``admin`` flag (may manage credentials) and its
times. It is a node of the reserved namespace ``_system``, written through named statements.

The token (``gm_`` + 256 random bits) is shown once and stored only as its SHA-256 digest. A fast digest is
enough here: slow password hashes exist to make guessing a human's low-entropy password expensive, but a
token drawn from 2**256 values cannot be guessed at any speed, so a digest that is quick to check costs an
attacker nothing useful and keeps every request's lookup cheap.

The owner: on a store with no credential, ``graphmem serve`` and ``graphmem credentials`` create one admin
credential (``read,write``, ``*``), guarded by a unique marker in ``_system`` so two processes never make
two, and write its token to ``<data dir>/owner-token`` (mode 0600). Its path is logged, never the token.
"""

from __future__ import annotations

import hashlib
import logging
import os
import secrets
import uuid
from enum import StrEnum
from pathlib import Path
from typing import Annotated, Any

from pydantic import BaseModel, Field, model_validator

from graphmem.errors import Conflict, NotFound
from graphmem.model import MAX_NAMESPACES, Input, NamespaceOrAll, check_id
from graphmem.records import now_ms
from graphmem.store.driver import GraphStore, Tx

log = logging.getLogger(__name__)

TOKEN_PREFIX = "gm_"
OWNER_TOKEN_FILE = "owner-token"
OWNER_NAME = "owner"
MAX_CREDENTIALS = 10_000  # a listing never returns more
# The namespaces an administration is limited to (an admin of some namespaces); None: every namespace.
Within = list[str] | None
REVOKE_LOCALLY = "the operator may run `graphmem credentials revoke <id>` where the data directory is"


class Scope(StrEnum):
    read = "read"
    write = "write"


class NewCredential(Input):
    """What ``create`` needs: a name, the scopes (``read``, or ``read`` and ``write``), the namespaces (a list,
    or ``["*"]`` for any that does not start with ``_``) and whether it may manage credentials."""

    name: Annotated[str, Field(strict=True, min_length=1, max_length=100, pattern=r"^[A-Za-z0-9 ._@:-]+$")]
    scopes: Annotated[list[Scope], Field(min_length=1, max_length=2)]
    namespaces: Annotated[list[NamespaceOrAll], Field(min_length=1, max_length=MAX_NAMESPACES)]
    admin: bool = False

    @model_validator(mode="after")
    def _consistent(self) -> NewCredential:
        if Scope.write in self.scopes and Scope.read not in self.scopes:
            raise ValueError("a credential that may write may also read: scopes are read, or read,write")
        if "*" in self.namespaces and len(self.namespaces) > 1:
            raise ValueError("namespaces are '*' alone, or a list of names")
        return self


class Credential(BaseModel):
    """A credential as listed: never a token or a digest."""

    id: str
    name: str
    scopes: list[Scope]
    namespaces: list[str] = Field(description="the names it may use; empty when all_namespaces")
    all_namespaces: bool = Field(description="'*': any namespace that does not start with '_'")
    admin: bool
    created_at: int
    last_used_at: int | None = None
    revoked_at: int | None = None

    @property
    def can_write(self) -> bool:
        return Scope.write in self.scopes

    @property
    def revoked(self) -> bool:
        return self.revoked_at is not None


def new_token() -> str:
    return TOKEN_PREFIX + secrets.token_urlsafe(32)  # 32 random bytes: 256 bits


def digest(token: str) -> str:
    return hashlib.sha256(token.encode("utf-8", "surrogatepass")).hexdigest()


class CredentialStore:
    """Credential records through named statements (the identity module's only storage)."""

    def __init__(self, store: GraphStore) -> None:
        self.store = store

    def create(self, new: NewCredential, credential_id: str | None = None) -> tuple[Credential, str]:
        """A new credential and its token (shown once)."""
        record = self._record(new, credential_id or str(uuid.uuid4()))
        token = new_token()
        row = self.store.write(lambda tx: tx.single("credential_create",
                                                    credential={**record, "token_digest": digest(token)}))
        assert row is not None
        return Credential.model_validate(row["credential"]), token

    def by_token(self, token: str) -> Credential | None:
        row = self.store.read(lambda tx: tx.single("credential_by_digest", digest=digest(token)))
        return Credential.model_validate(row["credential"]) if row else None

    def list(self, within: Within) -> list[Credential]:
        """Every credential, or (``within``) those whose namespaces all lie inside that list."""
        rows = self.store.read(lambda tx: tx.run("credentials_list", limit=MAX_CREDENTIALS, within=within))
        return [Credential.model_validate(row["credential"]) for row in rows]

    def revoke(self, credential_id: str, within: Within, guarded: bool) -> Credential:
        """Revoke a credential (``within``: only one whose namespaces lie inside that list; any other is not
        found). ``guarded``: the owner and the last live writing admin over every namespace are refused, so a
        credential cannot lock every credential out of administration; the local operator's own revocations
        are not guarded."""
        checked = check_id(credential_id)

        def revoke(tx: Tx) -> Credential:
            now = now_ms()
            if guarded:
                tx.run("credential_admins_turn", now=now)
            target = tx.single("credential_revoke_target", id=checked, within=within)
            if target is None:
                raise NotFound(f"no credential with id {checked!r}", id=checked)
            found = Credential.model_validate(target["credential"])
            if guarded and not found.revoked:
                if target["is_owner"]:
                    raise Conflict("the owner credential cannot be revoked over the API", next_step=REVOKE_LOCALLY)
                if found.admin and found.all_namespaces and found.can_write and not target["other_admins"]:
                    raise Conflict("this is the last live admin credential over every namespace that may write",
                                   next_step="create another admin credential over every namespace first; "
                                             + REVOKE_LOCALLY)
            row = tx.single("credential_revoke", id=checked, now=now)
            assert row is not None
            return Credential.model_validate(row["credential"])

        return self.store.write(revoke)

    def touch(self, credential_id: str) -> None:
        self.store.write(lambda tx: tx.run("credential_touch", id=credential_id, now=now_ms()))

    def ensure_owner(self, data_dir: Path) -> Path | None:
        """On a store with no credential, make the owner credential once and write its token to the data
        directory (0600). Returns the file's path when this call made it."""
        if self.store.read(lambda tx: tx.single("credentials_count"))["total"]:  # type: ignore[index]
            return None
        new = NewCredential(name=OWNER_NAME, scopes=[Scope.read, Scope.write], namespaces=["*"], admin=True)
        credential_id = str(uuid.uuid4())
        token = new_token()

        def claim(tx: Tx) -> bool:
            row = tx.single("owner_marker_claim", credential_id=credential_id, now=now_ms())
            if not row or not row["claimed"]:
                return False  # another process made the owner (or one was made, and revoked, before)
            tx.run("credential_create",
                   credential={**self._record(new, credential_id), "token_digest": digest(token)})
            return True

        if not self.store.write(claim):
            return None
        path = data_dir / OWNER_TOKEN_FILE
        _write_secret(path, token + "\n")
        log.warning("created the owner credential (admin, read,write, every namespace); its token is in %s", path)
        return path

    @staticmethod
    def _record(new: NewCredential, credential_id: str) -> dict[str, Any]:
        everything = new.namespaces == ["*"]
        return {"id": credential_id, "namespace": "_system", "name": new.name,
                "scopes": sorted(scope.value for scope in new.scopes), "namespaces": [] if everything else
                sorted(set(new.namespaces)), "all_namespaces": everything, "admin": new.admin,
                "created_at": now_ms()}


def _write_secret(path: Path, text: str) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    with os.fdopen(fd, "w", encoding="utf-8") as handle:
        handle.write(text)
    os.chmod(path, 0o600)
