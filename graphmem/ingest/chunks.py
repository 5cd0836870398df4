"""Chunks: the memory-level search unit. A memory is searchable as a whole (its own vector and its own
full-text entry), beside its facts: a question is often answered by a turn or a paragraph, not by one of
its sentences alone ("What did she say about it?" needs the sentence before).

A short memory (up to ``CHUNK_CHARS``) is one chunk from its first span to its last: its facts, and its code
and markup, which are no facts but are searched here. A longer one is cut at span (sentence, block)
boundaries into chunks of at most ``CHUNK_CHARS``, and a chunk that has reached half that size ends at the
next paragraph break or heading change, so chunks follow the memory's paragraphs where they can; a single
span longer than the limit is a chunk of its own. ``CHUNK_CHARS`` is about what the embedding model reads
(all-MiniLM-L6-v2 reads 256 word pieces, some 1,000 characters of English): beyond it the vector would
silently describe only the beginning.

A chunk's ``text`` is the exact content between its first span's start and its last span's end (what its
full-text entry indexes); its vector reads its facts' plain text after the turn header that precedes it,
as a fact's does (``Span.embedding_text``).
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from graphmem.ingest.split import FACTS, Span

CHUNK_CHARS = 1_000
_PARAGRAPH_BREAK = re.compile(r"\n[ \t]*\n")


@dataclass(frozen=True)
class Chunk:
    start: int
    end: int
    text: str  # content[start:end]
    embedding_text: str
    facts: int  # how many facts it spans
    spans: int  # how many spans (facts and markup) it spans

    @property
    def is_one_fact(self) -> bool:
        """Exactly one fact and nothing else: its vector is that fact's, not embedded again."""
        return self.spans == 1 and self.facts == 1


def chunk_spans(content: str, spans: list[Span]) -> list[Chunk]:
    """The chunks of a memory from its spans (``split_memory``: facts and markup, in order); none for a memory
    without any."""
    groups: list[list[Span]] = []
    for span in spans:
        current = groups[-1] if groups else None
        if current is None or _ends_before(content, current, span):
            groups.append([span])
        else:
            current.append(span)
    return [_chunk(content, group) for group in groups]


def _ends_before(content: str, group: list[Span], span: Span) -> bool:
    """Whether the chunk ``group`` ends before ``span``: it would grow past the limit, or it is half full
    and ``span`` starts a new paragraph or section."""
    size = span.end - group[0].start
    if size > CHUNK_CHARS:
        return True
    half_full = group[-1].end - group[0].start >= CHUNK_CHARS // 2
    new_paragraph = (span.section != group[-1].section
                     or _PARAGRAPH_BREAK.search(content, group[-1].end, span.start) is not None)
    return half_full and new_paragraph


def _chunk(content: str, group: list[Span]) -> Chunk:
    header = group[0].turn_header
    plain = " ".join(span.plain for span in group)
    text = f"{header} {plain}" if header else plain
    return Chunk(group[0].start, group[-1].end, content[group[0].start:group[-1].end], text,
                 sum(span.kind in FACTS for span in group), len(group))
