"""From a token and the namespace a request names to the ``CallerContext`` the service checks.

* ``authenticate``: token → credential. Lookups are cached in process for ``CACHE_S`` seconds; a revocation
  made in this process takes effect at once (its cache entries go), one made elsewhere within ``CACHE_S``.
  ``last_used_at`` is written at most once a minute per credential.
* ``reading``: for a read (search, recall, lists, entity and triple search, query exports, and reads or
  writes addressed by id): the namespace named, or, naming none, every namespace the credential may read:
  its list, or for ``*`` every namespace that holds memories or jobs (the default one when none does yet). More
  than ``MAX_NAMESPACES`` is invalid input asking for one: a read's cost grows with the namespaces it spans.
* ``context``: credential + the namespace the request names → the caller's context and the namespace the
  request addresses (a new memory, a handoff, an agent's statements: writes without an id). A ``*``
  credential may name any namespace that does not start with ``_``; a request that names none uses the
  credential's only namespace, or else the default namespace
  (``GRAPHMEM_DEFAULT_NAMESPACE``) if the credential may use it; otherwise it is invalid input that lists what
  it may name. A namespace the credential may not use is simply absent from the context, so the service's
  rules answer: reading it is *not found*, writing it is *forbidden*.
* ``charge``: one call of a kind (read or write) against the credential's rate limits.
* ``create``, ``list``, ``revoke``: administration, by an admin credential (a credential grants only what it
  holds; a read-only admin only lists; one limited to some namespaces administers only credentials inside
  them; the owner and the last writing admin over every namespace are not revoked) or by the local
  ``OPERATOR``, who is not limited. Every front end that administers credentials goes through these.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from pathlib import Path

from cachetools import TTLCache

from graphmem.errors import Forbidden, InvalidInput, Unauthenticated
from graphmem.identity.credentials import Credential, CredentialStore, NewCredential, Within
from graphmem.identity.limits import Charge, RateLimits
from graphmem.model import CallerContext, check_namespace

CACHE_S = 5.0
TOUCH_EVERY_S = 60.0
MAX_TOKEN_CHARS = 200


class Operator:
    """Whoever holds the data directory and runs ``graphmem credentials``: not bound by the grant rule."""


OPERATOR = Operator()


class Identity:
    def __init__(self, credentials: CredentialStore, limits: RateLimits, default_namespace: str,
                 every_namespace: Callable[[], list[str]]) -> None:
        self.credentials = credentials
        self.limits = limits
        self.default_namespace = default_namespace
        self._every = every_namespace  # the namespaces holding memories or jobs (MemoryService.every_namespace)
        self._cache: TTLCache[str, Credential | None] = TTLCache(maxsize=4096, ttl=CACHE_S)
        self._touched: dict[str, float] = {}
        self._lock = threading.Lock()

    def authenticate(self, token: str | None) -> Credential:
        """The live credential of ``token``; missing, unknown or revoked is ``Unauthenticated``."""
        if not token or len(token) > MAX_TOKEN_CHARS:
            raise Unauthenticated("a bearer token is required (Authorization: Bearer <token>)")
        with self._lock:
            cached = self._cache.get(token, ...)
        credential = self.credentials.by_token(token) if cached is ... else cached
        if cached is ...:
            with self._lock:
                self._cache[token] = credential
        if credential is None or credential.revoked:
            raise Unauthenticated("the token is unknown or revoked")
        self._touch(credential)
        return credential

    def served_from_memory(self, token: str | None) -> bool:
        """Would ``authenticate`` and ``charge`` answer without the database or the network (a cached
        credential, no ``last_used_at`` write due, in-memory rate limits)? Then an event loop may call them."""
        if not token or not self.limits.local:
            return False
        with self._lock:
            cached = self._cache.get(token, ...)
            if cached is ... or cached is None:
                return cached is None
            return time.monotonic() - self._touched.get(cached.id, -TOUCH_EVERY_S) < TOUCH_EVERY_S

    def _touch(self, credential: Credential) -> None:
        now = time.monotonic()
        with self._lock:
            due = now - self._touched.get(credential.id, -TOUCH_EVERY_S) >= TOUCH_EVERY_S
            if due:
                self._touched[credential.id] = now
        if due:
            self.credentials.touch(credential.id)

    def context(self, credential: Credential, namespace: str | None) -> tuple[CallerContext, str]:
        """The caller's context and the namespace the request addresses (see the module docstring)."""
        if namespace is None:
            namespace = self._default(credential)
        name = check_namespace(namespace)
        mine = [] if credential.all_namespaces else credential.namespaces
        usable = set(mine) | ({name} if credential.all_namespaces or name in mine else set())
        return CallerContext(read=frozenset(usable), write=frozenset(usable) if credential.can_write else frozenset(),
                             credential_id=credential.id, credential_name=credential.name), name

    def reading(self, credential: Credential, namespace: str | None) -> tuple[CallerContext, list[str]]:
        """The caller's context for a read and the namespaces it covers (see the module docstring)."""
        if namespace is not None:
            context, name = self.context(credential, namespace)
            return context, [name]
        # a listed credential holds at most MAX_NAMESPACES (NewCredential); '*' is bounded where it is listed
        names = (self._every() or [self.default_namespace]) if credential.all_namespaces \
            else sorted(credential.namespaces)
        usable = frozenset(names)
        return CallerContext(read=usable, write=usable if credential.can_write else frozenset(),
                             credential_id=credential.id, credential_name=credential.name), names

    def _default(self, credential: Credential) -> str:
        if not credential.all_namespaces and len(credential.namespaces) == 1:
            return credential.namespaces[0]
        if credential.all_namespaces or self.default_namespace in credential.namespaces:
            return self.default_namespace
        raise InvalidInput("name a namespace (scope): this credential may use "
                           + ", ".join(credential.namespaces), field="namespace", allowed=credential.namespaces)

    def charge(self, credential: Credential, kind: Charge) -> None:
        self.limits.charge(credential.id, kind)

    # ---- administration: an admin credential, or the local operator -------------------------------------

    def create(self, new: NewCredential, *, by: Credential | Operator) -> tuple[Credential, str]:
        """A new credential and its token. A credential grants only what it holds (``_granted``)."""
        if isinstance(by, Credential):
            _granted(by, new)
        return self.credentials.create(new)

    def list(self, *, by: Credential | Operator) -> list[Credential]:
        """Every credential the caller administers: an admin limited to some namespaces sees only those whose
        namespaces lie inside its own."""
        if isinstance(by, Credential):
            _require_admin(by)
        return self.credentials.list(within=_within(by))

    def revoke(self, credential_id: str, *, by: Credential | Operator) -> Credential:
        """Revoke a credential the caller administers (any other is not found). A credential cannot revoke the
        owner or the last live admin over every namespace (409); the local operator can."""
        if isinstance(by, Credential):
            _require_admin(by, writes=True)
        revoked = self.credentials.revoke(credential_id, within=_within(by), guarded=isinstance(by, Credential))
        with self._lock:  # at once in this process
            for token in [t for t, c in self._cache.items() if c is not None and c.id == revoked.id]:
                del self._cache[token]
        return revoked

    def ensure_owner(self, data_dir: Path) -> Path | None:
        return self.credentials.ensure_owner(data_dir)


