"""Per-request DataLoaders: the relationship fields of a query (``memory.facts``, ``memory.previousVersion``,
``fact.memory``) collect their keys while a level resolves and send one batched service read per namespace
and bound, never one per item. Keys carry the namespace their parent came from, so the batch is read with that
namespace's caller context: isolation stays the service's."""

from __future__ import annotations

from collections.abc import Callable, Iterable
from itertools import groupby
from typing import TYPE_CHECKING, TypeVar

from strawberry.dataloader import DataLoader

from graphmem.results import Document, FactInfo

if TYPE_CHECKING:
    from graphmem.graphql.context import GraphContext

MAX_BATCH = 500  # keys in one batched read (the service takes up to 1,000 ids)
K = TypeVar("K", bound=tuple[str, ...] | tuple[str, str, int])
V = TypeVar("V")

MemoryKey = tuple[str, str]  # (namespace, memory id)
FactsKey = tuple[str, str, int]  # (namespace, memory id, first)


class Loaders:
    def __init__(self, context: GraphContext) -> None:
        self.context = context
        self.memories = DataLoader[MemoryKey, Document | None](self._memories, max_batch_size=MAX_BATCH)
        self.facts = DataLoader[FactsKey, list[FactInfo]](self._facts, max_batch_size=MAX_BATCH)

    async def _memories(self, keys: list[MemoryKey]) -> list[Document | None]:
        found: dict[MemoryKey, Document] = {}
        for (namespace, _), group in _batches(keys, lambda key: (key[0], 0)):
            ctx, _ = self.context.scope(namespace)
            ids = [key[1] for key in group]
            documents = await self.context.call(self.context.service.get_documents, ctx, ids)
            found.update({(namespace, doc_id): doc for doc_id, doc in documents.items()})
        return [found.get(key) for key in keys]

    async def _facts(self, keys: list[FactsKey]) -> list[list[FactInfo]]:
        found: dict[FactsKey, list[FactInfo]] = {}
        for (namespace, first), group in _batches(keys, lambda key: (key[0], key[2])):
            ctx, _ = self.context.scope(namespace)
            ids = [key[1] for key in group]
            facts = await self.context.call(self.context.service.facts_of_documents, ctx, ids, first)
            found.update({(namespace, doc_id, first): items for doc_id, items in facts.items()})
        return [found.get(key, []) for key in keys]


def _batches(keys: Iterable[K], by: Callable[[K], tuple[str, int]]) -> list[tuple[tuple[str, int], list[K]]]:
    """``keys`` grouped by namespace (and bound): one service read each."""
    ordered = sorted(set(keys), key=lambda key: (by(key), key))
    return [(group_key, list(group)) for group_key, group in groupby(ordered, key=by)]
