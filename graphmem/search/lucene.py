"""Escaping user text for the full-text procedures (Lucene query syntax on both servers).

Every Lucene operator character is backslash-escaped and the boolean words AND, OR, NOT and TO are
lower-cased (Lucene only treats the upper-case forms as operators; the analyzers fold case anyway), so a
user's text is always searched as words, never parsed as a query. Text that leaves no searchable word
(empty, only operators or punctuation) gives None: the caller skips the full-text signal instead of sending
a query the server would reject as a syntax error.
"""

from __future__ import annotations

import re

from graphmem.model import MAX_QUERY_CHARS

_SPECIAL = re.compile(r'([+\-!(){}\[\]^"~*?:\\/&|])')
_OPERATOR_WORDS = re.compile(r"\b(AND|OR|NOT|TO)\b")
_WORD = re.compile(r"\w", re.UNICODE)


def escape_lucene(text: str) -> str | None:
    """The query to send for ``text``, or None when nothing searchable is left."""
    text = text[:MAX_QUERY_CHARS]
    if not _WORD.search(_OPERATOR_WORDS.sub(" ", text)):
        return None
    return _SPECIAL.sub(r"\\\1", _OPERATOR_WORDS.sub(lambda m: m.group(1).lower(), text))
