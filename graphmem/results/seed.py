"""The seed system's field names (``isLatest``, ``parentMemoryId``, ``totalDocuments`` ...), which its clients
read on /v1 and MCP: one table, applied as a pydantic alias generator to results shaped for those clients."""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict

SEED_NAMES = {"is_latest": "isLatest", "is_forgotten": "isForgotten", "is_inference": "isInference",
              "parent_memory_id": "parentMemoryId", "total_documents": "totalDocuments",
              "reachable_documents": "reachableDocuments", "unavailable_documents": "unavailableDocuments"}


def seed_name(name: str) -> str:
    return SEED_NAMES.get(name, name)


SEED = ConfigDict(alias_generator=seed_name, serialize_by_alias=True, validate_by_name=True)


class Seed(BaseModel):
    """A result in the seed system's names."""

    model_config = SEED
