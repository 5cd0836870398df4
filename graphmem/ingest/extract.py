"""Extract: entities, fact attributes and subject-predicate-object triples from parsed sentences.

No LLM: spaCy's NER (after the EntityRuler) gives the entities; rules over the dependency parse give the
triples. spaCy reads a sentence with its markup masked (``split.Span.clean``), so offsets stay exact. The
rules, each tested on sentences in tests/test_extract.py: subject-verb-object with prepositions ("move to");
conjunct subjects, objects, verbs and prepositions; passives (the ``by`` agent is the subject; without one
the participle joins the predicate, "be based in"), also in relative clauses; relative and "where" clauses
("Dale County, where Marlow is the largest town" → (Marlow, be largest town in, Dale County)); descriptions
("Alice, the CTO of Acme"; "Northwind's director Ana Ruiz" → (Ana Ruiz, be director of, Northwind), and she
is the verb's subject; "a publisher based in Oslo"); a name owning a common noun ("runs the Falcon standup" →
(run standup of, Falcon)); what a common-noun argument is said of ("starts as a designer in the Design
Guild"); a place right after a name ("at Freight Forward in Rotterdam"); the subject an infinitive or gerund
shares with its verb ("before leaving Halden"; never a wish or a plan); "to" read as a dative; negation as a
flag; first person as the user, "my N is X" → (user, N, X). Pronouns are resolved afterwards, over a
memory's sentences (``references``).

What is kept, and why (measured per genre in ``benchmarks/data/extraction``, where most triples of an
unrestricted parse were wrong): a subject that is named or the user; an object that is named, the user or a
specific *Concept* (a lemmatised common-noun phrase, "graph database", never "thing" or "value"); no triple
from questions, conditionals ("if", "unless"), hypotheticals ("may", "would") or what held only until some
time; names never carry markup, a URL, code, a file name, a hash or a version. DATE, TIME and number-like
entities become the fact's attributes. spaCy gives no per-entity confidence, so none is invented.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

from spacy.tokens import Doc, Token

from graphmem.ingest.names import (
    ATTRIBUTE_LABELS,
    CONCEPT,
    FIRST_PERSON,
    USER,
    ExtractedEntity,
    argument_of,
    entity_span,
    modifiers_of,
    name_tokens,
    named_entity,
    noun_lemma,
    without_trailing_nouns,
)
from graphmem.ingest.phrases import (
    arguments,
    description,
    is_named,
    is_place,
    named_part,
    noun_phrase,
    pobjs,
    prepositions,
    related,
)

_SUBJECTS = {"nsubj", "csubj"}
_OBJECTS = {"dobj", "obj", "attr", "oprd", "dative"}
# "Until recently X lacked Y", "X was initially part of Y": what held once and no longer does is no fact now
_LIMITED_TIME = frozenset({"until", "initially", "originally", "formerly", "previously", "once", "longer"})
_HYPOTHETICAL = frozenset({"may", "might", "could", "would", "should", "'d"})
# Verbs whose infinitive says what is meant, not what is done ("wants to resell", "plans to move")
_INTENTIONS = frozenset({"want", "plan", "hope", "intend", "aim", "try", "need", "wish", "expect", "like", "love",
                         "prefer", "decide", "seek", "mean", "explain", "learn", "know", "offer", "promise", "ask",
                         "refuse", "fail", "forget", "design", "use", "come", "go", "have"})
_DONE_WHEN = frozenset({"before", "after", "by", "while", "since", "on", "upon"})  # "before leaving Halden"
_CONDITIONS = frozenset({"if", "unless", "whether"})
EXTRACTOR = "spacy-en_core_web_sm-3.8.0+rules/4"


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
    topic: ExtractedEntity | None = None  # what the sentence is about: its main clause's named subject



def extract(doc: Doc, offset: int | Sequence[int]) -> SentenceExtraction:
    """Everything the rules find in one parsed sentence. ``offset`` places it in the document: the sentence's
    start, or (for a text whose white space was folded before parsing) the document offset of each of its
    characters."""
    positions = offset if not isinstance(offset, int) else range(offset, offset + len(doc.text) + 1)

    def span(start: int, end: int) -> tuple[int, int]:
        return positions[start], positions[end - 1] + 1

    out = SentenceExtraction()
    doc.ents = [trimmed for trimmed in map(without_trailing_nouns, doc.ents) if trimmed is not None]
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
    out.topic = _topic(doc)
    seen: set[Triple] = set()
    for triple in _triples(doc):
        if triple not in seen:
            seen.add(triple)
            out.triples.append(triple)
    # Concepts, names NER left unlabelled and pronouns are entities only where a triple uses them; each such use is
    # also a mention, so every triple joins entities its fact mentions (the write matches a triple's ends
    # among the fact's entities, and deletion and views rely on it).
    mentioned = {m.entity for m in out.mentions}
    unlabelled = {ref for t in out.triples for ref in (t.subject, t.object) if ref not in mentioned}
    for token in doc:
        used = argument_of(token) if unlabelled and token.pos_ in ("NOUN", "PROPN", "PRON", "ADJ", "X") else None
        if used is not None and used in unlabelled:
            words = [*modifiers_of(token), token] if used.type == CONCEPT else name_tokens(token)
            first, last = min(words, key=lambda t: t.i), max(words, key=lambda t: t.i)
            out.mentions.append(Mention(used, *span(first.idx, last.idx + len(last))))
    return out


def _topic(doc: Doc) -> ExtractedEntity | None:
    """The named subject of the sentence's main clause ("Ledger is the billing service of Quayside" is about
    Ledger), or a pronoun standing for one."""
    roots = [t for t in doc if t.dep_ == "ROOT"]  # the last: a fact may hold a short sentence joined to it
    subjects = [c for root in roots[-1:] for c in root.children if c.dep_ in ("nsubj", "nsubjpass")]
    return next((ref for ref in arguments(subjects) if ref.type not in (CONCEPT, USER)), None)


# ---- clauses ----------------------------------------------------------------------------------


def _relative(token: Token) -> bool:
    """A relative pronoun standing for the noun its clause describes ("which", "who", "that")."""
    return token.tag_ in ("WP", "WDT") or token.lower_ == "that"


def _where(verb: Token) -> bool:
    """A "where" clause: "Dale County, where Marlow is the largest town" is about a place."""
    return verb.dep_ == "relcl" and any(c.dep_ == "advmod" and c.lower_ == "where" for c in verb.children)


# ---- triples -------------------------------------------------------------------------------------


def _predicate(verb: Token, *extra: str) -> str:
    particles = [t.lower_ for t in verb.children if t.dep_ == "prt"]
    return " ".join([verb.lemma_.lower(), *particles, *extra])


def _negated(verb: Token) -> bool:
    return any(t.dep_ == "neg" for t in verb.children)


def _agents(verb: Token) -> list[Token]:
    """The ``by`` phrase of a passive: "written by Bob"."""
    return [p for c in verb.children if c.dep_ == "agent" for p in c.children if p.dep_ == "pobj"]


def _stative_passive(verb: Token) -> bool:
    """A passive with no agent ("is based in", "was born in", "is located in"): its grammatical subject is
    the relation's subject and the participle joins the predicate ("be based in")."""
    return any(c.dep_ == "nsubjpass" for c in verb.children) and not _agents(verb)


