"""Phrases: what a noun phrase names and how it relates, for the clause rules of ``extract``.

An argument is the name, the user or the specific Concept a token stands for, a description standing for the
name beside it ("Northwind's director Ana Ruiz"), with its conjuncts. A noun phrase can itself state a
relation that joins the predicate: a relational noun and its complement ("the capital of France"), a name
owning a common noun ("the Falcon standup", not "a Rust HTTP server" or "the Harbour room"), what a common
noun is said of ("a designer in the Design Guild") or, after "be", where it is placed ("the largest port in
Eastmere").
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence

from spacy.tokens import Token

from graphmem.ingest.names import (
    CONCEPT,
    USER,
    ExtractedEntity,
    argument_of,
    entity_span,
    is_title,
    modifiers_of,
    named_entity,
    noun_lemma,
)


def with_conjuncts(token: Token) -> list[Token]:
    return [token, *token.conjuncts]


def arguments(tokens: Iterable[Token]) -> list[ExtractedEntity]:
    """What the tokens stand for; a description that a name stands beside is that name ("Northwind's
    director Ana Ruiz founded ...", "Its capital, Sarn, lies ..." are about Ana Ruiz and Sarn)."""
    refs = []
    for token in tokens:
        for each in with_conjuncts(token):
            ref = argument_of(each)
            if ref is None or ref.type == CONCEPT:
                ref = next((named for named in map(argument_of, _named_appositions(each)) if named), ref)
            if ref is not None:
                refs.append(ref)
    return refs


def _named_appositions(token: Token) -> list[Token]:
    """The names set beside a description ("director Ana Ruiz", "the mayor, Dina Okoro,")."""
    return [c for c in token.children if c.dep_ == "appos" and is_named(argument_of(c))]


def is_named(ref: ExtractedEntity | None) -> bool:
    return ref is not None and ref.type not in (CONCEPT, USER)


def prepositions(verb: Token) -> list[Token]:
    """A verb's prepositions, and "to" read as a dative ("sends its alerts to PagerDuty")."""
    return [each for c in verb.children if c.dep_ in ("prep", "dative")
            for each in with_conjuncts(c) if each.pos_ == "ADP"]


def pobjs(prep: Token) -> list[Token]:
    return [p for p in prep.children if p.dep_ == "pobj"]


_NOUN_PREPOSITIONS = frozenset({"in", "at", "from", "for", "on", "to", "with", "about"})
# As a noun's modifier these say what kind of thing it is, where, on which platform or about what ("a Rust
# HTTP server", "the Lisbon office", "a Slack bot", "a GDPR chapter"), not whose part it is.
_KIND_NAMES = frozenset({"Technology", "Language", "Place", "Product", "Law"})
# Nouns a name before them names rather than owns: "the Harbour room" is a room called Harbour, "the popular
# Hypothesis library" a library called Hypothesis.
_NAMED_HEADS = frozenset({"room", "street", "road", "avenue", "lane", "square", "hall", "building", "station",
                          "bridge", "yard", "depot", "library", "framework", "package", "module", "tool", "app",
                          "application", "service", "plugin", "project", "platform", "product", "system"})
_PLACE_LABELS = frozenset({"GPE", "LOC", "FAC"})  # NER's place, even where the evidence left its type unknown


def related(predicate: str, tokens: Iterable[Token]) -> list[tuple[str, ExtractedEntity]]:
    """The objects of ``predicate``. A relational noun with its complement joins the predicate, since it
    means nothing alone: "Paris is the capital of France" → (Paris, be capital of, France); "Typer is
    FastAPI's little sibling" → (Typer, be little sibling of, FastAPI); "works on top of asyncio" → (work on
    top of, asyncio). After "be", a description placed by a name says how the two relate: "the largest port
    in Eastmere" → (be largest port in, Eastmere), "a publisher based in Port Halloway" → (be based in, Port
    Halloway); the description stays an object too."""
    pairs: list[tuple[str, ExtractedEntity]] = []
    for word in (each for given in tokens for each in with_conjuncts(given)):
        complements = [p for c in word.children if c.dep_ == "prep" and c.lower_ == "of" for p in pobjs(c)]
        complements += [c for c in word.children if c.dep_ == "poss" and c.pos_ != "PRON"]
        named = _named_modifiers(word)
        if description(word) and (complements or named):
            phrase = noun_phrase(word, without=named)
            pairs += [(f"{predicate} {phrase} of", ref) for ref in arguments([*complements, *named[:1]])]
        else:
            ref = argument_of(word)
            if ref is not None:
                pairs.append((predicate, ref))
        if description(word):
            pairs += _placed(word) if predicate == "be" else _said_of(predicate, word)
    return pairs


def description(word: Token) -> bool:
    """A common noun or a title, not part of a name ("the capital", "the CTO"; not "Leeds City Council")."""
    span = entity_span(word)
    return (word.pos_ == "NOUN" or is_title(word)) and (span is None or named_entity(span) is None)


def _said_of(predicate: str, noun: Token) -> list[tuple[str, ExtractedEntity]]:
    """What a common-noun argument is said of joins the predicate: "shows notifications from Beacon", "starts
    as our second designer in the Design Guild", "hosts the demos in the Lisbon office"."""
    return [(said, ref) for prep in noun.children if prep.dep_ == "prep" and prep.lower_ in _NOUN_PREPOSITIONS
            for said, ref in related(f"{predicate} {noun_phrase(noun)} {prep.lower_}", pobjs(prep))
            if is_named(ref) or any(named_part(p) and argument_of(p) == ref for p in pobjs(prep))]


def _placed(noun: Token) -> list[tuple[str, ExtractedEntity]]:
    """A description's relation to a name it is placed by: "port in Eastmere", "architect from Lintz",
    "publisher based in Port Halloway"."""
    pairs = [(f"be {noun_phrase(noun)} {prep.lower_}", ref) for prep in noun.children
             if prep.dep_ == "prep" and prep.lower_ in _NOUN_PREPOSITIONS for ref in arguments(pobjs(prep))]
    for participle in (c for c in noun.children if c.dep_ == "acl" and c.tag_ == "VBN"):
        pairs += [(f"be {participle.lower_} {prep.lower_}", ref) for prep in prepositions(participle)
                  for ref in arguments(pobjs(prep))]
    return [(predicate, ref) for predicate, ref in pairs if is_named(ref)]


def noun_phrase(noun: Token, without: Sequence[Token] = ()) -> str:
    left_out = {t.i for named in without for t in (entity_span(named) or named.subtree)}
    return " ".join([t.lower_ for t in modifiers_of(noun) if t.i not in left_out] + [noun_lemma(noun)])


def named_part(noun: Token) -> bool:
    """A common noun made specific by a name before it ("the Lisbon office", "the Falcon demo"), not by a kind
    ("a Java port")."""
    refs = (argument_of(c) for c in noun.children if c.dep_ == "compound")
    return any(ref is not None and is_named(ref) and ref.type not in _KIND_NAMES - {"Place"} for ref in refs)


def _named_modifiers(noun: Token) -> list[Token]:
    """A name that qualifies a common noun, as whose part or thing the noun is meant: "the Falcon standup",
    "the Halden Insurance account", "the Night Owls rota" (the standup of Falcon, ...). Only a name that
    leads the phrase, of none of the ``_KIND_NAMES`` types, before no noun it names (``_NAMED_HEADS``)."""
    compounds = [c for c in noun.lefts if c.dep_ == "compound"]
    if not compounds or noun.lemma_.lower() in _NAMED_HEADS:
        return []
    if len(compounds) > 1 and entity_span(compounds[0]) is None:
        return []  # "Night" and "Owls" each before "rota": a name NER did not find whole
    first = compounds[0]  # the name leads the phrase when no other word but an adjective stands before it
    if any(t.i < min(s.i for s in first.subtree) and t.pos_ != "ADJ" for t in modifiers_of(noun)):
        return []
    span, ref = entity_span(first), argument_of(first)
    if (span is not None and (span.end > noun.i or span.label_ in _PLACE_LABELS)) or ref is None \
            or not is_named(ref) or ref.type in _KIND_NAMES or ref.name.isupper():
        return []  # an acronym before a noun is a kind of it: "an HTTP library", "a GDPR chapter"
    return [first]


def is_place(token: Token, ref: ExtractedEntity) -> bool:
    """A place by its type, or a name NER read as a place where the evidence left its type unknown."""
    span = entity_span(token)
    return ref.type == "Place" or (is_named(ref) and span is not None and span.label_ in _PLACE_LABELS)
