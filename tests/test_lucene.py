"""Lucene escaping against the real full-text index of the engine, and what its analyzer makes of words."""

from __future__ import annotations

import uuid

import neo4j
import pytest

from graphmem.runtime import Runtime
from graphmem.search.lucene import escape_lucene
from graphmem.store.dialect import SearchIndex
from graphmem.store.driver import Tx
from helpers import query

SPECIALS = [*'+-!(){}[]^"~*?:\\/', "&&", "||", "&", "|"]


def search(runtime: Runtime, ns: str, text: str) -> list[str]:
    escaped = escape_lucene(text)
    assert escaped is not None
    index = runtime.store.dialect.index_name(SearchIndex.fact_text)

    def run(tx: Tx) -> list[dict[str, object]]:
        return tx.run("index_probe_fulltext", index=index, query=escaped, k=50, limit=50, namespaces=[ns])

    return [str(r["id"]) for r in runtime.store.read(run)]


@pytest.fixture
def planted(graph: neo4j.Driver, ns: str) -> str:
    fact_id = str(uuid.uuid4())
    query(graph, "CREATE (:Fact {id: $id, namespace: $ns, text: 'zebra crossing near the quokka museum'})",
          id=fact_id, ns=ns)
    return fact_id


@pytest.mark.parametrize("special", SPECIALS)
def test_every_special_character_is_searched_as_text(runtime: Runtime, ns: str, planted: str,
                                                     special: str) -> None:
    assert search(runtime, ns, f"quokka {special} museum{special}") == [planted]
    assert search(runtime, ns, f"{special}quokka") == [planted]


@pytest.mark.parametrize("words", ["quokka AND", "OR quokka", "NOT quokka", "quokka TO museum",
                                   "AND quokka OR NOT zebra TO"])
def test_boolean_words_are_plain_words(runtime: Runtime, ns: str, planted: str, words: str) -> None:
    assert search(runtime, ns, words) == [planted]


@pytest.mark.parametrize("text", ["", "   ", "AND", "OR NOT", "TO", "((", "+-!", '"', "AND ( OR )", "*?~"])
def test_nothing_searchable_is_never_sent(text: str) -> None:
    assert escape_lucene(text) is None


def test_unbalanced_syntax_is_escaped() -> None:
    assert escape_lucene("(word") == "\\(word"
    assert escape_lucene('say "hi') == 'say \\"hi'
    assert escape_lucene("a && b || c") == "a \\&\\& b \\|\\| c"
    assert escape_lucene("x" * 5000) == "x" * 1000


# What each engine's full-text analyzer makes of text: the same on both (Neo4j's default analyzer,
# standard-no-stop-words, and the bundled engine's Lucene index). Words are lower-cased and split at spaces
# and hyphens; nothing is stemmed, folded or left out as a stop word; an address, a version, an identifier
# with underscores and CJK text stay searchable as written.
ANALYZED = {
    "Analytical engines": "analytical engines",
    "Caf\u00e9 cr\u00e8me in Z\u00fcrich": "caf\u00e9 z\u00fcrich",
    "state-of-the-art parser": "state art parser the of",
    "runners running": "runners running",
    "write to user@example.com about v1.2.3": "user@example.com v1.2.3",
    "APIRouter and snake_case_name": "apirouter snake_case_name and",
    "\u65e5\u672c\u8a9e\u306e\u30c6\u30ad\u30b9\u30c8": "\u65e5\u672c\u8a9e \u30c6\u30ad\u30b9\u30c8",
}
NOT_FOUND = ["engine", "run", "cafe", "zurich", "example", "1.2.3", "snake", "apiroute"]


def test_the_analyzer_splits_and_lower_cases_and_changes_nothing_else(runtime: Runtime, graph: neo4j.Driver,
                                                                      ns: str) -> None:
    planted = {}
    for text in ANALYZED:
        planted[text] = str(uuid.uuid4())
        query(graph, "CREATE (:Fact {id: $id, namespace: $ns, text: $t})", id=planted[text], ns=ns, t=text)
    for text, words in ANALYZED.items():
        for word in words.split():
            assert planted[text] in search(runtime, ns, word), (word, text)
    assert search(runtime, ns, "Analytical ENGINES") == [planted["Analytical engines"]]
    for word in NOT_FOUND:
        assert search(runtime, ns, word) == [], word
