"""The time views every read uses: current (default), as of a time, with forgotten or superseded items.

The predicate itself is the ``document_in_view`` fragment of ``cypher/views.cypher``; this module turns a
``View`` into that fragment's parameters, so no read path can build its own (and leak old versions).
"""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, ConfigDict, Field


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
