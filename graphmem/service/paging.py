"""Keyset walks over lists of memories, facts and entities in one or more namespaces, one rule for all of
them: a walk is pinned to its first page's time (``as_of``), so pages stay stable while items are added; its
cursor is signed and bound to the namespaces, the view, the conditions and the order it was made for, and
carries the last row's sort key, from which the next page's statement starts."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from enum import StrEnum
from typing import Any, Generic, Protocol, TypeVar

from pydantic import BaseModel

from graphmem.cursors import Cursors, digest, mismatch
from graphmem.model import DocumentWhere, EntityWhere, FactWhere, View
from graphmem.store.driver import GraphStore, Tx
from graphmem.store.names import StatementName
from graphmem.store.views import path_params, view_params, where_params

Item = TypeVar("Item")


class _WalkCursor(BaseModel):
    ns: str  # digest of the namespaces read
    request: str  # digest of the view, conditions and order as requested
    as_of: int  # the pinned time of the walk
    key: dict[str, str | int]  # the last row's sort key (the statement's $after_* parameters)


@dataclass(frozen=True)
class Walk:
    """Where a page of a walk starts: its pinned view and the previous page's last key (None: first page)."""

    purpose: str
    namespaces: str  # their digest
    request: str
    view: View
    after: dict[str, str | int] | None

    def after_params(self, names: tuple[str, ...]) -> dict[str, Any]:
        """The statement's ``$after_<name>`` parameters (all null on the first page)."""
        return {f"after_{name}": self.after.get(name) if self.after else None for name in names}

    def cursor(self, cursors: Cursors, key: dict[str, str | int]) -> str:
        """The cursor of the page that starts after the row with this sort key."""
        assert self.view.as_of is not None
        return cursors.seal(self.purpose, _WalkCursor(ns=self.namespaces, request=self.request,
                                                      as_of=self.view.as_of, key=key))

    def cursors(self, cursors: Cursors, keys: list[dict[str, str | int]], more: bool,
                each: bool) -> tuple[str | None, list[str] | None]:
        """(the next page's cursor, None on the last page; with ``each``, the cursor after every row)."""
        after_each = [self.cursor(cursors, key) for key in keys] if each else None
        if not keys or not more:
            return None, after_each
        return (after_each[-1] if after_each else self.cursor(cursors, keys[-1])), after_each


def walk(cursors: Cursors, purpose: str, namespaces: list[str], view: View, request: dict[str, Any],
         cursor: str | None, now: int) -> Walk:
    """The walk a page belongs to: a new one pinned at the view's time (or now), or the cursor's."""
    request_digest = digest({"view": view.model_dump(), **request})
    read = digest(sorted(namespaces))
    if cursor is None:
        as_of = view.as_of if view.as_of is not None else now
        return Walk(purpose, read, request_digest, view.model_copy(update={"as_of": as_of}), None)
    state = cursors.open(purpose, cursor, _WalkCursor)
    if state.ns != read or state.request != request_digest:
        raise mismatch()
    return Walk(purpose, read, request_digest, view.model_copy(update={"as_of": state.as_of}), state.key)


class ListOptions(Protocol):
    """What every list's options have (``DocumentListOptions``, ``FactListOptions``, ``EntityListOptions``)."""

    @property
    def limit(self) -> int: ...
    @property
    def cursor(self) -> str | None: ...
    @property
    def view(self) -> View: ...
    @property
    def path(self) -> str | None: ...
    @property
    def where(self) -> DocumentWhere | FactWhere | EntityWhere: ...
    @property
    def sort(self) -> StrEnum: ...
    @property
    def item_cursors(self) -> bool: ...


@dataclass(frozen=True)
class Listing(Generic[Item]):
    """One kind of list: its cursor purpose, its count statement, the keyset statement of each order, the
    sort key names (the statements' ``$after_*``), and how a row becomes an item and an item its key."""

    purpose: str
    count: StatementName
    pages: Mapping[StrEnum, StatementName]
    key_names: tuple[str, ...]
    item: Callable[[dict[str, Any]], Item]
    key: Callable[[Item], dict[str, str | int]]


@dataclass(frozen=True)
class Page(Generic[Item]):
    items: list[Item]
    total: int
    next_cursor: str | None
    cursors: list[str] | None


def read_page(store: GraphStore, cursors: Cursors, now: int, listing: Listing[Item], namespaces: list[str],
              options: ListOptions, **extra: Any) -> Page[Item]:
    """A page of ``listing`` in ``namespaces`` (already checked readable) under ``options`` (already checked),
    in one read transaction: the total of the view and conditions, then the page from the walk's key. Across
    namespaces it is one list in one order, not a list per namespace."""
    page_walk = walk(cursors, listing.purpose, namespaces, options.view,
                     {"path": options.path, "where": options.where.model_dump(), "sort": options.sort.value},
                     options.cursor, now)
    params = {"namespaces": namespaces, **path_params(options.path), **where_params(options.where),
              **view_params(page_walk.view)}

    def read(tx: Tx) -> Page[Item]:
        total = tx.single(listing.count, **params)
        rows = tx.run(listing.pages[options.sort], limit=options.limit + 1,
                      **page_walk.after_params(listing.key_names), **params, **extra)
        items = [listing.item(row) for row in rows[:options.limit]]
        next_cursor, after_each = page_walk.cursors(cursors, [listing.key(i) for i in items],
                                                    len(rows) > options.limit, options.item_cursors)
        return Page(items, int(total["total"]) if total else 0, next_cursor, after_each)

    return store.read(read)
