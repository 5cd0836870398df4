"""Split a memory into facts with exact spans, reading it as Markdown (CommonMark, with tables and HTML).

Every memory is read as Markdown: plain prose is Markdown too, and notes, documents and chat turns often
use it. The block structure comes from markdown-it-py; what becomes a fact:

* **prose** (``sentence``): paragraphs, with hard-wrapped lines joined (a line break inside a paragraph is
  white space), cut into sentences at end punctuation (not after common abbreviations or initials);
* **list items** (``item``): each item's text, cut into sentences like prose;
* **fields** (``field``): two or more consecutive ``Key: value`` lines (a metadata block), one fact a line;
  entities are read from them, triples are not;
* **code** (fenced or indented), **tables**, **HTML blocks** and **front matter** (``code``, ``table``,
  ``html``, ``meta``): kept as facts of their kind, so they stay searchable by text and meaning, but
  nothing is extracted from them (cut at line breaks into pieces of at most ``BLOCK_CHARS``).

Headings are not facts: they are the ``section`` of the facts under them ("Install > From source").

A chat turn's header ("Kofi (8:15 pm on 2 March 2025): ..." at the start of a line, or a role such as
"User:" or "Assistant:") names the ``speaker`` of the facts that follow it; the header stays in the fact's
text and embedding (who and when) but not in what spaCy reads.

Spans are Python code-point offsets into the stored content, end exclusive, so ``content[start:end] ==
text`` always holds: a fact's ``text`` keeps its markup. Alongside it each span carries ``clean``, the same
characters with markup masked by spaces (container markers, emphasis, inline code, link targets, images,
inline HTML, bare URLs), so it has the same length and every offset into it is an offset into the content:
extraction reads ``clean`` and its entities keep exact spans; embeddings read ``plain`` (``clean`` with
white space folded).
"""

from __future__ import annotations

import re
from dataclasses import dataclass, replace
from enum import StrEnum
from functools import cache

from markdown_it import MarkdownIt
from markdown_it.token import Token

from graphmem.ingest.markup import LITERAL_NEXT, MARKUP_LINE, REST_OPTION, mask_inline


class FactKind(StrEnum):
    sentence = "sentence"
    item = "item"
    field = "field"
    table = "table"
    # markup: in the memory's text and its chunks, never a fact
    code = "code"
    html = "html"
    meta = "meta"
    directive = "directive"
    caption = "caption"  # a short statement with no statement beside it to join ("On Windows:")


FACTS = frozenset({FactKind.sentence, FactKind.item, FactKind.field, FactKind.table})  # what becomes a Fact
EXTRACTED = frozenset({FactKind.sentence, FactKind.item, FactKind.field})  # entities are read from these
WITH_TRIPLES = frozenset({FactKind.sentence, FactKind.item})  # and triples from these
BLOCK_CHARS = 1500  # a code block, table, HTML block or front matter is cut into pieces of at most this
SHORT_WORDS = 3  # a statement of fewer words joins its neighbour: "or", "cluster", "It works."
JOIN_CHARS = 300  # joining stops here: a long list of one-word items is several facts, not one


# What the stored vectors read, as part of the embedding identity the database records: facts read their turn
# header, and memories have chunks with vectors of their own (ingest/chunks.py). A store written another way
# is told to run `graphmem reembed` (vectors read differently are not comparable; it builds the chunks).
FACT_TEXT_RECIPE = "turn-header+chunks"


def embedding_identity(embedder_name: str) -> str:
    """The embedder and what its vectors read, as the database records them."""
    return f"{embedder_name}+{FACT_TEXT_RECIPE}"


@dataclass(frozen=True)
class Span:
    start: int
    end: int
    text: str  # content[start:end], markup included
    clean: str  # the same length, markup masked by spaces
    kind: FactKind = FactKind.sentence
    section: str | None = None
    speaker: str | None = None  # the name in the turn header this fact follows ("Kofi (8:15 pm ...): ...")
    header_end: int | None = None  # where that header ends, when this fact holds it
    turn_header: str | None = None  # that header's text, when this fact follows it without holding it

    def folded(self) -> tuple[str, list[int]]:
        """The clean text with each run of white space folded to one space, and the content offset of each of
        its characters (one more entry for its end): what spaCy reads (long runs of masked markup upset
        its parser) and how its offsets map back."""
        text: list[str] = []
        positions: list[int] = []
        space = False
        for index, char in enumerate(self.clean):
            if self.header_end is not None and self.start + index < self.header_end:
                continue  # the turn header is who and when, not part of the sentence
            if char.isspace():
                if not space and text:
                    text.append(" ")
                    positions.append(self.start + index)
                space = True
                continue
            space = False
            text.append(char)
            positions.append(self.start + index)
        positions.append(self.end)
        return "".join(text), positions

    @property
    def plain(self) -> str:
        """The clean text with white space folded (markup-only blocks: the text)."""
        return " ".join((self.clean if self.kind in EXTRACTED else self.text).split())

    @property
    def embedding_text(self) -> str:
        """What the fact's embedding reads: its plain text, after its turn's header when it follows one
        ("Kofi (8:15 pm on 2 March 2025): ..."). Alone, a later sentence of a chat turn loses who speaks and
        when; measured on the conversational development set, the header lifts fact search's recall@10 from
        0.701 to 0.811 (the previous sentence as well: 0.796; the previous sentence alone: 0.764)."""
        return f"{self.turn_header} {self.plain}" if self.turn_header else self.plain


