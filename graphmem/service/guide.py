"""The Neo4j Browser guide's queries: the named statements of ``cypher/guide.cypher`` as the connected server's
dialect runs them, and the parameters they read. The statements stay in ``cypher/`` (one loader, and the Neo4j
gate checks them like every other); ``web/guide.py`` only places them in the page."""

from __future__ import annotations

from dataclasses import dataclass
from functools import cache

from graphmem.model import CURRENT
from graphmem.store.dialect import Dialect, SearchIndex
from graphmem.store.queries import statements
from graphmem.store.views import view_params

GUIDE_STATEMENTS = ("guide_memory", "guide_entity_neighbourhood", "guide_version_chains", "guide_triples",
                    "guide_relations", "guide_asserted", "guide_vector_search")

Parameter = str | int | bool | None


@dataclass(frozen=True)
class GuideQueries:
    """What the guide shows: its parameters (name, value) and its statements (name, text), in order."""

    parameters: tuple[tuple[str, Parameter], ...]
    statements: tuple[tuple[str, str], ...]


@cache
def guide_queries(dialect: Dialect, namespace: str) -> GuideQueries:
    """The namespace, the current view (an analyst may set ``view_as_of`` to epoch milliseconds to look
    back) and the vector index's name on this server; each statement as this dialect sends it."""
    parameters: dict[str, Parameter] = {"namespace": namespace, **view_params(CURRENT),
                                        "index": dialect.index_name(SearchIndex.fact_embedding)}
    named = statements()
    return GuideQueries(parameters=tuple(parameters.items()),
                        statements=tuple((name, dialect.prepare(named[name].text)) for name in GUIDE_STATEMENTS))
