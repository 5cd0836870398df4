"""``memories``, ``facts`` and ``entities`` as Relay connections: ``first``/``after`` (the service's keyset
cursors, so a walk stays stable while memories are added), ``pageInfo``, ``totalCount``, ``where`` in the
@neo4j/graphql style over a fixed list of fields (combined by AND; each becomes one parameter of the service's
list statements, so no query text is built: there is no OR or NOT) and ``sort``, an enum whose every value
has its own keyset statement."""

from __future__ import annotations

from datetime import datetime
from enum import Enum
from typing import Annotated, Any

import strawberry

from graphmem.errors import InvalidInput, Names
from graphmem.graphql.context import Info
from graphmem.graphql.errors import ArgumentNames
from graphmem.graphql.inputs import PAGE, VIEW, PathMatch, millis, present, view_values
from graphmem.graphql.types import Entity, Fact, Memory
from graphmem.model import (
    OWN_NAMESPACE,
    READ_NAMESPACE,
    DocumentListOptions,
    DocumentSort,
    EntityListOptions,
    EntitySort,
    FactListOptions,
    FactSort,
)
from graphmem.model import parse as parse_input

Namespace = Annotated[str | None, strawberry.argument(description=READ_NAMESPACE)]
OwnNamespace = Annotated[str | None, strawberry.argument(description=OWN_NAMESPACE)]
# the service's list options as a connection's arguments: its conditions are where's fields (camelCase aside)
LISTED: Names = {**PAGE, **VIEW, "path": "where.path"}
RECORDED: Names = {"where.recorded_before": "where.recordedAt.lt", "where.recorded_after": "where.recordedAt.gt"}


@strawberry.input(description="equal to one value, or to one of a list")
class IDFilter:
    eq: strawberry.ID | None = None
    in_: list[strawberry.ID] | None = strawberry.field(default=None, name="in")

    def values(self, field: str) -> list[str] | None:
        return _one_of(field, self.eq, self.in_)


@strawberry.input(description="equal to one value, or to one of a list")
class StringInFilter:
    eq: str | None = None
    in_: list[str] | None = strawberry.field(default=None, name="in")

    def values(self, field: str) -> list[str] | None:
        return _one_of(field, self.eq, self.in_)


@strawberry.input(description="equal, containing, or starting with (case-sensitive)")
class StringFilter:
    eq: str | None = None
    contains: str | None = None
    starts_with: str | None = None


@strawberry.input(description="containing (case-sensitive)")
class ContainsFilter:
    contains: str | None = None


@strawberry.input(description="before (lt) and/or after (gt)")
class DateTimeFilter:
    lt: datetime | None = None
    gt: datetime | None = None


def _one_of(field: str, eq: Any, values: list[Any] | None) -> list[str] | None:
    if eq is not None and values is not None:
        raise InvalidInput(f"{field}: give eq or in, not both", field=field)
    return [str(eq)] if eq is not None else [str(v) for v in values] if values is not None else None


@strawberry.input(description="conditions on memories, all of which must hold")
class MemoryWhere:
    id: IDFilter | None = None
    chain_id: IDFilter | None = strawberry.field(default=None, description="eq only")
    title: StringFilter | None = None
    source: StringInFilter | None = None
    path: PathMatch | None = None
    recorded_at: DateTimeFilter | None = None


@strawberry.input(description="conditions on facts, all of which must hold")
class FactWhere:
    memory_id: IDFilter | None = None
    entity_id: IDFilter | None = strawberry.field(default=None, description="facts that mention it (eq only)")
    text: ContainsFilter | None = None
    kind: StringInFilter | None = strawberry.field(
        default=None, description="sentence, item, field or table (code, html, meta: stored by an older version)")
    path: PathMatch | None = None
    recorded_at: DateTimeFilter | None = None


@strawberry.input(description="conditions on entities, all of which must hold")
class EntityWhere:
    id: IDFilter | None = None
    name: StringFilter | None = None
    type: StringInFilter | None = None
    path: PathMatch | None = strawberry.field(default=None, description="mentioned by a fact in this folder")


def _eq_only(field: str, condition: IDFilter | None) -> str | None:
    values = condition.values(field) if condition else None
    if values is not None and (condition is None or condition.in_ is not None):
        raise InvalidInput(f"{field}: only eq is supported", field=field)
    return values[0] if values else None


@strawberry.enum(description="the order of memories")
class MemorySort(Enum):
    RECORDED_AT_DESC = DocumentSort.newest
    RECORDED_AT_ASC = DocumentSort.oldest
    TITLE_ASC = DocumentSort.by_title


@strawberry.enum(description="the order of facts")
class FactSortType(Enum):
    RECORDED_AT_DESC = FactSort.newest
    RECORDED_AT_ASC = FactSort.oldest


@strawberry.enum(description="the order of entities")
class EntitySortType(Enum):
    NAME_ASC = EntitySort.name
    NAME_DESC = EntitySort.name_desc


@strawberry.type
class PageInfo:
    end_cursor: str | None = strawberry.field(description="pass it as after for the next page")
    has_next_page: bool


@strawberry.type
class MemoryEdge:
    cursor: str
    node: Memory


@strawberry.type
class MemoryConnection:
    edges: list[MemoryEdge]
    page_info: PageInfo
    total_count: int = strawberry.field(description="memories in the namespace, view and conditions")


@strawberry.type
class FactEdge:
    cursor: str
    node: Fact


@strawberry.type
class FactConnection:
    edges: list[FactEdge]
    page_info: PageInfo
    total_count: int = strawberry.field(description="facts in the namespace, view and conditions")


@strawberry.type
class EntityEdge:
    cursor: str
    node: Entity


