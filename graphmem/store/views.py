"""The time views and search filters as statement parameters.

The predicates themselves are the ``in_view`` and ``fact_filters`` fragments of ``cypher/views.cypher``;
this module turns a ``View`` and ``SearchFilters`` (``graphmem/model.py``) into those fragments'
parameters, so no read path can build its own (and leak old versions).
"""

from __future__ import annotations

from typing import Any

from graphmem.model import NO_FILTERS, SearchFilters, View


def view_params(view: View) -> dict[str, Any]:
    return {
        "view_as_of": view.as_of,
        "view_include_forgotten": view.include_forgotten,
        "view_include_superseded": view.include_superseded,
    }


def filter_params(filters: SearchFilters = NO_FILTERS) -> dict[str, Any]:
    """The ``fact_filters`` parameters (only the filters of a model that extends them)."""
    return {f"filter_{name}": getattr(filters, name) for name in SearchFilters.model_fields}
