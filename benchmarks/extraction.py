"""Precision of the triple extractor on real documents (benchmarks/data/extraction; no database, no model download).

Runs ``Pipeline.prepare`` (split → spaCy → rules) on every document of ``documents.jsonl``: package READMEs,
changelogs, licence texts and Markdown documentation pages, markup and all. Every triple it produces is matched
against the hand labels of ``labels.jsonl`` by its key (document id, fact text with white space collapsed, subject
name lower-cased, predicate, object name lower-cased, negated). Prints the number of documents, facts and triples,
the share of triples whose predicate is "be", how many triples are labelled, precision = good / labelled, and how
many triples no label covers yet (judge those with ``--unlabelled``, see the data README).

    .venv/bin/python benchmarks/extraction.py [--per-document] [--unlabelled FILE]
"""

from __future__ import annotations

import argparse
import json
import re
import tempfile
from collections import Counter, defaultdict
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from graphmem.config import Settings
from graphmem.ingest.pipeline import Pipeline

DATA = Path(__file__).parent / "data" / "extraction"
_SPACE = re.compile(r"\s+")

# (doc id, fact text with white space collapsed, subject lower-cased, predicate, object lower-cased, negated)
Key = tuple[str, str, str, str, str, bool]


@dataclass(frozen=True)
class Produced:
    doc: str
    fact: str  # white space collapsed
    subject: str
    predicate: str
    object: str
    negated: bool

    @property
    def key(self) -> Key:
        return (self.doc, self.fact, self.subject.lower(), self.predicate, self.object.lower(), self.negated)


def collapse(text: str) -> str:
    return _SPACE.sub(" ", text).strip()


def load_jsonl(path: Path) -> list[dict[str, Any]]:
    if not path.exists():
        return []
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]


def label_key(row: dict[str, Any]) -> Key:
    return (row["doc"], collapse(row["fact"]), row["subject"].lower(), row["predicate"], row["object"].lower(),
            bool(row["negated"]))


def load_labels(path: Path) -> dict[Key, str]:
    """Label by key; a key judged twice must carry the same label (the file is append-only by round)."""
    labels: dict[Key, str] = {}
    for number, row in enumerate(load_jsonl(path), start=1):
        if row["label"] not in ("good", "bad"):
            raise ValueError(f"{path}:{number}: label must be 'good' or 'bad', not {row['label']!r}")
        key = label_key(row)
        if labels.setdefault(key, row["label"]) != row["label"]:
            raise ValueError(f"{path}:{number}: judged both good and bad: {key}")
    return labels


def extract_all(documents: list[dict[str, Any]]) -> tuple[int, list[Produced]]:
    """Facts counted and every triple produced, in document order."""
    with tempfile.TemporaryDirectory(prefix="graphmem-extraction-") as tmp:
        settings = Settings(_env_file=None, neo4j_uri=None, data_dir=Path(tmp), embedder="hashing",
                            entity_patterns_file=None)
        prepared = Pipeline(settings).prepare([d["content"] for d in documents])
    facts = 0
    produced: list[Produced] = []
    for document, result in zip(documents, prepared, strict=True):
        facts += len(result.facts)
        for fact in result.facts:
            text = collapse(fact.text)
            produced.extend(Produced(document["id"], text, t.subject.name, t.predicate, t.object.name, t.negated)
                            for t in fact.triples)
    return facts, produced


def share(part: int, whole: int) -> str:
    return f"{part / whole:.3f}" if whole else "n/a"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--per-document", action="store_true", help="print precision per document and per kind")
    parser.add_argument("--unlabelled", type=Path, metavar="FILE",
                        help="write the triples no label covers as JSONL (label file format, label null)")
    parser.add_argument("--data", type=Path, default=DATA, help=argparse.SUPPRESS)
    args = parser.parse_args()

    documents = load_jsonl(args.data / "documents.jsonl")
    labels = load_labels(args.data / "labels.jsonl")
    facts, produced = extract_all(documents)

    be = sum(t.predicate == "be" for t in produced)
    judged = [(t, labels[t.key]) for t in produced if t.key in labels]
    good = sum(label == "good" for _, label in judged)
    unlabelled = [t for t in produced if t.key not in labels]
    stale = len(labels.keys() - {t.key for t in produced})

    print(f"documents            {len(documents)}")
    print(f"facts                {facts}")
    print(f"triples              {len(produced)}")
    print(f"predicate 'be'       {be} ({share(be, len(produced))} of triples)")
    print(f"labelled             {len(judged)}")
    print(f"precision            {share(good, len(judged))} ({good} good / {len(judged)} labelled)")
    print(f"unlabelled           {len(unlabelled)}")
    if stale:
        print(f"labels not produced  {stale} (judged in an earlier round; the extractor no longer gives them)")

    if args.per_document:
        print_breakdown(documents, produced, labels)

    if args.unlabelled is not None:
        seen: set[Key] = set()
        with args.unlabelled.open("w", encoding="utf-8") as out:
            for t in unlabelled:
                if t.key in seen:
                    continue
                seen.add(t.key)
                row = {"doc": t.doc, "fact": t.fact, "subject": t.subject, "predicate": t.predicate,
                       "object": t.object, "negated": t.negated, "label": None, "why": None, "round": None}
                out.write(json.dumps(row, ensure_ascii=False) + "\n")
        print(f"wrote {len(seen)} distinct unlabelled triples to {args.unlabelled}")


def print_breakdown(documents: list[dict[str, Any]], produced: list[Produced], labels: dict[Key, str]) -> None:
    counts: dict[str, Counter[str]] = defaultdict(Counter)
    for t in produced:
        c = counts[t.doc]
        c["triples"] += 1
        c["be"] += t.predicate == "be"
        if t.key in labels:
            c["labelled"] += 1
            c["good"] += labels[t.key] == "good"
    print()
    print(f"{'doc':4} {'kind':9} {'package':31} {'triples':>7} {'be':>4} {'labelled':>8} {'good':>5} {'precision':>9}")
    by_kind: dict[str, Counter[str]] = defaultdict(Counter)
    for d in documents:
        c = counts[d["id"]]
        by_kind[d["kind"]].update(c)
        print(f"{d['id']:4} {d['kind']:9} {d['package'][:31]:31} {c['triples']:7} {c['be']:4} {c['labelled']:8} "
              f"{c['good']:5} {share(c['good'], c['labelled']):>9}")
    print()
    print(f"{'kind':9} {'triples':>7} {'be':>4} {'labelled':>8} {'good':>5} {'precision':>9}")
    for kind, c in sorted(by_kind.items()):
        print(f"{kind:9} {c['triples']:7} {c['be']:4} {c['labelled']:8} {c['good']:5} "
              f"{share(c['good'], c['labelled']):>9}")


if __name__ == "__main__":
    main()