@cache
def _markdown() -> MarkdownIt:
    return MarkdownIt("commonmark", {"html": True}).enable("table")


_TIMED_HEADER = re.compile(r"^([A-Z][\w'\u2019.-]{0,40}(?: [A-Z][\w'\u2019.-]{0,40}){0,3}) \([^()\n]{1,80}\):[ \t]",
                           re.M)
_ROLE_HEADER = re.compile(r"^(User|Assistant|Human|AI|System)[ \t]*:[ \t]", re.M)
_LINE_BREAK = re.compile(r"\r\n|\r|\n")
_FRONT_MATTER = re.compile(r"\A(---|\+\+\+)[ \t]*(?:\r\n|\r|\n)")
_FIELD = re.compile(r"^\s*[A-Za-z][\w .'/-]{0,40}?\s*:\s+\S")
_ABBREVIATIONS = frozenset({"e.g", "i.e", "etc", "vs", "mr", "mrs", "ms", "dr", "prof", "st", "inc", "ltd", "jr",
                            "sr", "no", "fig", "approx", "cf", "al", "co", "corp", "dept", "est", "vol"})
_LAST_WORD = re.compile(r"([\w.]+)$")
_NEXT_CHAR = re.compile(r"\s*(\S)")
_SENTENCE_END = re.compile(r"[.!?\u2026]+[\"')\]\u00bb\u201d\u2019]*(?=\s)")
# inline markup, masked to spaces (a link keeps its text, an image is masked whole)
_CONTAINER = re.compile(r"^[ \t]*(?:>[ \t]?)*[ \t]*(?:[-+*]|\d{1,9}[.)])?[ \t]*")
_WORD = re.compile(r"\w+")
_ENDS = (".", "!", "?", ":", ";", "\u2026")


class _Lines:
    """Line boundaries of the content, in the line numbering markdown-it uses."""

    def __init__(self, content: str) -> None:
        self.starts = [0]
        self.ends: list[int] = []
        for match in _LINE_BREAK.finditer(content):
            self.ends.append(match.start())
            self.starts.append(match.end())
        self.ends.append(len(content))

    def region(self, first: int, last: int) -> tuple[int, int]:
        """(start, end) offsets of lines ``first`` up to ``last`` (exclusive), without the last line break."""
        last = min(last, len(self.starts))
        return self.starts[first], self.ends[last - 1]


def split_facts(content: str) -> list[Span]:
    """The facts of ``content`` in order (``position`` is the index), none empty: its statements."""
    return [span for span in split_memory(content) if span.kind in FACTS]


def split_memory(content: str) -> list[Span]:
    """Every span of ``content`` in order: its statements (the facts) and its markup (code, HTML, front matter,
    docs-tool directives, includes and template lines), which chunks keep searchable but which state nothing.
    A statement of fewer than ``SHORT_WORDS`` words is joined to the statement before it in its section (else
    the one after); with none beside it, it is a caption (markup), unless it is all the memory says."""
    spans = _joined_short(content, _spans(content))
    if sum(span.kind in FACTS for span in spans) > 1:
        spans = [replace(span, kind=FactKind.caption) if span.kind in FACTS and span.kind != FactKind.table
                 and _words(span) < SHORT_WORDS else span for span in spans]
    return spans


