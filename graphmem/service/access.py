"""Namespace checks, applied before anything is looked up.

* a namespace the caller cannot read is ``NotFound``: it is invisible, exactly like one that does not
  exist (nothing is looked up to decide this);
* writing to a namespace the caller may only read is ``Forbidden``;
* searches and lists run in the namespaces named (each must be readable) or, naming none, in every one the
  caller's context may read (the identity module decides which those are: ``Identity.reading``).
"""

from __future__ import annotations

from graphmem.errors import Forbidden, InvalidInput, NotFound
from graphmem.model import MAX_NAMESPACES, CallerContext, check_namespace


def readable(ctx: CallerContext, namespace: object) -> str:
    name = check_namespace(namespace)
    if not ctx.can_read(name):
        raise NotFound(f"no namespace {name!r}", namespace=name)
    return name


def writable(ctx: CallerContext, namespace: object) -> str:
    name = check_namespace(namespace)
    if not ctx.can_write(name):
        raise Forbidden(f"no write access to namespace {name!r}", namespace=name)
    return name


def searchable(ctx: CallerContext, namespaces: list[str] | None) -> list[str]:
    """The namespaces a search runs in: the ones named (each readable), else every readable one."""
    if namespaces is None:
        return ctx.readable
    return sorted({readable(ctx, n) for n in namespaces})


def within_bound(names: list[str]) -> list[str]:
    """``names`` as the namespaces of a read that named none, at most ``MAX_NAMESPACES`` (a read's cost grows
    with the namespaces it spans): past that, invalid input asking for one."""
    if len(names) > MAX_NAMESPACES:
        raise InvalidInput(f"more than {MAX_NAMESPACES} namespaces may be read: name the one to read",
                           field="namespace", max=MAX_NAMESPACES)
    return names


def read_in(ctx: CallerContext, namespace: str | None) -> list[str]:
    """The namespaces a read addressed to ``namespace`` covers: that one (readable), or, for None, every
    namespace the context may read."""
    return searchable(ctx, None if namespace is None else [namespace])
