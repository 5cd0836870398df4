"""Triple search: (subject)-[predicate]->(object) by subject, predicate, object or a free term.

Subject, object and term text are resolved to entities through the entity-name full-text index (so
"Priya" finds "Priya Raman"); the term also matches the text of the fact a triple was read from.
Predicates are stored as verb lemmas with their particles ("stream through"), so the caller lemmatises the
asked predicate before it is matched as a substring. A negated triple ("Marcus does not like MySQL") is
always returned with ``negated=True`` and its statement reads "not"; ``negated`` filters when set. Newest
first (the recorded time of the supporting fact), ties by ids; a later page starts after the previous
page's last row (keyset), inside the statements. Each search starts from the entities or facts it
resolved, so it reads only their triples; a search by predicate alone reads every triple of the namespaces.
"""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel

from graphmem.model import TripleQuery
from graphmem.results import EntityRef, TripleHit
from graphmem.results.search import triple_statement
from graphmem.search.hybrid import citation
from graphmem.search.lucene import escape_lucene
from graphmem.search.retrieve import fulltext_candidates, widening
from graphmem.store.dialect import Dialect, SearchIndex
from graphmem.store.driver import Tx
from graphmem.store.names import StatementName
from graphmem.store.views import path_params, view_params

RESOLVE_K = 50  # entities (and facts, for a term) a text may resolve to


class TripleKey(BaseModel):
    """Where a page of triples ends, in the search's order."""

    recorded_at: int
    fact_id: str
    subject_id: str
    predicate: str
    object_id: str


def search_triples(tx: Tx, dialect: Dialect, namespaces: list[str], query: TripleQuery,
                   predicate_lemma: str | None, after: TripleKey | None) -> tuple[list[TripleHit], TripleKey | None]:
    """(one page of triples, the key after which the next page starts, None on the last page)."""
    params: dict[str, Any] = {"namespaces": namespaces, **view_params(query.view), **path_params(query.path)}
    subject_ids = _entity_ids(tx, dialect, params, query.subject)
    object_ids = _entity_ids(tx, dialect, params, query.object)
    term_entity_ids = _entity_ids(tx, dialect, params, query.term)
    term_fact_ids = None if query.term is None else [
        c.id for c in fulltext_candidates(tx, dialect, namespaces, query.view, query.term, RESOLVE_K)]
    params.update(subject_ids=subject_ids, object_ids=object_ids, term_entity_ids=term_entity_ids,
                  term_fact_ids=term_fact_ids or [], negated=query.negated, limit=query.limit + 1,
                  predicate=predicate_lemma.lower() if predicate_lemma else None,
                  **{f"after_{name}": value for name, value in
                     (after.model_dump() if after else dict.fromkeys(TripleKey.model_fields)).items()})
    # Start from the narrowest thing known; a free term starts from its entities (either end) and facts.
    starts: list[tuple[StatementName, list[str]]]
    if subject_ids is not None:
        starts = [("triples_from_subjects", subject_ids)]
    elif object_ids is not None:
        starts = [("triples_from_objects", object_ids)]
    elif term_entity_ids is not None:
        starts = [("triples_from_subjects", term_entity_ids), ("triples_from_objects", term_entity_ids),
                  ("triples_from_facts", term_fact_ids or [])]
    else:
        starts = [("triples_scan", [])]
    rows: dict[tuple[str, str, str, str], dict[str, Any]] = {}
    for statement, anchors in starts:
        for row in tx.run(statement, anchor_ids=anchors, **params):
            rows[(row["fact_id"], row["subject_id"], row["predicate"], row["object_id"])] = row
    ordered = sorted(rows.values(), key=lambda r: (-r["recorded_at"], r["fact_id"], r["subject_id"],
                                                   r["predicate"], r["object_id"]))
    page = ordered[: query.limit]
    last = TripleKey.model_validate(page[-1]) if len(ordered) > query.limit else None
    return [_hit(row) for row in page], last


def triples_of_facts(tx: Tx, namespaces: list[str], fact_ids: list[str], per_fact: int) -> dict[str, list[TripleHit]]:
    """The triples read from each fact, up to ``per_fact`` each, in one statement."""
    found: dict[str, list[TripleHit]] = {}
    for row in tx.run("facts_triples", ids=fact_ids, limit=per_fact, namespaces=namespaces):
        found.setdefault(row["fact_id"], []).append(_hit(row))
    return found


def _entity_ids(tx: Tx, dialect: Dialect, params: dict[str, Any], text: str | None) -> list[str] | None:
    """Entities whose name matches ``text`` (None when no text was given: any entity)."""
    if text is None:
        return None
    escaped = escape_lucene(text)
    if escaped is None:
        return []
    rows = widening(tx, "entities_by_name", dialect.index_name(SearchIndex.entity_name),
                    {**params, "query": escaped}, RESOLVE_K)
    return [r["id"] for r in rows]


def _hit(row: dict[str, Any]) -> TripleHit:
    subject = EntityRef(id=row["subject_id"], name=row["subject"], type=row["subject_type"])
    obj = EntityRef(id=row["object_id"], name=row["object"], type=row["object_type"])
    negated = bool(row["negated"])
    statement = triple_statement(subject.name, row["predicate"], obj.name, negated)
    return TripleHit(subject=subject, predicate=row["predicate"], object=obj, negated=negated,
                     asserted=bool(row["asserted"]),
                     statement=statement, fact_id=row["fact_id"], text=row["text"], recorded_at=row["recorded_at"],
                     citation=citation(row))
