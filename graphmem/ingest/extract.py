"""Extract: entities, fact attributes and subject-predicate-object triples from parsed sentences.

No LLM: spaCy's NER (after the EntityRuler) gives the entities; rules over the dependency parse give the
triples. spaCy reads a sentence with its markup masked (``split.Span.clean``), so links, inline code and
emphasis never reach it and offsets stay exact. The rules, each tested on sentences in tests/test_extract.py:

* subject - verb - object: ``nsubj`` / ``dobj``; a preposition joins the predicate ("move to");
* conjunctions: conjunct subjects, objects and verbs share their partner's arguments;
* passive: ``nsubjpass`` is the object, the ``by`` agent the subject ("written by Bob" → Bob write …);
* relative clauses: "Alice, who works at Acme" → (Alice, work at, Acme);
* negation: a ``neg`` child sets ``negated``, the predicate text stays the same;
* apposition, a description set off by a comma: "Alice, the CTO of Acme" → (Alice, be, CTO);
* first person: I, me, my, mine → the namespace's user entity; "my N is X" → (user, N, X).

What is kept, and why (measured on the labelled sample of real documents in ``benchmarks/data/extraction``,
where most triples of an unrestricted parse were wrong):

* a triple's subject is a named entity or the user; its object is a named entity, the user or a specific
  *Concept* (a common-noun phrase, lemmatised, such as "coffee" or "graph database", never a generic word
  such as "thing", "example" or "value");
* questions, conditionals ("if", "unless") and hypotheticals ("may", "could", "would", "should") state no
  fact and give no triple;
* an entity name never carries markup, a URL, code, a file name, a commit hash or a version string, and
  document vocabulary ("License", "README", "Changelog") is not an organisation because NER said so once.

Arguments are named entities, the user, or a Concept; other pronouns are dropped (no coreference). DATE,
TIME and number-like entities are not entities: they become the fact's attributes. spaCy gives no
per-entity confidence, so ``confidence`` stays None rather than an invented number.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field

from spacy.tokens import Doc, Token

from graphmem.ingest.names import (
    ATTRIBUTE_LABELS,
    CONCEPT,
    FIRST_PERSON,
    NAME,
    USER,
    ExtractedEntity,
    argument_of,
    entity_span,
    modifiers_of,
    name_parts,
    named_entity,
)

_SUBJECTS = {"nsubj", "csubj"}
_OBJECTS = {"dobj", "obj", "attr", "oprd", "dative"}
# "Until recently X lacked Y", "X was initially part of Y": what held once and no longer does is no fact now
_LIMITED_TIME = frozenset({"until", "initially", "originally", "formerly", "previously", "once", "longer"})
_HYPOTHETICAL = frozenset({"may", "might", "could", "would", "should", "'d"})
_CONDITIONS = frozenset({"if", "unless", "whether"})
EXTRACTOR = "spacy-en_core_web_sm-3.8.0+rules/2"


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


def extract(doc: Doc, offset: int | Sequence[int]) -> SentenceExtraction:
    """Everything the rules find in one parsed sentence. ``offset`` places it in the document: the sentence's
    start, or (for a text whose white space was folded before parsing) the document offset of each of its
    characters."""
    positions = offset if not isinstance(offset, int) else range(offset, offset + len(doc.text) + 1)

    def span(start: int, end: int) -> tuple[int, int]:
        return positions[start], positions[end - 1] + 1

    out = SentenceExtraction()
    for ent in doc.ents:
        found = named_entity(ent)
        if found is not None:
            name, start, end = found
            out.mentions.append(Mention(name, *span(start, end)))
        elif ent.label_ in ATTRIBUTE_LABELS:
            out.attributes.append(f"{ent.label_}: {' '.join(ent.text.split())}")
    for token in doc:
        if token.lower_ in FIRST_PERSON and token.pos_ == "PRON":
            ref = ExtractedEntity(token.text, USER)
            out.mentions.append(Mention(ref, *span(token.idx, token.idx + len(token))))
    seen: set[Triple] = set()
    for triple in _triples(doc):
        if triple not in seen:
            seen.add(triple)
            out.triples.append(triple)
    # Concepts, and names NER left unlabelled, are entities only where a triple uses them; each such use is
    # also a mention, so every triple joins entities its fact mentions (the write matches a triple's ends
    # among the fact's entities, and deletion and views rely on it).
    unlabelled = {ref for t in out.triples for ref in (t.subject, t.object) if ref.type in (CONCEPT, NAME)}
    for token in doc:
        used = argument_of(token) if unlabelled and token.pos_ in ("NOUN", "PROPN") else None
        if used is not None and used in unlabelled:
            before = modifiers_of(token) if used.type == CONCEPT else name_parts(token)
            start = doc[min([token.i, *(t.i for t in before)])].idx
            out.mentions.append(Mention(used, *span(start, token.idx + len(token))))
    return out


ROLE_USERS = frozenset({"user", "human"})  # a "User:" turn: first person is the namespace's user
ROLE_OTHERS = frozenset({"assistant", "ai", "system"})  # their "I" is nobody the memory is about


def as_spoken_by(found: SentenceExtraction, speaker: str, header_at: int | None) -> SentenceExtraction:
    """The extraction of a sentence in a chat turn: "I" is the turn's speaker, not the namespace's user
    (in "Kofi (8:15 pm ...): I signed up", Kofi signed up), unless the turn is the user's own or a machine's.
    The sentence holding the header (at ``header_at``) also mentions the speaker by name."""
    role = speaker.lower()
    if role in ROLE_USERS:
        return found
    if role in ROLE_OTHERS:
        return SentenceExtraction([m for m in found.mentions if m.entity.type != USER],
                                  [t for t in found.triples if USER not in (t.subject.type, t.object.type)],
                                  found.attributes)
    person = ExtractedEntity(speaker, "Person")

    def who(entity: ExtractedEntity) -> ExtractedEntity:
        return person if entity.type == USER else entity

    mentions = [Mention(who(m.entity), m.start, m.end) for m in found.mentions]
    if header_at is not None:
        mentions.insert(0, Mention(person, header_at, header_at + len(speaker)))
    triples = [Triple(who(t.subject), t.predicate, who(t.object), t.negated) for t in found.triples]
    return SentenceExtraction(mentions, [t for t in triples if t.subject != t.object], found.attributes)


# ---- arguments -----------------------------------------------------------------------------------


def _with_conjuncts(token: Token) -> list[Token]:
    return [token, *token.conjuncts]


def _arguments(tokens: Iterable[Token]) -> list[ExtractedEntity]:
    refs = []
    for token in tokens:
        for each in _with_conjuncts(token):
            ref = argument_of(each)
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
        head = verb.head
        # "Granian is a Rust HTTP server which supports TLS": the server is Granian
        if head.dep_ == "attr" and head.head.lemma_ == "be":
            named = [a for a in _arguments(c for c in head.head.children if c.dep_ == "nsubj") if a.type != CONCEPT]
            if named:
                return named
        if head.dep_ == "appos":
            named = [a for a in _arguments([head.head]) if a.type != CONCEPT]
            if named:
                return named
        return _arguments([head])
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
    pairs += _related(_predicate(verb), passive)
    pairs += _related(_predicate(verb), [c for c in verb.children if c.dep_ in _OBJECTS])
    for prep in (c for c in verb.children if c.dep_ == "prep"):
        for predicate, ref in _related(_predicate(verb, prep.lower_), [p for p in prep.children if p.dep_ == "pobj"]):
            if prep.lower_ == "for" and ref.type == CONCEPT:
                continue  # a purpose ("uses black for formatting") is no relation between two things
            pairs.append((predicate, ref))
    # "the company that Bob founded": the modified noun is the object
    if verb.dep_ == "relcl" and any(c.dep_ in _SUBJECTS and c.tag_ not in ("WP", "WDT") and c.lower_ != "that"
                                    for c in verb.children) and not any(
            c.dep_ in _OBJECTS for c in verb.children if c.lower_ not in ("that", "which", "who")):
        pairs.extend((_predicate(verb), ref) for ref in _arguments([verb.head]))
    return pairs


def _related(predicate: str, tokens: Iterable[Token]) -> list[tuple[str, ExtractedEntity]]:
    """The objects of ``predicate``. A relational noun with its complement joins the predicate, since it
    means nothing alone: "Paris is the capital of France" → (Paris, be capital of, France); "Typer is
    FastAPI's little sibling" → (Typer, be little sibling of, FastAPI); "works on top of asyncio" → (work on
    top of, asyncio)."""
    pairs: list[tuple[str, ExtractedEntity]] = []
    for word in (each for given in tokens for each in _with_conjuncts(given)):
        complements = [p for c in word.children if c.dep_ == "prep" and c.lower_ == "of"
                       for p in c.children if p.dep_ == "pobj"]
        complements += [c for c in word.children if c.dep_ == "poss" and c.lower_ not in FIRST_PERSON]
        if entity_span(word) is None and word.pos_ == "NOUN" and complements:
            noun = " ".join([t.lower_ for t in modifiers_of(word)] + [word.lemma_.lower()])
            pairs += [(f"{predicate} {noun} of", ref) for ref in _arguments(complements)]
            continue
        ref = argument_of(word)
        if ref is not None:
            pairs.append((predicate, ref))
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
    """"Alice, the CTO of Acme" → (Alice, be, CTO): only a description set off by a comma ("License: MIT",
    "Copyright (c) 2020" are not statements, and "Davies Liu, Josh Rosen, ..." is a list of names)."""
    triples = []
    for token in doc:
        if token.dep_ == "appos" and token.left_edge.i > 0 and doc[token.left_edge.i - 1].text == ",":
            head = argument_of(token.head)
            if head is None or entity_span(token) is not None:  # a description, not a list of names
                continue
            triples += [Triple(head, predicate, ref) for predicate, ref in _related("be", [token])
                        if ref.type == CONCEPT or predicate != "be"]
    return triples


def _states_a_fact(verb: Token) -> bool:
    """Not a condition ("if X installs Y"), not under one ("If set, pip uses Z"), not hypothetical, not what
    held only until some time ("until recently", "initially")."""
    if any(c.dep_ == "aux" and c.lower_ in _HYPOTHETICAL for c in verb.children):
        return False
    if any(c.lower_ in _LIMITED_TIME and c.dep_ in ("prep", "advmod", "npadvmod") for c in verb.children):
        return False
    for clause in (verb, *verb.ancestors):
        if any(c.dep_ == "mark" and c.lower_ in _CONDITIONS for c in clause.children):
            return False
        if any(c.dep_ == "advcl" and any(m.dep_ == "mark" and m.lower_ in _CONDITIONS for m in c.children)
               for c in clause.children):
            return False
    return True


def _kept(triple: Triple) -> bool:
    """A subject that is named (or the user), an object that is named or a specific concept."""
    return triple.subject.type != CONCEPT and triple.subject != triple.object


def _triples(doc: Doc) -> list[Triple]:
    if doc.text.rstrip().endswith("?"):
        return []  # a question states nothing
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
        if not _states_a_fact(verb):
            continue
        subjects = _subjects(verb)
        for predicate, obj in _objects(verb):
            triples.extend(Triple(subject, predicate, obj, _negated(verb)) for subject in subjects)
    triples.extend(_appositions(doc))
    return [triple for triple in triples if _kept(triple)]
