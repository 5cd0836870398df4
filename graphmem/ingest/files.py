"""Files → documents for ``graphmem ingest``: .txt and .md files (one document each, split at paragraph
boundaries into numbered parts when over the content cap) and JSONL (one document per line).

Problems are reported per file and per line and never stop the rest: unreadable, not UTF-8, invalid
JSON, missing or non-text content, unsupported file type.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from graphmem.errors import InvalidInput
from graphmem.model import DocumentInput, IngestItem, parse

TEXT_SUFFIXES = {".txt", ".md", ".markdown"}
JSONL_SUFFIXES = {".jsonl", ".ndjson"}
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
    files: int = 0


def expand(paths: list[Path]) -> Iterator[Path]:
    """Files as given, and the supported files below directories, in a stable order."""
    for path in paths:
        if path.is_dir():
            yield from sorted(p for p in path.rglob("*") if p.is_file() and p.suffix.lower() in
                              TEXT_SUFFIXES | JSONL_SUFFIXES)
        else:
            yield path


def read_paths(paths: list[Path], max_chars: int) -> ReadResult:
    result = ReadResult()
    for path in expand(paths):
        result.files += 1
        suffix = path.suffix.lower()
        if suffix not in TEXT_SUFFIXES | JSONL_SUFFIXES:
            result.errors.append(f"{path}: unsupported file type (use .txt, .md or .jsonl)")
            continue
        try:
            text = path.read_bytes().decode("utf-8")
        except UnicodeDecodeError as exc:
            result.errors.append(f"{path}: not UTF-8 (byte {exc.start})")
            continue
        except OSError as exc:
            result.errors.append(f"{path}: unreadable ({exc.strerror or exc})")
            continue
        if suffix in JSONL_SUFFIXES:
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
