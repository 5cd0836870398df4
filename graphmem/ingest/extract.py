"""Extract: entities, fact attributes and subject-predicate-object triples from parsed sentences.

No LLM: spaCy's NER (after the EntityRuler) gives the entities; rules over the dependency parse give the
triples. The rules, each tested on sentences in tests/test_extract.py:

* subject - verb - object: ``nsubj`` / ``dobj``; a preposition joins the predicate ("move to");
* conjunctions: conjunct subjects, objects and verbs share their partner's arguments;
* passive: ``nsubjpass`` is the object, the ``by`` agent the subject ("written by Bob" → Bob write …);
* relative clauses: "Alice, who works at Acme" → (Alice, work at, Acme);
* negation: a ``neg`` child sets ``negated``, the predicate text stays the same;
* apposition: "Alice, the CTO of Acme" → (Alice, be, CTO); two named entities → (X, be, Y);
* first person: I, me, my, mine → the namespace's user entity; "my N is X" → (user, N, X).

Arguments are named entities, the user, or a *Concept* (a common-noun phrase, lemmatised, such as
"coffee" or "graph database"); other pronouns are dropped (no coreference). DATE, TIME and number-like
entities are not entities: they become the fact's attributes. spaCy gives no per-entity confidence, so
``confidence`` stays None rather than an invented number.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass, field

from spacy.tokens import Doc, Span, Token

# spaCy / ruler label → product entity type. Labels missing here are not entities.
ENTITY_TYPES = {
    "PERSON": "Person", "ORG": "Organization", "GPE": "Place", "LOC": "Place", "FAC": "Place",
    "PRODUCT": "Product", "EVENT": "Event", "WORK_OF_ART": "Work", "NORP": "Group", "LAW": "Law",
    "LANGUAGE": "Language", "TECHNOLOGY": "Technology",
}
# Kept on the fact instead: as entities they would become hubs joining unrelated facts.
ATTRIBUTE_LABELS = {"DATE", "TIME", "CARDINAL", "ORDINAL", "QUANTITY", "MONEY", "PERCENT"}
CONCEPT = "Concept"
USER = "User"  # marker type of the first-person argument; resolved to the user entity
FIRST_PERSON = {"i", "me", "my", "mine", "myself"}
_SUBJECTS = {"nsubj", "csubj"}
_OBJECTS = {"dobj", "obj", "attr", "oprd", "dative"}
_VAGUE = {"thing", "something", "anything", "everything", "nothing", "lot", "way", "time", "one", "kind",
          "sort", "bit", "stuff", "who", "which", "that", "what", "work", "home"}
EXTRACTOR = "spacy-en_core_web_sm-3.8.0+rules/1"
_LABEL = re.compile(r"^[A-Z][A-Z_]{0,40}$")


def entity_type(label: str) -> str | None:
    """The product type of a spaCy or EntityRuler label; None for attribute labels (dates, numbers).
    A label of the operator's own patterns (say FRAMEWORK) becomes its title-cased type (Framework)."""
    if label in ENTITY_TYPES:
        return ENTITY_TYPES[label]
    if label in ATTRIBUTE_LABELS or not _LABEL.fullmatch(label):
        return None
    return label.title().replace("_", "")


@dataclass(frozen=True)
class ExtractedEntity:
    """An argument or a mention: its surface name and product type (``User`` for first person)."""

    name: str
    type: str


@dataclass(frozen=True)
class Mention:
    entity: ExtractedEntity
    start: int  # code-point offsets into the document's content, end exclusive
    end: int


@dataclass(frozen=True)
class Triple:
    subject: ExtractedEntity
    predicate: str
    object: ExtractedEntity
    negated: bool = False


@dataclass
class SentenceExtraction:
    mentions: list[Mention] = field(default_factory=list)
    triples: list[Triple] = field(default_factory=list)
    attributes: list[str] = field(default_factory=list)  # "DATE: last May", "MONEY: $5"


def extract(doc: Doc, offset: int) -> SentenceExtraction:
    """Everything the rules find in one parsed sentence; ``offset`` is its start in the document."""
    out = SentenceExtraction()
    for ent in doc.ents:
        kind = entity_type(ent.label_)
        if kind is not None:
            out.mentions.append(Mention(ExtractedEntity(ent.text, kind), offset + ent.start_char,
                                        offset + ent.end_char))
        elif ent.label_ in ATTRIBUTE_LABELS:
            out.attributes.append(f"{ent.label_}: {ent.text}")
    for token in doc:
        if token.lower_ in FIRST_PERSON and token.pos_ == "PRON":
            ref = ExtractedEntity(token.text, USER)
            out.mentions.append(Mention(ref, offset + token.idx, offset + token.idx + len(token)))
    seen: set[Triple] = set()
    for triple in _triples(doc):
        if triple.subject != triple.object and triple not in seen:
            seen.add(triple)
            out.triples.append(triple)
    # Concepts are entities only where a triple uses them; each such use is also a mention, so every
    # triple joins entities its fact mentions (deletion and views rely on it).
    concepts = {ref for t in out.triples for ref in (t.subject, t.object) if ref.type == CONCEPT}
    for token in doc:
        if concepts and token.pos_ in ("NOUN", "PROPN") and _argument(token) in concepts:
            first = min([token.i, *(t.i for t in _modifiers(token))])
            start = doc[first].idx
            out.mentions.append(Mention(_argument(token), offset + start,  # type: ignore[arg-type]
                                        offset + token.idx + len(token)))
    return out


# ---- arguments -----------------------------------------------------------------------------------


def _entity_span(token: Token) -> Span | None:
    for ent in token.doc.ents:
        if ent.start <= token.i < ent.end:
            return ent
    return None


