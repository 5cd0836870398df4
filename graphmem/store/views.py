"""The time views every read uses: current (default), as of a time, with forgotten or superseded items.

The predicate itself is the ``document_in_view`` fragment of ``cypher/views.cypher``; this module turns a
``View`` into that fragment's parameters, so no read path can build its own (and leak old versions).
"""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, ConfigDict, Field, model_validator


class View(BaseModel):
    """Which versions a read sees.

    * current (default): latest versions, not forgotten;
    * ``as_of=T``: versions recorded at or before T and not superseded at T (epoch ms UTC);
    * ``include_superseded``: old versions too; ``include_forgotten``: forgotten memories too.
    """

    model_config = ConfigDict(frozen=True, extra="forbid", strict=True)

    as_of: int | None = Field(None, ge=0, le=2**63 - 1)
    include_forgotten: bool = False
    include_superseded: bool = False

    def params(self) -> dict[str, Any]:
        return {
            "view_as_of": self.as_of,
            "view_include_forgotten": self.include_forgotten,
            "view_include_superseded": self.include_superseded,
        }


CURRENT = View()


class Filters(BaseModel):
    """Narrowing a search beyond the view: recorded time window (epoch ms UTC, inclusive), one entity the
    facts must mention, one document (version) they must belong to, one document source. The predicate is
    the ``fact_filters`` fragment of ``cypher/views.cypher``, applied inside every retrieval statement."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    since: int | None = Field(None, ge=0, le=2**63 - 1)
    until: int | None = Field(None, ge=0, le=2**63 - 1)
    entity_id: str | None = Field(None, min_length=1, max_length=100)
    document_id: str | None = Field(None, min_length=1, max_length=100)
    source: str | None = Field(None, min_length=1, max_length=200)

    @model_validator(mode="after")
    def _window(self) -> Filters:
        if self.since is not None and self.until is not None and self.since > self.until:
            raise ValueError("since must not be after until")
        return self

    def params(self) -> dict[str, Any]:
        """The fragment's parameters (subclasses add fields of their own; only the filters are sent)."""
        return {f"filter_{name}": getattr(self, name) for name in Filters.model_fields}


NO_FILTERS = Filters()
