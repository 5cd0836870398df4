"""Per-request DataLoaders: the relationship fields of a query collect their keys while a level resolves and
send one batched service read per namespace and bound (``first``), never one per item. Keys carry the
namespace their parent was read from, so each batch is read with that namespace's caller context: isolation
stays the service's."""

from __future__ import annotations

import asyncio
from asyncio import Future
from collections.abc import Awaitable, Callable, Hashable, Mapping
from typing import TYPE_CHECKING, Any, Generic, TypeVar

from strawberry.dataloader import DataLoader

from graphmem.model import CallerContext
from graphmem.results import (
    Document,
    DocumentInfo,
    EntityFact,
    EntityRef,
    EntityWithAliases,
    FactInfo,
    FactRecord,
    Neighbour,
    TripleHit,
)
from graphmem.service.memory import MemoryService

if TYPE_CHECKING:
    from graphmem.graphql.context import GraphContext

MAX_BATCH = 500  # keys in one batched read (the service takes up to 1,000 ids)
V = TypeVar("V")
Key = tuple[Any, ...]  # (namespace, id), (namespace, id, first) or (namespace, id, first, view)
Fetch = Callable[[MemoryService, CallerContext, str, list[str], tuple[Any, ...]], Mapping[str, V]]


class _Batched(Generic[V]):
    """A loader's batch function: keys grouped by (namespace, bound), one service read per group."""

    def __init__(self, context: GraphContext, fetch: Fetch[V], missing: Callable[[], V]) -> None:
        self.context = context
        self.fetch = fetch
        self.missing = missing

    async def __call__(self, keys: list[Key]) -> list[V]:
        groups: dict[tuple[Hashable, ...], list[str]] = {}
        for key in keys:
            groups.setdefault((key[0], *key[2:]), []).append(key[1])
        found: dict[Key, V] = {}
        for (namespace, *bound), ids in groups.items():
            ctx, ns = self.context.scope(str(namespace))
            values = await self.context.call(self.fetch, self.context.service, ctx, ns, ids, tuple(bound))
            found.update({(namespace, item_id, *bound): value for item_id, value in values.items()})
        return [found[key] if key in found else self.missing() for key in keys]


class SharedLoader(DataLoader[Key, V]):
    """A DataLoader whose values survive a cancelled consumer. Fields that ask for the same key share one
    cached future, and cancelling a task cancels the future it awaits: graphql-core cancels a failed field's
    siblings, so one field refused (a bound out of range) cancelled the value other fields were waiting for,
    and the request died of the CancelledError instead of answering the error."""

    def load(self, key: Key) -> Future[V]:
        return asyncio.shield(super().load(key))


class Loaders:
    """One request's loaders (a loader caches by key for the request: a memory asked for twice is read once)."""

    def __init__(self, context: GraphContext) -> None:
        def loader(fetch: Fetch[V], missing: Callable[[], V]) -> DataLoader[Key, V]:
            load: Callable[[list[Key]], Awaitable[list[V]]] = _Batched(context, fetch, missing)
            return SharedLoader(load, max_batch_size=MAX_BATCH)

        self.memories: DataLoader[Key, Document | None] = loader(
            lambda s, ctx, ns, ids, _: s.get_versions(ctx, ids), lambda: None)
        self.memory_facts: DataLoader[Key, list[FactInfo]] = loader(
            lambda s, ctx, ns, ids, b: s.facts_of_memories(ctx, ids, b[0]), list)
        self.histories: DataLoader[Key, list[DocumentInfo]] = loader(
            lambda s, ctx, ns, ids, b: s.histories(ctx, ids, b[0]), list)
        self.facts: DataLoader[Key, FactRecord | None] = loader(
            lambda s, ctx, ns, ids, _: s.get_facts(ctx, ids), lambda: None)
        self.fact_entities: DataLoader[Key, list[EntityRef]] = loader(
            lambda s, ctx, ns, ids, _: s.entities_of_facts(ctx, ids), list)
        self.fact_triples: DataLoader[Key, list[TripleHit]] = loader(
            lambda s, ctx, ns, ids, b: s.triples_of_facts(ctx, ids, b[0]), list)
        self.entities: DataLoader[Key, EntityWithAliases | None] = loader(
            lambda s, ctx, ns, ids, b: s.get_entities(ctx, ns, ids, b[0]), lambda: None)
        self.entity_facts: DataLoader[Key, list[EntityFact]] = loader(
            lambda s, ctx, ns, ids, b: s.facts_of_entities(ctx, ns, ids, b[0], b[1]), list)
        self.entity_neighbours: DataLoader[Key, list[Neighbour]] = loader(
            lambda s, ctx, ns, ids, b: s.neighbours_of_entities(ctx, ns, ids, b[0], b[1]), list)