def _subjects(verb: Token) -> list[ExtractedEntity]:
    """Explicit subjects; else a relative clause's noun; else a passive's agent (or, without one, its
    grammatical subject); else the subject of the verb it is joined to."""
    explicit = [c for c in verb.children if c.dep_ in _SUBJECTS]
    if verb.dep_ == "relcl" and not _where(verb) and all(_relative(c) for c in explicit):
        if _agents(verb):  # "the bridge, which was designed by Hugo Marchetti": Hugo Marchetti designed it
            return arguments(_agents(verb))
        head = verb.head
        # "Granian is a Rust HTTP server which supports TLS": the server is Granian
        if head.dep_ == "attr" and head.head.lemma_ == "be":
            named = [a for a in arguments(c for c in head.head.children if c.dep_ == "nsubj") if a.type != CONCEPT]
            if named:
                return named
        if head.dep_ == "appos":
            named = [a for a in arguments([head.head]) if a.type != CONCEPT]
            if named:
                return named
        return arguments([head])
    if explicit:
        return arguments(explicit)
    # "Dan forwarded it to Priya": the small model reads a name opening a short note as a modifier of its verb
    opening = [c for c in verb.children if verb.dep_ == "ROOT" and c.i == verb.sent.start and c.dep_ in (
        "npadvmod", "nmod") and c.pos_ == "PROPN" and verb.tag_ in ("VBD", "VBZ", "VBP")]
    if opening and is_named(argument_of(opening[0])):
        return arguments(opening)
    if _agents(verb):
        return arguments(_agents(verb))
    if _stative_passive(verb):
        return arguments(c for c in verb.children if c.dep_ == "nsubjpass")
    if verb.dep_ == "conj" and verb.head.pos_ in ("VERB", "AUX"):
        # "The ferry is operated by the Guild and sails to Brenn": the ferry sails, not the Guild
        shared = [c for c in verb.head.children if c.dep_ in (*_SUBJECTS, "nsubjpass") and not _relative(c)]
        return arguments(shared) if shared else _subjects(verb.head)
    controller = _controller(verb)
    return _subjects(controller) if controller is not None else []


