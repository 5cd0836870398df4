"""What extraction makes of text nobody tuned it on (benchmarks/data/extraction), per genre, beside the figures
recorded before the extractor was tuned on the invented genres (``baseline.json``).

Runs ``Pipeline.prepare`` (split → spaCy → rules; the hashing embedder, no model download) on every document of
``documents.jsonl``: package READMEs, changelogs, licence texts and documentation pages, markup and all, and three
invented genres with hand-written gold (``gold.jsonl``): notes and chat turns, encyclopedic sentences and narrative
documentation prose. Per genre it prints:

* facts, the share under three words, and (readme, docs) the share that is code or markup by the hand-labelled
  lines of ``markup.jsonl`` (a fact is markup when more than half of its non-space characters lie on such lines);
* triples per 100 facts, the share whose predicate is "be", and precision = good / judged: a triple is judged by
  its label in ``labels.jsonl`` (key: document id, fact text with white space collapsed, subject lower-cased,
  predicate, object lower-cased, negated), or good when it is a gold relation of its document word for word
  (direction and predicate included); the rest are unjudged (write them with ``--unlabelled``);
* join rate (invented genres): the share of gold relations whose two ends some triple of that document joins;
* type precision (invented genres): per gold entity that a mention names, the type its mentions vote for, counted
  when it is a definite type (not Concept, Name or Thing: an unknown type is no wrong one);
* merges (notes, through the bundled engine, skipped by ``--no-database``): the notes are stored one by one in one
  namespace; two distinct surface forms (normalised) that one entity carries (its name and aliases) are a merge,
  correct when the gold names them as one thing; recall over the gold's pairs.

    .venv/bin/python benchmarks/extraction.py [--per-document] [--unlabelled FILE] [--no-database]
    .venv/bin/python benchmarks/extraction.py --write-baseline   # only when the gold or the rubric changes
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
from graphmem.ingest.names import CONCEPT, NAME, USER
from graphmem.ingest.pipeline import Pipeline, PreparedDocument
from graphmem.ingest.resolve import UNTYPED, normalize_name
from graphmem.model import CallerContext, DocumentInput, EntityListOptions
from graphmem.runtime import Runtime

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


def settings_in(tmp: str) -> Settings:
    return Settings(_env_file=None, neo4j_uri=None, data_dir=Path(tmp), embedder="hashing",
                    entity_patterns_file=None)


def prepare_all(documents: list[dict[str, Any]]) -> list[PreparedDocument]:
    with tempfile.TemporaryDirectory(prefix="graphmem-extraction-") as tmp:
        return Pipeline(settings_in(tmp)).prepare([d["content"] for d in documents])


def triples_of(documents: list[dict[str, Any]], prepared: list[PreparedDocument]) -> list[Produced]:
    """Every triple produced, in document order."""
    return [Produced(document["id"], collapse(fact.text), t.subject.name, t.predicate, t.object.name, t.negated)
            for document, result in zip(documents, prepared, strict=True) for fact in result.facts
            for t in fact.triples]


def share(part: int, whole: int) -> str:
    return f"{part / whole:.3f}" if whole else "n/a"


GOLD_GENRES = ("notes", "encyclopedic", "narrative")
UNKNOWN_TYPES = frozenset({CONCEPT, NAME, USER, UNTYPED})
_WORD = re.compile(r"\w+")


@dataclass
class Gold:
    """The invented genres' gold: entities by genre (normalised alias → canonical name, and types) and relations."""

    alias: dict[str, dict[str, str]]  # genre → normalised surface form → canonical name
    types: dict[str, dict[str, str]]  # genre → canonical name → type
    forms: dict[str, dict[str, set[str]]]  # genre → canonical name → its normalised surface forms
    relations: list[dict[str, Any]]

    @classmethod
    def load(cls, path: Path) -> Gold:
        alias: dict[str, dict[str, str]] = defaultdict(dict)
        types: dict[str, dict[str, str]] = defaultdict(dict)
        forms: dict[str, dict[str, set[str]]] = defaultdict(dict)
        relations = []
        for row in load_jsonl(path):
            if row["row"] == "relation":
                relations.append(row)
                continue
            genre, name = row["genre"], row["name"]
            types[genre][name] = row["type"]
            forms[genre][name] = {normalize_name(a) for a in row["aliases"]}
            for form in forms[genre][name]:
                alias[genre].setdefault(form, name)
        return cls(alias, types, forms, relations)

    def entity(self, genre: str, surface: str) -> str | None:
        return self.alias[genre].get(normalize_name(surface))


