"""The time views and search filters as statement parameters.

The predicates themselves are the ``in_view`` and ``fact_filters`` fragments of ``cypher/views.cypher``;
this module turns a ``View`` and ``SearchFilters`` (``graphmem/model.py``) into those fragments'
parameters, so no read path can build its own (and leak old versions).
"""

from __future__ import annotations

from typing import Any

from graphmem.model import NO_FILTERS, DocumentWhere, EntityWhere, FactWhere, SearchFilters, View


def view_params(view: View) -> dict[str, Any]:
    return {
        "view_as_of": view.as_of,
        "view_include_forgotten": view.include_forgotten,
        "view_include_superseded": view.include_superseded,
    }


def filter_params(filters: SearchFilters = NO_FILTERS) -> dict[str, Any]:
    """The ``fact_filters`` parameters (only the filters of a model that extends them)."""
    params = {f"filter_{name}": getattr(filters, name) for name in SearchFilters.model_fields if name != "path"}
    return {**params, **path_params(filters.path)}


def path_params(path: str | None) -> dict[str, Any]:
    """The ``path_filter`` parameters of a path filter: exact, a prefix written ``a/b%``, or ``%`` (none)."""
    if path is None or path == "%":
        return {"filter_path": None, "filter_path_prefix": None, "filter_path_below": None}
    if path.endswith("%"):
        return {"filter_path": None, "filter_path_prefix": path[:-1], "filter_path_below": path[:-1] + "/"}
    return {"filter_path": path, "filter_path_prefix": None, "filter_path_below": None}


def where_params(where: DocumentWhere | FactWhere | EntityWhere) -> dict[str, Any]:
    """The parameters of a list's conditions (the ``document_where``, ``fact_where`` and ``entity_where``
    fragments): one per condition, null when not asked."""
    return {f"where_{name}": value for name, value in where.model_dump().items()}