def _controller(verb: Token) -> Token | None:
    """The verb whose subject an infinitive or gerund without one shares, where it states what was done:
    "agreed to extend the pilot", "before leaving Halden", "Using Redis, it caches ...". Not a wish, plan or
    purpose ("wants to resell", "met to go through"), not what was not done ("without flushing"), not a
    passive ("designed to be used"), not after an object ("asked Oskar to translate" is Oskar's translating)."""
    head = verb.head
    if any(c.dep_ == "auxpass" or c.lower_ in ("how", "whether") for c in verb.children):
        return None
    if verb.dep_ == "pcomp" and head.dep_ == "prep" and head.lower_ in _DONE_WHEN:
        head = head.head
    elif verb.dep_ == "xcomp":
        if head.lemma_.lower() in _INTENTIONS or any(c.dep_ in _OBJECTS for c in head.children):
            return None
    elif not (verb.dep_ == "advcl" and verb.tag_ == "VBG" and not any(c.dep_ == "mark" for c in verb.children)):
        return None
    return head if head.pos_ in ("VERB", "AUX") and head is not verb else None


def _objects(verb: Token) -> list[tuple[str, ExtractedEntity]]:
    """(predicate, object) pairs of a verb: direct objects, prepositional objects (each of joined prepositions:
    "through Velmont and into Lake Amsel"), passive subjects; a "where" clause's place."""
    if _stative_passive(verb):
        base = " ".join(["be", verb.lower_, *(t.lower_ for t in verb.children if t.dep_ == "prt")])
        return [pair for prep in prepositions(verb)
                for pair in related(f"{base} {prep.lower_}", pobjs(prep))]
    pairs: list[tuple[str, ExtractedEntity]] = []
    passive = [c for c in verb.children if c.dep_ == "nsubjpass"]
    if not passive and _agents(verb) and verb.dep_ == "conj":  # "Orchard was started by A and is kept by B"
        passive = [c for c in verb.head.children if c.dep_ == "nsubjpass"]
    if verb.dep_ == "relcl" and any(_relative(c) for c in passive):
        pairs += related(_predicate(verb), [verb.head])  # "the bridge, which was designed by ...": the bridge
    else:
        pairs += related(_predicate(verb), passive)
    objects = [c for c in verb.children if c.dep_ in _OBJECTS and not _relative(c)]
    where = _where(verb)
    if where and verb.lemma_ == "be":  # "where Marlow is the largest town" → (Marlow, be largest town in, ...)
        for noun in objects:
            phrase = noun_phrase(noun)
            pairs += [(f"be {phrase} in", ref) for ref in arguments([verb.head]) if is_named(ref)]
        return pairs
    pairs += related(_predicate(verb), objects)
    for prep in prepositions(verb):
        for predicate, ref in related(_predicate(verb, prep.lower_), pobjs(prep)):
            if prep.lower_ == "for" and ref.type == CONCEPT and not any(map(named_part, pobjs(prep))):
                continue  # a purpose ("uses black for formatting") is no relation between two things
            pairs.append((predicate, ref))
    if where:  # "the town where she lives": she lives in the town
        pairs += [(_predicate(verb, "in"), ref) for ref in arguments([verb.head])]
    # "the company that Bob founded": the modified noun is the object
    elif verb.dep_ == "relcl" and any(c.dep_ in _SUBJECTS and not _relative(c) for c in verb.children) \
            and not objects:
        pairs.extend((_predicate(verb), ref) for ref in arguments([verb.head]))
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
                            + [noun_lemma(subject)])
        for ref in arguments(c for c in verb.children if c.dep_ in ("attr", "acomp")):
            triples.append(Triple(ExtractedEntity(owner[0].text, USER), relation, ref, _negated(verb)))
    return triples


