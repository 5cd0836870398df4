"""The Neo4j Browser guide (``:play http://localhost:8420/browser/guide.html``): ``static/guide.html`` with
its code blocks filled from the named statements of ``cypher/guide.cypher``, as the connected server's
dialect runs them, and a first block that sets the parameters they read. The statements stay in
``cypher/`` (one loader, the Neo4j gate checks them like every other); this only places them."""

from __future__ import annotations

import html
import re
from functools import cache

from graphmem.export import cypher_literal
from graphmem.model import CURRENT
from graphmem.store.dialect import Dialect, SearchIndex
from graphmem.store.queries import statements
from graphmem.store.views import view_params
from graphmem.web import WEB_DIR

GUIDE_STATEMENTS = ("guide_memory", "guide_entity_neighbourhood", "guide_version_chains", "guide_triples",
                    "guide_relations", "guide_asserted", "guide_vector_search")
_MARKER = re.compile(r"<!-- (params|cypher: ([a-z_]+)) -->")


def guide_parameters(dialect: Dialect, namespace: str) -> dict[str, str | int | bool | None]:
    """What the guide's statements read: the namespace, the current view (an analyst may set ``view_as_of``
    to epoch milliseconds to look back), and the vector index's name on this server."""
    return {"namespace": namespace, **view_params(CURRENT), "index": dialect.index_name(SearchIndex.fact_embedding)}


@cache
def render_guide(dialect: Dialect, namespace: str) -> str:
    """The guide's HTML; every inserted text is HTML-escaped (Browser runs what the block shows)."""
    named = statements()

    def fill(match: re.Match[str]) -> str:
        if match.group(1) == "params":
            values = ", ".join(f"{key}: {cypher_literal(value)}"
                               for key, value in guide_parameters(dialect, namespace).items())
            return html.escape(f":params {{{values}}}")
        return html.escape(dialect.prepare(named[match.group(2)].text))

    return _MARKER.sub(fill, (WEB_DIR / "static" / "guide.html").read_text(encoding="utf-8"))