def _spans(content: str) -> list[Span]:
    lines = _Lines(content)
    spans: list[Span] = []
    parsed = content
    front = _front_matter(content, lines)
    if front is not None:  # a meta fact; the parser sees blank lines in its place (line numbers stay)
        start, end = lines.region(*front)
        spans += _blocks(content, start, end, FactKind.meta, None)
        parsed = "\n" * front[1] + (content[lines.starts[front[1]]:] if front[1] < len(lines.starts) else "")
    tokens = _markdown().parse(parsed)
    headings: list[tuple[int, str]] = []
    in_item = 0
    literal = False  # the paragraph before ends with "::" or is a ".. code-block::": indented text next is code
    for index, token in enumerate(tokens):
        if token.type not in ("paragraph_open", "paragraph_close", "inline"):
            literal = False  # a literal block follows its "::" paragraph directly
        if token.type == "list_item_open":
            in_item += 1
        elif token.type == "list_item_close":
            in_item -= 1
        elif token.type == "heading_open" and token.map:
            level = int(token.tag[1:])
            title = " ".join(mask_inline(tokens[index + 1].content).split())
            headings = [h for h in headings if h[0] < level] + ([(level, title)] if title else [])
        elif token.type == "paragraph_open" and token.map:
            inline = tokens[index + 1]
            section = " > ".join(title for _, title in headings) or None
            start, end = lines.region(token.map[0], token.map[1])
            if literal and not in_item and content[start:start + 1] in (" ", "\t"):  # reST's literal block
                spans += _blocks(content, start, end, FactKind.code, section)
                continue
            literal = LITERAL_NEXT.search(content, start, end) is not None
            kind = FactKind.item if in_item else FactKind.sentence
            spans += _paragraph(content, lines, token.map[0], token.map[1], inline, kind, section)
        elif token.type in ("fence", "code_block", "html_block", "table_open") and token.map:
            kind = {"fence": FactKind.code, "code_block": FactKind.code, "html_block": FactKind.html,
                    "table_open": FactKind.table}[token.type]
            start, end = lines.region(token.map[0], token.map[1])
            section = " > ".join(title for _, title in headings) or None
            spans += _blocks(content, start, end, kind, section)
    return _with_speakers(content, spans)


def _with_speakers(content: str, spans: list[Span]) -> list[Span]:
    """Each span with the speaker of the last turn header before it (and the header's end, if it holds it)."""
    headers = sorted([(m.start(), m.end(), m.group(1)) for m in _TIMED_HEADER.finditer(content)]
                     + [(m.start(), m.end(), m.group(1)) for m in _ROLE_HEADER.finditer(content)])
    if not headers:
        return spans
    out: list[Span] = []
    for span in spans:
        before = [h for h in headers if h[0] <= span.start or span.start <= h[0] < span.end]
        held = next((h for h in before if span.start <= h[0] < span.end), None)
        speaker = (held or (before[-1] if before else None))
        header = None if held or not speaker else " ".join(content[speaker[0]:speaker[1]].split())
        out.append(replace(span, speaker=speaker[2] if speaker else None, header_end=held[1] if held else None,
                           turn_header=header))
    return out


def _words(span: Span) -> int:
    return len(_WORD.findall(span.clean))


def _joined_short(content: str, spans: list[Span]) -> list[Span]:
    """Short statements joined to the statement next to them (markup between them keeps them apart), of the
    same section and speaker, fields with fields and sentences and items with each other."""
    out: list[Span] = []
    for span in spans:
        previous = out[-1] if out else None
        if previous is not None and _joinable(previous, span) and span.end - previous.start <= JOIN_CHARS and (
                _words(previous) < SHORT_WORDS or _words(span) < SHORT_WORDS):
            out[-1] = _join(content, previous, span)
        else:
            out.append(span)
    return out


def _joinable(first: Span, second: Span) -> bool:
    statements = (FactKind.sentence, FactKind.item)
    kinds = first.kind == second.kind == FactKind.field or (first.kind in statements and second.kind in statements)
    return kinds and first.section == second.section and first.speaker == second.speaker


def _join(content: str, first: Span, second: Span) -> Span:
    """One span of both; between two list items spaCy reads a full stop where the second item's marker is,
    so a list of short items is not parsed as one sentence ("Proxy Support - Connection Timeouts")."""
    gap = re.sub(r"[^\n]", " ", content[first.end:second.start])
    marker = re.search(r"\S", content[first.end:second.start])
    if first.kind == second.kind == FactKind.item and marker is not None and not first.clean.endswith(_ENDS):
        gap = gap[:marker.start()] + "." + gap[marker.start() + 1:]
    return replace(first, end=second.end, text=content[first.start:second.end],
                   clean=first.clean + gap + second.clean)


def _front_matter(content: str, lines: _Lines) -> tuple[int, int] | None:
    """Lines (first, last exclusive) of a YAML (---) or TOML (+++) front matter block at the very start."""
    opening = _FRONT_MATTER.match(content)
    if opening is None:
        return None
    fence = opening.group(1)
    for number in range(1, min(len(lines.starts), 200)):
        line = content[lines.starts[number]:lines.ends[number]].rstrip()
        if line == fence or (fence == "---" and line == "..."):
            return 0, number + 1
    return None


def _blocks(content: str, start: int, end: int, kind: FactKind, section: str | None) -> list[Span]:
    """A non-prose block as facts of its kind, cut at line breaks into pieces of at most ``BLOCK_CHARS``."""
    pieces: list[Span] = []
    while start < end:
        stop = end
        if stop - start > BLOCK_CHARS:
            cut = content.rfind("\n", start, start + BLOCK_CHARS)
            stop = cut if cut > start else start + BLOCK_CHARS
        pieces += _trimmed(content, content[start:stop], start, kind, section)
        start = stop
    return pieces