def markup_lines(path: Path) -> dict[str, set[int]]:
    """Document id → its 1-based line numbers labelled code or markup (a package metadata header, ``Name:``,
    ``Requires-Dist:``, is labelled too but counted apart: it is fields, the ``Key: value`` facts notes use)."""
    lines: dict[str, set[int]] = defaultdict(set)
    for row in load_jsonl(path):
        if row["kind"] != "header":
            lines[row["doc"]].update(range(row["first"], row["last"] + 1))
    return lines


def is_markup(content: str, start: int, end: int, labelled: set[int]) -> bool:
    """More than half of the fact's non-space characters lie on labelled lines."""
    line = content.count("\n", 0, start) + 1
    inside = total = 0
    for char in content[start:end]:
        if char == "\n":
            line += 1
        elif not char.isspace():
            total += 1
            inside += line in labelled
    return total > 0 and inside * 2 > total


def genre_figures(documents: list[dict[str, Any]], prepared: list[PreparedDocument], produced: list[Produced],
                  labels: dict[Key, str], gold: Gold, markup: dict[str, set[int]]) -> dict[str, dict[str, Any]]:
    """Every figure of the module docstring but merges, per genre (the document's ``kind``)."""
    kind_of = {d["id"]: d["kind"] for d in documents}
    gold_keys = {(r["doc"], r["subject"].lower(), r["predicate"], r["object"].lower()) for r in gold.relations}
    figures: dict[str, dict[str, Any]] = defaultdict(lambda: defaultdict(int))
    votes: dict[str, dict[str, Counter[str]]] = defaultdict(lambda: defaultdict(Counter))
    for document, result in zip(documents, prepared, strict=True):
        f = figures[document["kind"]]
        f["documents"] += 1
        labelled = markup.get(document["id"])
        for fact in result.facts:
            f["facts"] += 1
            f["short"] += len(_WORD.findall(fact.text)) < 3
            if labelled is not None:
                f["markup_judged"] += 1
                f["markup"] += is_markup(document["content"], fact.start, fact.end, labelled)
            if document["kind"] in GOLD_GENRES:
                for mention in fact.mentions:
                    name = gold.entity(document["kind"], mention.entity.name)
                    if name is not None:
                        votes[document["kind"]][name][mention.entity.type] += 1
    joined: set[tuple[str, str, str]] = set()
    for t in produced:
        f = figures[kind_of[t.doc]]
        f["triples"] += 1
        f["be"] += t.predicate == "be"
        label = labels.get(t.key)
        if label is None and (t.doc, t.subject.lower(), t.predicate, t.object.lower()) in gold_keys and not t.negated:
            label = "good"
        f["judged"] += label is not None
        f["good"] += label == "good"
        genre = kind_of[t.doc]
        if genre in GOLD_GENRES:
            subject, obj = gold.entity(genre, t.subject), gold.entity(genre, t.object)
            if subject is not None and obj is not None:
                joined.add((t.doc, min(subject, obj), max(subject, obj)))
    for relation in gold.relations:
        f = figures[relation["genre"]]
        f["gold_relations"] += 1
        subject = gold.entity(relation["genre"], relation["subject"]) or ""
        obj = gold.entity(relation["genre"], relation["object"]) or ""
        f["joined"] += (relation["doc"], min(subject, obj), max(subject, obj)) in joined
    for genre in GOLD_GENRES:
        f = figures[genre]
        f["gold_entities"] = len(gold.types[genre])
        for name, counted in votes[genre].items():
            definite = Counter({kind: n for kind, n in counted.items() if kind not in UNKNOWN_TYPES})
            if definite:
                f["typed"] += 1
                f["typed_right"] += definite.most_common(1)[0][0] == gold.types[genre][name]
    return {genre: dict(f) for genre, f in figures.items()}


def merges(documents: list[dict[str, Any]], gold: Gold) -> dict[str, int]:
    """Store the notes one by one in one namespace of a bundled engine; count merged pairs of surface forms."""
    namespace = "notes"
    ctx = CallerContext.for_namespaces(namespace)
    groups: list[set[str]] = []
    with tempfile.TemporaryDirectory(prefix="graphmem-extraction-") as tmp, \
            Runtime.open(settings_in(tmp)) as runtime:
        service = runtime.service
        for document in (d for d in documents if d["kind"] == "notes"):
            service.add_memories(ctx, namespace, [DocumentInput(content=document["content"], source=document["id"])])
        cursor = None
        while True:
            page = service.list_entities(ctx, namespace, EntityListOptions(limit=100, cursor=cursor))
            for item in page.items:
                groups.append({normalize_name(form) for form in [item.name or "", *getattr(item, "aliases", [])]
                               if form})
            cursor = page.next_cursor
            if cursor is None:
                break
    forms = gold.forms["notes"]
    owner = gold.alias["notes"]
    counts = Counter[str]()
    merged: set[frozenset[str]] = set()
    for group in groups:
        known = sorted(form for form in group if form in owner)
        for i, a in enumerate(known):
            for b in known[i + 1:]:
                merged.add(frozenset((a, b)))
                counts["merged"] += 1
                counts["merged_right"] += owner[a] == owner[b]
    for surface in forms.values():
        ordered = sorted(surface)
        for i, a in enumerate(ordered):
            for b in ordered[i + 1:]:
                counts["gold_pairs"] += 1
                counts["gold_pairs_found"] += frozenset((a, b)) in merged
    return dict(counts)


