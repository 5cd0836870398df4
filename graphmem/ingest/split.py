"""Split a document into sentence-level facts with exact spans.

Spans are Python code-point offsets into the stored content, end exclusive, so
``content[start:end] == text`` always holds. The rule is deliberately simple: end punctuation followed by
white space, or a line break.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

# A sentence is a maximal run that does not cross a line break and ends after . ! ? (plus closing
# quotes/brackets) when white space follows.
_SENTENCE = re.compile(r"[^\s](?:[^\n]*?(?:[.!?\u2026]+[\"')\]\u00bb\u201d\u2019]*(?=\s)|(?=\n)|$))", re.S)


@dataclass(frozen=True)
class Span:
    start: int
    end: int
    text: str


def split_sentences(content: str) -> list[Span]:
    """Sentences of ``content`` in order, stripped of surrounding white space, none empty."""
    spans = []
    for match in _SENTENCE.finditer(content):
        text = match.group(0).rstrip()
        if text:
            spans.append(Span(match.start(), match.start() + len(text), text))
    return spans