@strawberry.type
class EntityConnection:
    edges: list[EntityEdge]
    page_info: PageInfo
    total_count: int = strawberry.field(description="entities in the namespace, view and conditions")


def _page_info(next_cursor: str | None) -> PageInfo:
    return PageInfo(end_cursor=next_cursor, has_next_page=next_cursor is not None)


@strawberry.type
class Connections:
    """The list queries, mixed into ``Query``."""

    @strawberry.field(description="memories, a page at a time (first: 1-200)", extensions=[
        ArgumentNames({**LISTED, **RECORDED, "where.ids": "where.id", "where.title": "where.title.eq",
                       "where.title_contains": "where.title.contains",
                       "where.title_starts_with": "where.title.startsWith", "where.sources": "where.source"})])
    async def memories(self, info: Info, first: int = 20, after: str | None = None, where: MemoryWhere | None = None,
                       sort: MemorySort = MemorySort.RECORDED_AT_DESC, as_of: datetime | None = None,
                       include_superseded: bool = False, include_forgotten: bool = False,
                       namespace: Namespace = None) -> MemoryConnection:
        ctx, _ = info.context.reading(namespace)
        w = where or MemoryWhere()
        options = parse_input(DocumentListOptions, present({
            "limit": first, "cursor": after, "sort": sort.value, "item_cursors": True,
            "view": view_values(as_of, include_superseded, include_forgotten),
            "path": w.path.value() if w.path else None,
            "where": present({
                "ids": w.id.values("id") if w.id else None, "chain_id": _eq_only("chainId", w.chain_id),
                "title": w.title.eq if w.title else None,
                "title_contains": w.title.contains if w.title else None,
                "title_starts_with": w.title.starts_with if w.title else None,
                "sources": w.source.values("source") if w.source else None,
                "recorded_before": millis(w.recorded_at.lt) if w.recorded_at else None,
                "recorded_after": millis(w.recorded_at.gt) if w.recorded_at else None})}),
            info.context.runtime.settings.limits)
        page = await info.context.call(info.context.service.list_memories, ctx, namespace, options)
        return MemoryConnection(edges=[MemoryEdge(cursor=cursor, node=Memory.from_result(item))
                                       for item, cursor in zip(page.items, page.cursors or [], strict=True)],
                                page_info=_page_info(page.next_cursor), total_count=page.total)

    @strawberry.field(description="facts, a page at a time (first: 1-200)", extensions=[
        ArgumentNames({**LISTED, **RECORDED, "where.memory_ids": "where.memoryId",
                       "where.text_contains": "where.text.contains", "where.kinds": "where.kind"})])
    async def facts(self, info: Info, first: int = 20, after: str | None = None, where: FactWhere | None = None,
                    sort: FactSortType = FactSortType.RECORDED_AT_DESC, as_of: datetime | None = None,
                    include_superseded: bool = False, include_forgotten: bool = False,
                    namespace: Namespace = None) -> FactConnection:
        ctx, _ = info.context.reading(namespace)
        w = where or FactWhere()
        options = parse_input(FactListOptions, present({
            "limit": first, "cursor": after, "sort": sort.value, "item_cursors": True,
            "view": view_values(as_of, include_superseded, include_forgotten),
            "path": w.path.value() if w.path else None,
            "where": present({
                "memory_ids": w.memory_id.values("memoryId") if w.memory_id else None,
                "entity_id": _eq_only("entityId", w.entity_id),
                "text_contains": w.text.contains if w.text else None,
                "kinds": w.kind.values("kind") if w.kind else None,
                "recorded_before": millis(w.recorded_at.lt) if w.recorded_at else None,
                "recorded_after": millis(w.recorded_at.gt) if w.recorded_at else None})}),
            info.context.runtime.settings.limits)
        page = await info.context.call(info.context.service.list_facts, ctx, namespace, options)
        return FactConnection(edges=[FactEdge(cursor=cursor, node=Fact.from_record(item))
                                     for item, cursor in zip(page.items, page.cursors or [], strict=True)],
                              page_info=_page_info(page.next_cursor), total_count=page.total)

    @strawberry.field(description="entities (those a fact of the view mentions), a page at a time "
                                  "(first: 1-200)", extensions=[
        ArgumentNames({**LISTED, "where.ids": "where.id", "where.name": "where.name.eq",
                       "where.name_contains": "where.name.contains",
                       "where.name_starts_with": "where.name.startsWith", "where.types": "where.type"})])
    async def entities(self, info: Info, first: int = 20, after: str | None = None,
                       where: EntityWhere | None = None, sort: EntitySortType = EntitySortType.NAME_ASC,
                       as_of: datetime | None = None, include_superseded: bool = False,
                       include_forgotten: bool = False, namespace: Namespace = None) -> EntityConnection:
        ctx, _ = info.context.reading(namespace)
        w = where or EntityWhere()
        options = parse_input(EntityListOptions, present({
            "limit": first, "cursor": after, "sort": sort.value, "item_cursors": True,
            "view": view_values(as_of, include_superseded, include_forgotten),
            "path": w.path.value() if w.path else None,
            "where": present({
                "ids": w.id.values("id") if w.id else None,
                "name": w.name.eq if w.name else None,
                "name_contains": w.name.contains if w.name else None,
                "name_starts_with": w.name.starts_with if w.name else None,
                "types": w.type.values("type") if w.type else None})}),
            info.context.runtime.settings.limits)
        page = await info.context.call(info.context.service.list_entities, ctx, namespace, options)
        view = options.view
        return EntityConnection(edges=[EntityEdge(cursor=cursor, node=Entity.from_ref(item, item.namespace, view))
                                       for item, cursor in zip(page.items, page.cursors or [], strict=True)],
                                page_info=_page_info(page.next_cursor), total_count=page.total)
