"""Inputs of the lists (memories, facts, entities, a memory's history): page size, offset or cursor, order,
and conditions that are statement parameters."""

from __future__ import annotations

from enum import StrEnum
from typing import Annotated

from pydantic import AfterValidator, Field, model_validator

from graphmem.model.fields import (
    HARD_LIMITS,
    MAX_OFFSET,
    Cursor,
    Flag,
    Id,
    Input,
    Millis,
    PathFilter,
    Phrase,
    limited,
    within,
)
from graphmem.model.views import CURRENT, View

PageLimit = Annotated[int, Field(strict=True), within(1, HARD_LIMITS.page_size_max), limited("page_size_max", "count")]


def _offset(value: int) -> int:
    if value > MAX_OFFSET:
        raise ValueError(f"must be from 0 to {MAX_OFFSET}; page deeper with the cursor (next_cursor)")
    return value


MAX_IN = 100  # values of one "in" condition
IdList = Annotated[list[Id], Field(min_length=1, max_length=MAX_IN)]
PhraseList = Annotated[list[Phrase], Field(min_length=1, max_length=MAX_IN)]


class DocumentSort(StrEnum):
    """The orders a list of memories comes in, each with its own keyset statement."""

    newest = "newest"  # recorded time, newest first (then id)
    oldest = "oldest"  # recorded time, oldest first (then id)
    by_title = "title"  # title A-Z, untitled first (then id)


class DocumentWhere(Input):
    """Conditions on a list of memories; all must hold. Each is a parameter of the list statements (null:
    no condition), so no query text is built from them."""

    ids: IdList | None = None
    chain_id: Id | None = None
    title: Phrase | None = None
    title_contains: Phrase | None = None
    title_starts_with: Phrase | None = None
    sources: PhraseList | None = None
    recorded_after: Millis = None
    recorded_before: Millis = None


class DocumentListOptions(Input):
    """A page of a namespace's memories in ``sort`` order (newest first by default). Either ``cursor``
    (keyset paging, stable while memories are added) or ``offset`` (at most ``MAX_OFFSET``)."""

    limit: PageLimit = 20
    offset: Annotated[int, Field(strict=True, ge=0), AfterValidator(_offset)] = 0
    cursor: Cursor = None
    view: View = CURRENT
    path: PathFilter | None = None
    where: DocumentWhere = DocumentWhere()
    sort: DocumentSort = DocumentSort.newest
    item_cursors: Flag = Field(False, description="a cursor after each item too (a GraphQL edge's)")

    @model_validator(mode="after")
    def _one_way(self) -> DocumentListOptions:
        if self.cursor is not None and self.offset:
            raise ValueError("give either a cursor or an offset, not both")
        return self


class FactSort(StrEnum):
    """The orders a list of facts comes in, each with its own keyset statement."""

    newest = "newest"  # recorded time, newest first (then id)
    oldest = "oldest"  # recorded time, oldest first (then id)


class FactWhere(Input):
    """Conditions on a list of facts; all must hold (each a parameter of the list statements)."""

    memory_ids: IdList | None = None
    entity_id: Id | None = Field(None, description="facts that mention it")
    text_contains: Phrase | None = None
    kinds: Annotated[list[Annotated[str, Field(strict=True, max_length=20)]], Field(min_length=1, max_length=10)] \
        | None = None
    recorded_after: Millis = None
    recorded_before: Millis = None


class KeysetPage(Input):
    """A page of a list by keyset ``cursor``, in a view and a folder; each list adds its conditions and orders."""

    limit: PageLimit = 20
    cursor: Cursor = None
    view: View = CURRENT
    path: PathFilter | None = None
    item_cursors: Flag = Field(False, description="a cursor after each item too (a GraphQL edge's)")


class FactListOptions(KeysetPage):
    """A page of a namespace's facts in ``sort`` order."""

    where: FactWhere = FactWhere()
    sort: FactSort = FactSort.newest


class EntitySort(StrEnum):
    """The orders a list of entities comes in, each with its own keyset statement."""

    name = "name"  # name A-Z (then id)
    name_desc = "name_desc"  # name Z-A (then id)


class EntityWhere(Input):
    """Conditions on a list of entities; all must hold (each a parameter of the list statements)."""

    ids: IdList | None = None
    name: Phrase | None = None
    name_contains: Phrase | None = None
    name_starts_with: Phrase | None = None
    types: PhraseList | None = None


class EntityListOptions(KeysetPage):
    """A page of a namespace's entities (those a fact of the view mentions; with ``path``, a fact in that
    folder) in ``sort`` order."""

    where: EntityWhere = EntityWhere()
    sort: EntitySort = EntitySort.name


class HistoryOptions(Input):
    """A page of a memory's versions, newest first."""

    limit: Annotated[int, Field(strict=True), limited("history_max", "count")] = 100
    cursor: Cursor = None
