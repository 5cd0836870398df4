"""The GraphQL loaders' shared values: a consumer cancelled while it waits (graphql-core cancels a failed
field's siblings) does not cancel the value other fields of the same request wait for."""

from __future__ import annotations

import asyncio

import pytest
from strawberry.dataloader import DataLoader

from graphmem.graphql.loaders import Key, SharedLoader


async def two_fields_one_cancelled(kind: type[DataLoader[Key, str]]) -> str:
    async def slow(keys: list[Key]) -> list[str]:
        await asyncio.sleep(0.05)
        return [f"value of {key[1]}" for key in keys]

    async def field(loader: DataLoader[Key, str]) -> str:
        return await loader.load(("ns", "a"))

    loader = kind(slow)
    cancelled = asyncio.create_task(field(loader))
    waiting = asyncio.create_task(field(loader))  # the same key: the same cached value
    await asyncio.sleep(0)
    cancelled.cancel()
    return await waiting


def test_a_cancelled_consumer_leaves_the_shared_value_to_the_others() -> None:
    assert asyncio.run(two_fields_one_cancelled(SharedLoader)) == "value of a"


def test_a_plain_dataloader_loses_it_which_is_why_the_loaders_are_shared() -> None:
    with pytest.raises(asyncio.CancelledError):
        asyncio.run(two_fields_one_cancelled(DataLoader))