def _require_admin(credential: Credential, writes: bool = False) -> None:
    """An admin lists credentials; creating or revoking one is a write, which a read-only admin may not make."""
    if not credential.admin:
        raise Forbidden("only an admin credential manages credentials")
    if writes and not credential.can_write:
        raise Forbidden("this admin credential is read-only: it lists credentials, and creates or revokes none")


def _granted(by: Credential, new: NewCredential) -> None:
    """A credential grants only what it holds: scopes it has, namespaces inside its own (``*`` only from a
    ``*`` credential), and ``admin`` only from an admin over every namespace. Otherwise ``Forbidden``, naming
    what it lacks."""
    _require_admin(by, writes=True)
    missing = sorted(scope.value for scope in set(new.scopes) - set(by.scopes))
    if missing:
        raise Forbidden(f"this credential cannot grant the scope {', '.join(missing)}: it does not hold it",
                        field="scopes")
    if not by.all_namespaces:
        outside = sorted(set(new.namespaces) - set(by.namespaces))
        if outside:
            raise Forbidden(f"this credential cannot grant the namespaces {', '.join(outside)}: it may use only "
                            + ", ".join(by.namespaces), field="namespaces")
    if new.admin and not by.all_namespaces:
        raise Forbidden("only an admin over every namespace ('*') can grant admin", field="admin")


def _within(by: Credential | Operator) -> Within:
    """The namespaces a caller's administration is limited to; None for every namespace."""
    if isinstance(by, Operator) or by.all_namespaces:
        return None
    return by.namespaces