def _appositions(doc: Doc) -> list[Triple]:
    """"Alice, the CTO of Acme" → (Alice, be, CTO): only a description set off by a comma ("License: MIT",
    "Copyright (c) 2020" are not statements, and "Davies Liu, Josh Rosen, ..." is a list of names). A name
    beside a description that has a complement says the same the other way round: "Northwind's director Ana
    Ruiz", "the director of Northwind, Ana Ruiz" → (Ana Ruiz, be director of, Northwind). A name with "from"
    or "at" says where it belongs: "Rob from Corvane called" → (Rob, be from, Corvane)."""
    triples = []
    for token in doc:
        if token.dep_ == "appos":
            name = argument_of(token)
            if is_named(name) and description(token.head):
                triples += [Triple(name, predicate, ref) for predicate, ref in related("be", [token.head])  # type: ignore[arg-type]
                            if predicate != "be" and is_named(ref)]
                continue
        if token.dep_ == "appos" and token.left_edge.i > 0 and doc[token.left_edge.i - 1].text == ",":
            head = argument_of(token.head)
            if head is None or entity_span(token) is not None:  # a description, not a list of names
                continue
            triples += [Triple(head, predicate, ref) for predicate, ref in related("be", [token])
                        if ref.type == CONCEPT or predicate != "be"]
        elif token.dep_ == "prep" and token.lower_ in ("from", "at") and is_named(argument_of(token.head)):
            owner = argument_of(token.head)
            triples += [Triple(owner, f"be {token.lower_}", ref)  # type: ignore[arg-type]
                        for ref in arguments(pobjs(token)) if is_named(ref)]
    return triples


def _states_a_fact(verb: Token) -> bool:
    """Not a condition ("if X installs Y"), not under one ("If set, pip uses Z"), not hypothetical, not a
    state that held only until some time ("until recently", "initially"; "was once part of", while "once
    sailed to" tells of an event that happened)."""
    if any(c.dep_ == "aux" and c.lower_ in _HYPOTHETICAL for c in verb.children):
        return False
    limited = _LIMITED_TIME if verb.lemma_ in ("be", "have") else _LIMITED_TIME - {"once"}
    if any(c.lower_ in limited and c.dep_ in ("prep", "advmod", "npadvmod") for c in verb.children):
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
    triples.extend(_located(doc))
    return [triple for triple in triples if _kept(triple)]


def _located(doc: Doc) -> list[Triple]:
    """A named thing placed right after it, as a verb's object: "at Freight Forward in Rotterdam" →
    (Freight Forward, be in, Rotterdam); "opened the new Lisbon office in Alfama" → (lisbon office, be in,
    Alfama). Only a place places it ("announced the handbook in Slack" says where it was announced)."""
    triples = []
    for token in doc:
        named = argument_of(token) if token.dep_ in ("pobj", "dobj") else None
        if named is None or not (is_named(named) or named_part(token)):
            continue
        for prep in (c for c in token.children if c.dep_ == "prep" and c.lower_ in ("in", "on", "at")):
            triples += [Triple(named, f"be {prep.lower_}", ref) for pobj in pobjs(prep)
                        if (ref := argument_of(pobj)) is not None and is_place(pobj, ref)]
    return triples
