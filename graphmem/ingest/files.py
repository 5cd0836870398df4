"""Files → documents for ``graphmem ingest``: .txt and .md files, and files without an extension whose start
is UTF-8 text (README, LICENSE: read as Markdown), one document each, split at paragraph boundaries into
numbered parts when over the content cap; and JSONL (one document per line).

Problems are reported per file and per line and never stop the rest: unreadable, not UTF-8, invalid
JSON, missing or non-text content, unsupported file type. Below a directory, the files that are not read
(another extension, binary, hidden) are named in ``skipped`` with the reason, and are no error.
"""

from __future__ import annotations

import codecs
import json
import os
import re
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from graphmem.errors import InvalidInput
from graphmem.ingest.split import split_facts
from graphmem.model import DocumentInput, IngestItem, parse

TEXT_SUFFIXES = {".txt", ".md", ".markdown"}
JSONL_SUFFIXES = {".jsonl", ".ndjson"}
SNIFF_BYTES = 8192  # of a file without an extension: enough to tell text, without reading a large binary whole
_HEADING = re.compile(r"^\s{0,3}#{1,6}\s+(.+?)\s*#*\s*$", re.M)
_PARAGRAPH_BREAK = re.compile(r"\n\s*\n")


@dataclass
class Item:
    """One document to ingest, and where it came from (for error messages)."""

    where: str
    item: IngestItem


@dataclass
class ReadResult:
    items: list[Item] = field(default_factory=list)
    errors: list[str] = field(default_factory=list)
    skipped: list[str] = field(default_factory=list)  # "path: reason", below a directory only
    files: int = 0  # read or failed, skipped ones not included

    def fact_count(self) -> int:
        """How many facts the items will become (the total a progress bar counts to)."""
        return sum(len(split_facts(item.item.document.content)) for item in self.items)


def expand(paths: list[Path]) -> Iterator[tuple[Path, bool]]:
    """Each path as given (``False``), or for a directory every entry below it (``True``) in a stable order:
    its files, and the folders the walk does not enter (hidden ones, links), so that they can be named."""
    for path in paths:
        if not path.is_dir():
            yield path, False
            continue
        below: list[Path] = []
        for root, folders, names in os.walk(path):
            entered = [f for f in folders if not f.startswith(".") and not Path(root, f).is_symlink()]
            below += (Path(root, f) for f in folders if f not in entered)
            folders[:] = entered
            below += (Path(root, name) for name in names)
        yield from ((p, True) for p in sorted(below))


def _problem(path: Path, below: bool) -> str | None:
    """Why ``path`` is not read, or None. Hidden entries below a directory (.git, .env) are left alone even
    when they are text: a repository's metadata and secrets are no memories."""
    if below and path.name.startswith("."):
        return "hidden"
    if below and path.is_dir():
        return "a linked folder (not followed)"
    if below and not path.is_file():
        return "not a regular file"
    suffix = path.suffix.lower()
    if not suffix:
        return _not_text(path)
    if suffix not in TEXT_SUFFIXES | JSONL_SUFFIXES:
        return f"unsupported file type {suffix} (use .txt, .md or .jsonl)"
    return None


def _not_text(path: Path) -> str | None:
    """Why a file without an extension is not text, judged by its first ``SNIFF_BYTES``: a NUL byte, or bytes
    that are not UTF-8 (a character cut at the end of that prefix is fine)."""
    try:
        with path.open("rb") as file:
            start = file.read(SNIFF_BYTES)
    except OSError:
        return None  # reading it says why
    if b"\0" in start:
        return "not text (a NUL byte)"
    try:
        codecs.getincrementaldecoder("utf-8")().decode(start)
    except UnicodeDecodeError as exc:
        return f"not UTF-8 text (byte {exc.start})"
    return None


def read_paths(paths: list[Path], max_chars: int) -> ReadResult:
    result = ReadResult()
    for path, below in expand(paths):
        problem = _problem(path, below)
        if problem is not None and below:
            result.skipped.append(f"{path}: {problem}")
            continue
        result.files += 1
        if problem is not None:
            result.errors.append(f"{path}: {problem}")
            continue
        try:
            text = path.read_bytes().decode("utf-8")
        except UnicodeDecodeError as exc:
            result.errors.append(f"{path}: not UTF-8 (byte {exc.start})")
            continue
        except OSError as exc:
            result.errors.append(f"{path}: unreadable ({exc.strerror or exc})")
            continue
        if path.suffix.lower() in JSONL_SUFFIXES:
            _read_jsonl(path, text, result)
        else:
            _read_text(path, text, max_chars, result)
    return result


def _read_text(path: Path, text: str, max_chars: int, result: ReadResult) -> None:
    if not text.strip():
        result.errors.append(f"{path}: empty")
        return
    heading = _HEADING.search(text) if path.suffix.lower() != ".txt" else None
    title = (heading.group(1) if heading else path.stem)[:500]
    parts = split_paragraphs(text, max_chars)
    for number, part in enumerate(parts, start=1):
        fields: dict[str, Any] = {"content": part, "title": title, "source": str(path)}
        if len(parts) > 1:
            fields["source"] = f"{path}#part{number}"
            fields["metadata"] = {"part": number, "parts": len(parts)}
        _add(result, fields["source"], fields, versioned=True)


def split_paragraphs(text: str, max_chars: int) -> list[str]:
    """Parts of at most ``max_chars``, cut at paragraph breaks (a paragraph longer than the cap is cut at
    the last line break, then space, before it)."""
    if len(text) <= max_chars:
        return [text]
    parts: list[str] = []
    current = ""
    for paragraph in _pieces(text, max_chars):
        if current and len(current) + len(paragraph) > max_chars:
            parts.append(current)
            current = ""
        current += paragraph
    if current.strip():
        parts.append(current)
    return [p for p in parts if p.strip()]


def _pieces(text: str, max_chars: int) -> Iterator[str]:
    start = 0
    for match in _PARAGRAPH_BREAK.finditer(text):
        yield from _cut(text[start:match.end()], max_chars)
        start = match.end()
    yield from _cut(text[start:], max_chars)


def _cut(piece: str, max_chars: int) -> Iterator[str]:
    while len(piece) > max_chars:
        window = piece[:max_chars]
        at = max(window.rfind("\n"), window.rfind(" "))
        at = at + 1 if at > 0 else max_chars
        yield piece[:at]
        piece = piece[at:]
    if piece:
        yield piece


def _read_jsonl(path: Path, text: str, result: ReadResult) -> None:
    for number, line in enumerate(text.splitlines(), start=1):
        if not line.strip():
            continue
        where = f"{path}:{number}"
        try:
            record = json.loads(line)
        except json.JSONDecodeError as exc:
            result.errors.append(f"{where}: invalid JSON ({exc.msg})")
            continue
        if not isinstance(record, dict):
            result.errors.append(f"{where}: a line must be a JSON object")
            continue
        if not isinstance(record.get("content"), str) or not record["content"].strip():
            result.errors.append(f"{where}: missing content")
            continue
        unknown = set(record) - {"content", "title", "source", "metadata", "request_id"}
        if unknown:
            result.errors.append(f"{where}: unknown fields {sorted(unknown)}")
            continue
        _add(result, where, record, versioned=False)


def _add(result: ReadResult, where: str, fields: dict[str, Any], versioned: bool) -> None:
    try:
        document = parse(DocumentInput, fields)
    except InvalidInput as exc:
        result.errors.append(f"{where}: {exc.message}")
        return
    result.items.append(Item(where, IngestItem(document=document, versioned=versioned)))