def rate(part: int, whole: int, per: int = 1) -> float | None:
    return round(per * part / whole, 3) if whole else None


def summary(figures: dict[str, dict[str, Any]], merged: dict[str, int] | None) -> dict[str, dict[str, Any]]:
    """The printed figures, per genre (what ``baseline.json`` records)."""
    out: dict[str, dict[str, Any]] = {}
    for genre, f in sorted(figures.items()):
        row: dict[str, Any] = {
            "documents": f["documents"], "facts": f["facts"], "triples": f.get("triples", 0),
            "triples per 100 facts": rate(f.get("triples", 0), f["facts"], 100),
            "share 'be'": rate(f.get("be", 0), f.get("triples", 0)),
            "precision": rate(f.get("good", 0), f.get("judged", 0)),
            "judged": f.get("judged", 0),
            "facts under 3 words": rate(f.get("short", 0), f["facts"]),
        }
        if f.get("markup_judged"):
            row["facts code or markup"] = rate(f["markup"], f["markup_judged"])
        if genre in GOLD_GENRES:
            row["join rate"] = rate(f.get("joined", 0), f.get("gold_relations", 0))
            row["type precision"] = rate(f.get("typed_right", 0), f.get("typed", 0))
            row["entities typed"] = rate(f.get("typed", 0), f.get("gold_entities", 0))
        if genre == "notes" and merged is not None:
            row["merge precision"] = rate(merged.get("merged_right", 0), merged.get("merged", 0))
            row["merge recall"] = rate(merged.get("gold_pairs_found", 0), merged.get("gold_pairs", 0))
        out[genre] = row
    return out


def print_summary(now: dict[str, dict[str, Any]], before: dict[str, dict[str, Any]]) -> None:
    for genre, row in now.items():
        print(f"\n{genre}")
        for name, value in row.items():
            was = before.get(genre, {}).get(name, "-")
            print(f"  {name:24} {value!s:>8}   (before: {was if was is not None else 'n/a'})")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--per-document", action="store_true", help="print precision per document and per kind")
    parser.add_argument("--unlabelled", type=Path, metavar="FILE",
                        help="write the triples no label or gold covers as JSONL (label file format, label null)")
    parser.add_argument("--no-database", action="store_true", help="skip the merges (they need the bundled engine)")
    parser.add_argument("--write-baseline", action="store_true", help="record these figures as the 'before'")
    parser.add_argument("--data", type=Path, default=DATA, help=argparse.SUPPRESS)
    args = parser.parse_args()

    documents = load_jsonl(args.data / "documents.jsonl")
    labels = load_labels(args.data / "labels.jsonl")
    gold = Gold.load(args.data / "gold.jsonl")
    prepared = prepare_all(documents)
    produced = triples_of(documents, prepared)
    figures = genre_figures(documents, prepared, produced, labels, gold, markup_lines(args.data / "markup.jsonl"))
    merged = None if args.no_database else merges(documents, gold)
    now = summary(figures, merged)
    baseline = args.data / "baseline.json"
    if args.write_baseline:
        baseline.write_text(json.dumps(now, indent=1) + "\n", encoding="utf-8")
    print_summary(now, json.loads(baseline.read_text(encoding="utf-8")) if baseline.exists() else {})

    gold_keys = {(r["doc"], r["subject"].lower(), r["predicate"], r["object"].lower()) for r in gold.relations}
    unlabelled = [t for t in produced if t.key not in labels
                  and (t.negated or (t.doc, t.subject.lower(), t.predicate, t.object.lower()) not in gold_keys)]
    stale = len(labels.keys() - {t.key for t in produced})
    print(f"\ntriples no label or gold covers: {len(unlabelled)}")
    if stale:
        print(f"labels not produced: {stale} (judged in an earlier round; the extractor no longer gives them)")

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