def _argument(token: Token) -> ExtractedEntity | None:
    """What a subject or object token stands for, or None (dates, pronouns, vague nouns)."""
    ent = _entity_span(token)
    if ent is not None:
        kind = entity_type(ent.label_)
        return ExtractedEntity(ent.text, kind) if kind is not None else None
    if token.lower_ in FIRST_PERSON and token.pos_ == "PRON":
        return ExtractedEntity(token.text, USER)
    if token.pos_ in ("NOUN", "PROPN") and token.lemma_.lower() not in _VAGUE:
        words = [t.lower_ for t in _modifiers(token)] + [token.lemma_.lower()]
        return ExtractedEntity(" ".join(words), CONCEPT)
    return None


def _modifiers(token: Token) -> list[Token]:
    """The compound and adjective words directly before a noun ("graph database", "quarterly report")."""
    parts = [t for t in token.lefts if t.dep_ in ("compound", "amod") and t.pos_ in ("NOUN", "PROPN", "ADJ")]
    return sorted(parts, key=lambda t: t.i)


def _with_conjuncts(token: Token) -> list[Token]:
    return [token, *token.conjuncts]


def _arguments(tokens: Iterable[Token]) -> list[ExtractedEntity]:
    refs = []
    for token in tokens:
        for each in _with_conjuncts(token):
            ref = _argument(each)
            if ref is not None:
                refs.append(ref)
    return refs


# ---- triples -------------------------------------------------------------------------------------


def _predicate(verb: Token, *extra: str) -> str:
    particles = [t.lower_ for t in verb.children if t.dep_ == "prt"]
    return " ".join([verb.lemma_.lower(), *particles, *extra])


def _negated(verb: Token) -> bool:
    return any(t.dep_ == "neg" for t in verb.children)


def _subjects(verb: Token) -> list[ExtractedEntity]:
    """Explicit subjects; else a relative clause's noun; else the subject of the verb it is joined to."""
    if verb.dep_ == "relcl" and not any(c.dep_ in _SUBJECTS for c in verb.children
                                         if c.tag_ not in ("WP", "WDT") and c.lower_ != "that"):
        return _arguments([verb.head])
    explicit = [c for c in verb.children if c.dep_ in _SUBJECTS]
    if explicit:
        return _arguments(explicit)
    agent = [p for c in verb.children if c.dep_ == "agent" for p in c.children if p.dep_ == "pobj"]
    if agent:
        return _arguments(agent)
    if verb.dep_ == "conj" and verb.head.pos_ in ("VERB", "AUX"):
        return _subjects(verb.head)
    return []


def _objects(verb: Token) -> list[tuple[str, ExtractedEntity]]:
    """(predicate, object) pairs of a verb: direct objects, prepositional objects, passive subjects."""
    pairs: list[tuple[str, ExtractedEntity]] = []
    passive = [c for c in verb.children if c.dep_ == "nsubjpass"]
    for ref in _arguments(passive):
        pairs.append((_predicate(verb), ref))
    for ref in _arguments(c for c in verb.children if c.dep_ in _OBJECTS):
        pairs.append((_predicate(verb), ref))
    for prep in (c for c in verb.children if c.dep_ == "prep"):
        for ref in _arguments(p for p in prep.children if p.dep_ == "pobj"):
            pairs.append((_predicate(verb, prep.lower_), ref))
    # "the company that Bob founded": the modified noun is the object
    if verb.dep_ == "relcl" and any(c.dep_ in _SUBJECTS and c.tag_ not in ("WP", "WDT") and c.lower_ != "that"
                                    for c in verb.children) and not any(
            c.dep_ in _OBJECTS for c in verb.children if c.lower_ not in ("that", "which", "who")):
        pairs.extend((_predicate(verb), ref) for ref in _arguments([verb.head]))
    return pairs


def _possessive_be(verb: Token) -> list[Triple]:
    """"My favourite editor is VS Code" → (user, favourite editor, VS Code)."""
    if verb.lemma_ != "be":
        return []
    triples = []
    for subject in (c for c in verb.children if c.dep_ == "nsubj" and c.pos_ == "NOUN"):
        owner = [c for c in subject.children if c.dep_ == "poss" and c.lower_ in FIRST_PERSON]
        if not owner:
            continue
        relation = " ".join([t.lower_ for t in subject.lefts if t.dep_ in ("amod", "compound")]
                            + [subject.lemma_.lower()])
        for ref in _arguments(c for c in verb.children if c.dep_ in ("attr", "acomp")):
            triples.append(Triple(ExtractedEntity(owner[0].text, USER), relation, ref, _negated(verb)))
    return triples


def _appositions(doc: Doc) -> list[Triple]:
    triples = []
    for token in doc:
        if token.dep_ == "appos":
            head, appos = _argument(token.head), _argument(token)
            if head is not None and appos is not None:
                triples.append(Triple(head, "be", appos))
    return triples


def _triples(doc: Doc) -> list[Triple]:
    triples: list[Triple] = []
    for verb in doc:
        # a root with a subject is a verb even when the tagger said noun ("Alice and Bob work at ...")
        if verb.pos_ not in ("VERB", "AUX") and not (
                verb.dep_ == "ROOT" and any(c.dep_ in _SUBJECTS for c in verb.children)):
            continue
        possessive = _possessive_be(verb)
        if possessive:
            triples.extend(possessive)
            continue
        subjects = _subjects(verb)
        for predicate, obj in _objects(verb):
            triples.extend(Triple(subject, predicate, obj, _negated(verb)) for subject in subjects)
    triples.extend(_appositions(doc))
    return triples
