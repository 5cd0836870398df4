"""The Neo4j Browser guide (``:play http://localhost:8420/browser/guide.html``): ``static/guide.html`` with
its code blocks filled from the service's guide queries (``service/guide.py``), and a first block that sets
the parameters they read."""

from __future__ import annotations

import html
import re
from functools import cache

from graphmem.export import cypher_literal
from graphmem.service.guide import GuideQueries
from graphmem.web import WEB_DIR

_MARKER = re.compile(r"<!-- (params|cypher: ([a-z_]+)) -->")


@cache
def render_guide(queries: GuideQueries) -> str:
    """The guide's HTML; every inserted text is HTML-escaped (Browser runs what the block shows)."""
    texts = dict(queries.statements)

    def fill(match: re.Match[str]) -> str:
        if match.group(1) == "params":
            values = ", ".join(f"{key}: {cypher_literal(value)}" for key, value in queries.parameters)
            return html.escape(f":params {{{values}}}")
        return html.escape(texts[match.group(2)])

    return _MARKER.sub(fill, (WEB_DIR / "static" / "guide.html").read_text(encoding="utf-8"))