def _trimmed(content: str, clean: str, start: int, kind: FactKind, section: str | None,
             visible: str | None = None) -> list[Span]:
    """The span of ``clean`` (which starts at ``start``) without the outer white space of ``visible`` (the
    same characters with less masked; by default ``clean``); none if ``clean`` holds nothing to read."""
    bounds = clean if visible is None else visible
    left = len(bounds) - len(bounds.lstrip())
    right = len(bounds.rstrip())
    if right <= left or not any(ch.isalnum() for ch in clean[left:right]):
        return []
    return [Span(start + left, start + right, content[start + left:start + right], clean[left:right], kind,
                 section)]


def _paragraph(content: str, lines: _Lines, first: int, last: int, inline: Token, kind: FactKind,
               section: str | None) -> list[Span]:
    """A paragraph's sentences (or its field lines), with container prefixes and inline markup masked."""
    start, end = lines.region(first, last)
    masked = list(content[start:end])
    source_lines = (inline.content or "").split("\n")
    for number, source in zip(range(first, last), source_lines, strict=False):
        line_start = lines.starts[number] - start
        raw = content[lines.starts[number]:lines.ends[number]]
        at = raw.find(source.strip()) if source.strip() else len(raw)
        if at < 0:  # the parser rewrote the line (tabs): mask the container markers alone
            prefix = _CONTAINER.match(raw)
            at = prefix.end() if prefix else 0
        masked[line_start:line_start + at] = " " * at  # "> ", "- ", "1. ", indentation
    clean = mask_inline("".join(masked))
    visible = mask_inline("".join(masked), keep_code=True)
    region_lines = [(lines.starts[n] - start, lines.ends[n] - start) for n in range(first, last)]
    fields = [_FIELD.match(clean[a:b]) is not None for a, b in region_lines]
    spans: list[Span] = []
    run: list[tuple[int, int]] = []  # prose lines waiting to be joined
    directive = False  # the line before is markup: an indented ":option:" line under it is too

    def flush() -> None:
        if run:
            spans.extend(_sentences(content, clean, visible, start, run[0][0], run[-1][1], kind, section))
            run.clear()

    for number, (a, b) in enumerate(region_lines):
        neighbours = (number > 0 and fields[number - 1]) or (number + 1 < len(fields) and fields[number + 1])
        if _TIMED_HEADER.match(content, start + a) or _ROLE_HEADER.match(content, start + a):
            flush()  # a new speaker's turn starts a new sentence
        markup = MARKUP_LINE.match(content, start + a, start + b)
        if markup or (directive and REST_OPTION.match(content, start + a, start + b)):
            flush()  # a docs-tool directive, an include or a template line: markup, not prose
            spans += _trimmed(content, content[start + a:start + b], start + a, FactKind.directive, section)
            directive = True
            continue
        directive = False
        if fields[number] and neighbours:
            flush()
            spans += _trimmed(content, clean[a:b], start + a, FactKind.field, section)
        else:
            run.append((a, b))
    flush()
    return spans


def _sentences(content: str, clean: str, visible: str, base: int, first: int, last: int, kind: FactKind,
               section: str | None) -> list[Span]:
    """Sentences of ``clean[first:last]`` (hard wraps joined), as spans of the content (``base`` is where
    ``clean`` starts in it) that start and end where ``visible`` (inline code kept) does."""
    text = clean[first:last].replace("\r", " ").replace("\n", " ")
    shown = visible[first:last]
    spans: list[Span] = []
    begin = 0
    for match in _SENTENCE_END.finditer(text):
        if _abbreviation(text, match.start()) or _continues(text, match.end()):
            continue
        spans += _trimmed(content, text[begin:match.end()], base + first + begin, kind, section,
                          shown[begin:match.end()])
        begin = match.end()
    spans += _trimmed(content, text[begin:], base + first + begin, kind, section, shown[begin:])
    return spans


def _abbreviation(text: str, at: int) -> bool:
    """Is the full stop at ``at`` the end of an abbreviation or an initial ("e.g.", "Dr.", "J. R.")?"""
    if text[at] != ".":
        return False
    word = _LAST_WORD.search(text, max(0, at - 24), at)
    if word is None:
        return False
    token = word.group(1).lower()
    return token in _ABBREVIATIONS or (len(token) == 1 and token.isalpha())


def _continues(text: str, at: int) -> bool:
    """Does the text after ``at`` continue the sentence (a lower-case word follows)?"""
    following = _NEXT_CHAR.match(text, at)
    return following is not None and following.group(1).islower()
