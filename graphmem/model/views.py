"""Which versions a read sees (``View``) and how a search narrows beyond that (``SearchFilters``)."""

from __future__ import annotations

from typing import Annotated

from pydantic import ConfigDict, Field, model_validator

from graphmem.model.fields import (
    HARD_LIMITS,
    Id,
    Input,
    Millis,
    PathFilter,
)


class View(Input):
    """Which versions a read sees.

    * current (default): latest versions, not forgotten;
    * ``as_of=T``: versions recorded at or before T and not superseded at T (epoch ms UTC);
    * ``include_superseded``: old versions too; ``include_forgotten``: forgotten memories too.
    """

    model_config = ConfigDict(strict=True)

    as_of: Annotated[Millis, Field(description="read as of this time")] = None
    include_forgotten: Annotated[bool, Field(description="forgotten memories too")] = False
    include_superseded: Annotated[bool, Field(description="older versions too")] = False


CURRENT = View()


class SearchFilters(Input):
    """Narrowing a search beyond the view: recorded time window (epoch ms UTC, inclusive), one entity the
    facts must mention, one document (version) they must belong to, one document source, a folder (``path``:
    exact, or a prefix written ``a/b%``). Applied inside every retrieval statement (the ``fact_filters``
    fragment of ``cypher/views.cypher``)."""

    since: Annotated[Millis, Field(description="recorded at or after")] = None
    until: Annotated[Millis, Field(description="recorded at or before")] = None
    entity_id: Annotated[Id | None, Field(description="facts that mention this entity")] = None
    document_id: Annotated[Id | None, Field(description="facts of this memory version")] = None
    source: Annotated[Annotated[str, Field(strict=True, min_length=1, max_length=HARD_LIMITS.source_chars)] | None,
                      Field(description="memories with this source")] = None
    path: Annotated[PathFilter | None, Field(description="a folder: exact, 'a/b%' for it and below, or '%'")] = None

    @model_validator(mode="after")
    def _window(self) -> SearchFilters:
        if self.since is not None and self.until is not None and self.since > self.until:
            raise ValueError("since must not be after until")
        return self

    def filters(self) -> SearchFilters:
        """Only the filters of a model that extends them (what the statements receive)."""
        return SearchFilters(**{name: getattr(self, name) for name in SearchFilters.model_fields})


NO_FILTERS = SearchFilters()
