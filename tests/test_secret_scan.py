"""The scan the suites run over what a server said finds each kind of leak, and nothing in plain answers."""

from __future__ import annotations

from graphmem.identity.credentials import new_token
from graphmem.store.queries import load_statements
from secret_scan import leaks, statement_lines


def test_the_scan_finds_a_token_a_named_secret_and_a_statement() -> None:
    assert leaks(f'{{"error": {{"message": "bad token {new_token()}"}}}}')[0].startswith("a token")
    assert leaks("connected with password hunter2-xyz", ["hunter2-xyz"]) == ["a secret (hun…)"]
    statement = load_statements()["documents_page"].text
    assert any(found.startswith("a Cypher statement line") for found in leaks(f"failed: {statement}"))
    assert len(statement_lines()) > 100


def test_plain_answers_give_nothing_away() -> None:
    assert leaks('{"results": [{"text": "Priya Raman leads Project Falcon. MATCH day is Friday."}]}',
                 ["hunter2-xyz"]) == []
