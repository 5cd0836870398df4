"""Lucene escaping against the real full-text index of the bundled engine."""

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
