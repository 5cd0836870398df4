"""What must never leave graphmem in an answer or a log line: a credential token, a secret the caller names (the
engine's password), or the text of a Cypher statement. Used by the suites that capture what a server said (the
attack tables, the load and fault runs). The answer of ``POST /api/credentials``, which shows a new token once
on purpose, is the caller's to leave out."""

from __future__ import annotations

import re
from collections.abc import Iterable
from functools import cache

from graphmem.store.queries import load_statements

TOKEN = re.compile(r"gm_[A-Za-z0-9_-]{43}")  # graphmem.identity.credentials.new_token: 32 random bytes
MIN_STATEMENT_LINE = 24  # a statement's lines this long are its own (shorter ones, such as "RETURN id", are words)


@cache
def statement_lines() -> frozenset[str]:
    """Every line of every named statement long enough to be that statement's, not a sentence's."""
    return frozenset(line.strip() for statement in load_statements().values()
                     for line in statement.text.splitlines() if len(line.strip()) >= MIN_STATEMENT_LINE)


def leaks(text: str, secrets: Iterable[str] = ()) -> list[str]:
    """What ``text`` gives away, each as a short description (empty: nothing)."""
    found = [f"a token ({match[:6]}…)" for match in TOKEN.findall(text)]
    found += [f"a secret ({secret[:3]}…)" for secret in secrets if secret and secret in text]
    found += [f"a Cypher statement line: {line[:40]!r}" for line in statement_lines() if line in text]
    return found
