"""Opaque, signed page cursors: the one place paging state is sealed and opened.

A cursor is a small pydantic state signed with itsdangerous (HMAC-SHA256 under a key derived per purpose:
a cursor of one kind of listing is refused by every other), so a caller can hand it back but cannot
forge or edit it. Each state names what it belongs to (namespace, a digest of the request), and the
callers check that binding when they open it.

The key is resolved once at start (``cursor_key``): ``GRAPHMEM_CURSOR_SECRET``, or a random key created
once in the data directory (mode 0600). Replicas behind one endpoint must share the secret, or one
replica's cursors are refused by another.
"""

from __future__ import annotations

import hashlib
import json
import os
import secrets
import uuid
from pathlib import Path
from typing import Any, TypeVar

from itsdangerous import BadData, URLSafeSerializer
from pydantic import BaseModel, ValidationError

from graphmem.config import Settings
from graphmem.errors import ConfigurationError, InvalidInput
from graphmem.model import MAX_CURSOR_CHARS

S = TypeVar("S", bound=BaseModel)

KEY_FILE = "cursor.key"
KEY_BYTES = 32


def digest(value: Any) -> str:
    """A short stable digest of a JSON-able value (what a cursor binds: a request's seed, caps, view...)."""
    text = json.dumps(value, sort_keys=True, separators=(",", ":"), ensure_ascii=False)
    return hashlib.sha256(text.encode()).hexdigest()[:32]


class Cursors:
    """Seal and open cursor states under one key."""

    def __init__(self, key: bytes) -> None:
        self._key = key

    def _serializer(self, purpose: str) -> URLSafeSerializer:
        return URLSafeSerializer(self._key, salt=f"graphmem-cursor:{purpose}",
                                 signer_kwargs={"digest_method": hashlib.sha256})

    def seal(self, purpose: str, state: BaseModel) -> str:
        token = self._serializer(purpose).dumps(state.model_dump(mode="json"))
        assert isinstance(token, str)
        if len(token) > MAX_CURSOR_CHARS:
            raise AssertionError(f"a {purpose} cursor grew past {MAX_CURSOR_CHARS} characters")
        return token

    def open(self, purpose: str, token: str, model: type[S]) -> S:
        """The state of a cursor this server sealed for ``purpose``, sent back exactly as sealed (base64
        decoding forgives padding; an edited token is refused even when it decodes to the same bytes);
        anything else is invalid input."""
        invalid = InvalidInput("cursor is not valid: pass the next_cursor of a page unchanged", field="cursor")
        serializer = self._serializer(purpose)
        try:
            payload = serializer.loads(token)
            state = model.model_validate(payload)
        except (BadData, ValidationError, UnicodeError):
            raise invalid from None
        if serializer.dumps(payload) != token:
            raise invalid
        return state


def mismatch() -> InvalidInput:
    """A genuine cursor sent with another request than the one it continues."""
    return InvalidInput("cursor belongs to another request: send it with the same namespace and options as "
                        "the page it came from", field="cursor")


def cursor_key(settings: Settings) -> bytes:
    """The signing key: the configured secret, else this data directory's key file, created once
    (atomically: of two processes racing, one file wins and both use it)."""
    if settings.cursor_secret is not None:
        secret = settings.cursor_secret.get_secret_value().encode()
        if len(secret) < KEY_BYTES:
            raise ConfigurationError(f"GRAPHMEM_CURSOR_SECRET must be at least {KEY_BYTES} characters")
        return secret
    path = settings.data_dir / KEY_FILE
    if not path.exists():
        _create_key(path)
    key = path.read_bytes()
    if len(key) != KEY_BYTES:
        raise ConfigurationError(f"{path} is not a {KEY_BYTES}-byte key; delete it to make a new one "
                                 "(cursors issued so far stop working)")
    return key


def _create_key(path: Path) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    draft = path.with_name(f".{path.name}.{uuid.uuid4().hex}")
    fd = os.open(draft, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    try:
        with os.fdopen(fd, "wb") as handle:
            handle.write(secrets.token_bytes(KEY_BYTES))
            handle.flush()
            os.fsync(handle.fileno())
        os.link(draft, path)  # fails if another process got there first: its key is the key
    except FileExistsError:
        pass
    finally:
        draft.unlink(missing_ok=True)
