"""Who is calling, as the service sees it."""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict, field_validator

from graphmem.model.fields import (
    check_namespace,
)


class CallerContext(BaseModel):
    """Who is calling, reduced to what the service needs: the namespaces it may read and write, and the
    credential it came with (its name is the author of a handoff; None for the local operator).

    Built by the identity module for real callers; tests build it directly. Writing implies reading.
    """

    model_config = ConfigDict(frozen=True)

    read: frozenset[str] = frozenset()
    write: frozenset[str] = frozenset()
    credential_id: str | None = None
    credential_name: str | None = None

    @field_validator("read", "write")
    @classmethod
    def _names(cls, value: frozenset[str]) -> frozenset[str]:
        for namespace in value:
            check_namespace(namespace)
        return value

    @classmethod
    def for_namespaces(cls, *namespaces: str, writable: bool = True) -> CallerContext:
        names = frozenset(namespaces)
        return cls(read=names, write=names if writable else frozenset())

    @property
    def readable(self) -> list[str]:
        """Sorted, so the same caller sends the same query parameters."""
        return sorted(self.read | self.write)

    def can_read(self, namespace: str) -> bool:
        return namespace in self.read or namespace in self.write

    def can_write(self, namespace: str) -> bool:
        return namespace in self.write
