"""What a token or an entity span stands for: which named entities become entities (and with which type), what
a clean entity name is, and what a subject or object token names (a named entity, the user, an unlabelled
proper name, or a specific Concept). ``extract`` builds mentions and triples from these answers.

Measured on the labelled sample in ``benchmarks/data/extraction`` (the module docstring of ``extract`` says
what is kept and why): an entity name never carries markup, a URL, code, a file name, a commit hash or a
version string; document vocabulary is never an organisation because NER said so once; generic words are
never Concepts.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Iterable
from dataclasses import dataclass
from functools import lru_cache

from spacy.tokens import Doc, Span, Token

from graphmem.ingest.evidence import NAME as NAME
from graphmem.ingest.evidence import evidenced_type, words_type

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
PRONOUN = "Pronoun"  # marker type of a subject "it", "he" or "she"; resolved to an earlier subject or dropped
SUBJECT_PRONOUNS = frozenset({"it", "he", "she"})
OBJECT_IT = "it (object)"
FIRST_PERSON = {"i", "me", "my", "mine", "myself"}
_VAGUE = frozenset({
    "thing", "something", "anything", "everything", "nothing", "lot", "way", "time", "one", "kind", "sort", "bit",
    "stuff", "who", "which", "that", "what", "work", "home", "part", "use", "case", "example", "value", "number",
    "set", "list", "type", "name", "result", "option", "default", "feature", "change", "problem", "issue", "bug",
    "fix", "support", "version", "release", "line", "file", "code", "function", "method", "module", "object",
    "class", "instance", "item", "element", "field", "property", "argument", "parameter", "variable", "string",
    "data", "information", "detail", "note", "section", "page", "document", "text", "word", "term", "purpose",
    "reason", "fact", "point", "place", "level", "form", "order", "state", "step", "end", "start", "side",
    "other", "others", "same", "more", "most", "all", "each", "both", "none", "rest", "need", "able", "people",
    "following", "concept", "shoulder", "deal", "usability", "simplicity", "sentence", "bunch", "couple",
    "functionality", "dependency", "dependencies", "thanks", "help", "hand", "idea", "question", "answer",
    "entity", "shoulders",
})
# Words that open a changelog entry ("Updated License to ...", "Fixup build errors"): NER reads them as a name.
_ENTRY_VERBS = frozenset({
    "add", "added", "adds", "update", "updated", "updates", "fix", "fixed", "fixes", "fixup", "remove", "removed",
    "removes", "change", "changed", "changes", "merge", "merged", "bump", "bumped", "improve", "improved",
    "building", "build", "use", "using", "support", "supports", "drop", "dropped", "allow", "allowed", "handle",
    "handled", "make", "made", "move", "moved", "rename", "renamed", "refactor", "refactored", "deprecate",
    "enable", "enabled", "disable", "disabled", "expand", "expanded", "upgrade", "upgraded", "prefer", "revert",
    "reverted", "replace", "replaced", "introduce", "introduced", "release", "released", "new",
})
# Document vocabulary that NER tends to call an organisation or a person; never an entity of its own.
_DOCUMENT_WORDS = frozenset({
    "license", "licence", "readme", "changelog", "changes", "copyright", "notice", "warning", "note", "todo",
    "usage", "installation", "install", "example", "examples", "documentation", "docs", "features", "contributing",
    "contributors", "contributor", "authors", "author", "requirements", "abstract", "introduction", "summary",
    "overview", "disclaimer", "warranty", "section", "appendix", "api", "cli", "faq", "licensor", "licensee",
    "work", "works", "contribution", "contributions", "derivative works", "object form", "source form",
    "unreleased", "added", "changed", "fixed", "removed", "deprecated", "security", "breaking changes", "tip",
    "important", "caution", "see also", "legal entity", "you", "your",
})
_BAD_NAME_CHARS = re.compile(r"[/\\=(){}<>|@$%^*`~\[\];_\"]|::|\.\.")
_FILE_NAME = re.compile(r"^[\w.-]+\.(?:py|md|rst|txt|json|ya?ml|toml|cfg|ini|js|mjs|ts|html?|css|sh|lock|xml|csv|exe"
                        r"|dll|so|whl|gz|zip|png|jpg|svg)$", re.I)
_CODE_NAME = re.compile(r"^[a-z_][\w]*(?:\.[a-z_][\w]*)+$|^[0-9a-f]{7,40}$|^v?\d+(?:\.\d+)+\w*$")
_ARTICLES = frozenset({"the", "a", "an"})
_FUNCTION_WORDS = frozenset({"of", "or", "and", "in", "to", "for", "the", "a", "an", "with", "on", "at", "by"})
_NOT_A_NAME_CHAR = re.compile(r"[^\w\s+#-]")
_PASSING = frozenset({"new", "old", "own", "current", "same", "other", "whole", "entire", "next", "last",
                      "previous", "existing", "various", "several", "certain", "usual"})
# Job titles NER calls organisations ("Tidewater's CEO"): a title, never an entity of its own.
_TITLES = frozenset({"ceo", "cto", "cfo", "coo", "cio", "ciso", "cpo", "vp", "svp", "evp", "md"})
_LABEL = re.compile(r"^[A-Z][A-Z_]{0,40}$")


# Capitalised inside a sentence ("... with Pelican", "... for Compass"): how a document writes a name. At the
# start of a sentence the small model often tags such a word as an adjective or a common noun.
_INSIDE = re.compile(r"(?<=[a-z0-9,;] )[A-Z][A-Za-z0-9]+")
_CAPITALISED = re.compile(r"\b[A-Z][a-z0-9]+\b")
_LOWER = re.compile(r"\b[a-z][a-z0-9]+\b")


@dataclass(frozen=True)
class TextNames:
    """How one text writes its words: ``names``, the words it writes as names (capitalised inside a sentence,
    or capitalised twice or more and never in lower case); ``never_lower``, the capitalised words it never
    writes in lower case."""

    names: frozenset[str] = frozenset()
    never_lower: frozenset[str] = frozenset()


if not Doc.has_extension("names_in_text"):
    Doc.set_extension("names_in_text", default=TextNames())


def names_in_text(sentences: Iterable[str]) -> TextNames:
    """A sentence of the same text that starts with one of its names ("Pelican reads balances from Ledger",
    "Ledger is the billing service") starts with a name, whatever the tagger says."""
    texts = list(sentences)
    capitalised = Counter(word for text in texts for word in _CAPITALISED.findall(text))
    lower = {word for text in texts for word in _LOWER.findall(text)}
    never_lower = frozenset(word for word in capitalised if word.lower() not in lower)
    return TextNames(frozenset(word for text in texts for word in _INSIDE.findall(text)) | {
        word for word in never_lower if capitalised[word] > 1}, never_lower)


def _written_as_name(token: Token) -> bool:
    known: TextNames = token.doc._.names_in_text
    return token.tag_ in ("NNP", "NNPS") \
        or (token.text in known.names and token.pos_ in ("NOUN", "PROPN", "ADJ", "X")) \
        or (token.text in known.never_lower and _bare_subject(token))


def _bare_subject(token: Token) -> bool:
    """A capitalised singular noun that opens its sentence as its subject with no article or possessive:
    "Ines hired Clara Sousa", "Corvane published the Freight Outlook". The small model tags such a name as a
    common noun; a common noun there would have its article ("The dashboard shows ...")."""
    head = token.head
    finite = head.tag_ in ("VBD", "VBZ") or any(c.dep_ == "aux" and c.tag_ == "MD" for c in head.children)
    return token.i == token.sent.start and token.tag_ == "NN" and token.dep_ in ("nsubj", "nsubjpass") and finite \
        and not any(c.dep_ in ("det", "poss", "compound", "amod") for c in token.children)


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


def name_is_clean(name: str) -> bool:
    """A name a person would write as one: letters in it, no markup, URL, code, file name, hash or version."""
    if not any(ch.isalpha() for ch in name) or len(name) < 2 or len(name) > 80 or len(name.split()) > 8:
        return False
    if name in ("C#", "F#"):
        return True
    if _BAD_NAME_CHARS.search(name) or _CODE_NAME.match(name) or "#" in name:
        return False
    file_name = _FILE_NAME.match(name)
    return not file_name or (name.rsplit(".", 1)[-1].lower() in ("js", "ts") and any(c.isupper() for c in name))


def is_title(token: Token) -> bool:
    """A job title ("CEO", "CTO"): a description, whatever the tagger or NER make of it."""
    return token.lower_ in _TITLES


def without_trailing_nouns(ent: Span) -> Span | None:
    """An NER span without the lower-case common nouns it ran on into ("the Night Owls rota" names the Night
    Owls; the rota is theirs); None when nothing capitalised is left. The ruler's own names ("pandas") stay."""
    end = ent.end
    while end > ent.start and ent.doc[end - 1].pos_ == "NOUN" and ent.doc[end - 1].is_lower \
            and ent.label_ not in ("TECHNOLOGY", "PRODUCT"):
        end -= 1
    if end == ent.end:
        return ent
    kept = ent.doc[ent.start:end]
    return Span(ent.doc, ent.start, end, label=ent.label_) if any(t.text[:1].isupper() for t in kept) else None


def named_entity(ent: Span) -> tuple[ExtractedEntity, int, int] | None:
    """The entity an NER (or EntityRuler) span names, with its (start, end) in the sentence; None when the
    span is not an entity: an attribute label, a name that is not clean, document vocabulary, a lower-case
    common noun that NER guessed (the ruler's own names, such as "pandas", stay), a fragment ending in a
    function word ("Derivative Works of"), or (except for people and places, where NER is reliable) a span in
    which the tagger saw no proper noun ("Automatic", "Unexpected" opening a sentence). Leading articles and
    masked markup are left out of the name."""
    kind = entity_type(ent.label_)
    tokens = [t for t in ent if not t.is_space]
    while tokens and tokens[0].lower_ in _ARTICLES:
        tokens = tokens[1:]
    while tokens and tokens[-1].tag_ == "POS":  # "Project Osprey's": the name is Project Osprey
        tokens = tokens[:-1]
    if kind is None or not tokens:
        return None
    name = " ".join(t.text for t in tokens)
    if not name_is_clean(name) or name.lower() in _DOCUMENT_WORDS | _TITLES or tokens[-1].lower_ in _FUNCTION_WORDS \
            or any(t.text == "," for t in tokens):  # "Dina Okoro, Marlow's mayor": two names NER ran together
        return None
    if tokens[0].lower_ in _ENTRY_VERBS or _shouting(ent.sent):
        return None
    if kind not in ("Person", "Place") and ent.label_ not in ("TECHNOLOGY", "PRODUCT") \
            and not any(_written_as_name(t) or _marked(t.text) for t in tokens):
        return None  # the tagger read no proper noun here: a capitalised common word NER guessed at
    kind = evidenced_type(ent, [t.text for t in tokens], kind)
    return ExtractedEntity(name, kind), tokens[0].idx, tokens[-1].idx + len(tokens[-1])


def _marked(text: str) -> bool:
    """Written as no common word is: inner capitals or digits ("FastAPI", "Neo4j"), not all capitals."""
    return (any(c.isupper() for c in text[1:]) or any(c.isdigit() for c in text)) and not text.isupper()


def entity_span(token: Token) -> Span | None:
    """The entity span ``token`` is in, read from the IOB tags around it (``doc.ents`` builds every span of
    the sentence on each access, and extraction asks this of most tokens)."""
    if not token.ent_type:
        return None
    doc = token.doc
    start, end = token.i, token.i + 1
    while doc[start].ent_iob_ == "I" and start > 0:
        start -= 1
    while end < len(doc) and doc[end].ent_iob_ == "I":
        end += 1
    return Span(doc, start, end, label=doc[start].ent_type_)


def argument_of(token: Token) -> ExtractedEntity | None:
    """What a subject or object token stands for, or None (dates, pronouns, vague nouns)."""
    ent = entity_span(token)
    if ent is not None:
        found = named_entity(ent)
        if found is not None:
            return found[0]
        if ent.label_ in ATTRIBUTE_LABELS:
            return None  # dates and numbers are attributes, never arguments
    if token.lower_ in FIRST_PERSON and token.pos_ == "PRON":
        return ExtractedEntity(token.text, USER)
    if token.lower_ in SUBJECT_PRONOUNS and token.pos_ == "PRON" and token.dep_ in ("nsubj", "nsubjpass"):
        return ExtractedEntity(token.lower_, PRONOUN)
    if token.lower_ == "it" and token.pos_ == "PRON" and _sole_object(token):
        return ExtractedEntity(OBJECT_IT, PRONOUN)  # never its own sentence's subject ("runs it")
    if _proper_name(token):
        words = [t.text for t in name_tokens(token)]
        name = " ".join(words)
        return ExtractedEntity(name, words_type(words) or NAME) if name_is_clean(name) else None
    if token.pos_ in ("NOUN", "PROPN") and noun_lemma(token) not in _VAGUE:
        if any(c.dep_ == "prep" and c.lower_ == "of" for c in token.children):
            return None  # "the little sibling of FastAPI": the concept means nothing without its complement
        name = _concept_name(token)
        return ExtractedEntity(name, CONCEPT) if name_is_clean(name) else None
    return None


def _sole_object(token: Token) -> bool:
    """An object "it" with no noun before it in its sentence that it could stand for ("The team runs it";
    not "loads the warehouse and models it")."""
    return token.dep_ in ("dobj", "pobj") and not any(
        t.pos_ in ("NOUN", "PROPN") and t.dep_ in ("dobj", "pobj", "attr") for t in token.doc[:token.i])


def name_parts(token: Token) -> list[Token]:
    """The capitalised proper nouns compounded before a name's head ("Beta" of "Beta Labs"), in order."""
    return sorted((t for t in token.lefts if t.dep_ == "compound" and t.tag_ in ("NNP", "NNPS")
                   and t.text[:1].isupper()), key=lambda t: t.i)


def name_tokens(token: Token) -> list[Token]:
    """The words of a proper name NER left unlabelled, in order: its compounded parts, its head and a proper
    "of" complement right after it ("Treaty of Sarn", "Academy of Sciences"), which names a different thing
    than the head alone."""
    tokens = [*name_parts(token), token]
    of = next((c for c in token.rights if c.dep_ == "prep" and c.lower_ == "of" and c.i == token.i + 1), None)
    if of is not None:
        tail = next((c for c in of.children if c.dep_ == "pobj"), None)
        if tail is not None and _proper_name(tail) and entity_span(tail) is None:
            tokens += [of, *name_parts(tail), tail]
    return tokens


def _shouting(sentence: Span) -> bool:
    """Mostly capital letters (a licence's disclaimer): its capitalised words are not names."""
    return _shouting_text(sentence.text)


@lru_cache(maxsize=4096)  # asked of the same sentence for each of its names
def _shouting_text(text: str) -> bool:
    letters = [ch for ch in text if ch.isalpha()]
    return len(letters) > 20 and sum(ch.isupper() for ch in letters) > 0.6 * len(letters)


def _proper_name(token: Token) -> bool:
    """A proper noun NER did not label ("Priya", "Starlette", "Tidelift"): tagged NNP, or written capitalised
    inside a sentence of the same text, and capitalised here (the tagger tells "Priya moved" from
    "Redistributions must"); document vocabulary and changelog verbs are never one."""
    text = token.text
    if not _written_as_name(token) or not text[:1].isupper() or text.lower() in _DOCUMENT_WORDS | _TITLES:
        return False  # a title ("CEO") is a description: the name beside it is the argument
    return name_is_clean(text) and len(text) >= 2 and text.lower() not in _ENTRY_VERBS and not _shouting(token.sent)


# Lemmas the model gets wrong for the words people use ("data" is not "datum" in "shipment data").
_LEMMAS = {"datum": "data", "analytic": "analytics", "mathematic": "mathematics", "physic": "physics",
           "economic": "economics", "logistic": "logistics", "medium": "media", "politic": "politics"}


def noun_lemma(token: Token) -> str:
    """A noun's lemma, lower-cased, with the model's known slips mended."""
    lemma = token.lemma_.lower()
    return _LEMMAS.get(lemma, lemma)


def _concept_name(token: Token) -> str:
    """A noun with its qualifiers, hyphenated words kept whole ("chunk-based storage backend"), lower-cased,
    the noun itself lemmatised ("graph databases" → "graph database"); passing adjectives are left out ("the
    new Lisbon office" is the Lisbon office)."""
    words = [*(w for w in modifiers_of(token) if not (w.pos_ == "ADJ" and w.lower_ in _PASSING)), token]
    text = ""
    for word, following in zip(words, [*words[1:], None], strict=True):
        text += noun_lemma(word) if word is token else word.lower_
        joined = following is not None and following.i == word.i + 1 and not word.whitespace_
        text += "" if joined else " "
    return " ".join(_NOT_A_NAME_CHAR.sub(" ", text).strip(" -").split())


def modifiers_of(token: Token) -> list[Token]:
    """The words that qualify a noun before it, with their own qualifiers ("graph database", "lightweight deep
    learning library", "ASGI compatible Rust HTTP server", "fully featured", "per-drive"): cutting "deep" or
    "Rust" changes what is meant."""
    parts = [w for t in token.lefts if t.dep_ in ("compound", "amod", "nmod", "npadvmod") for w in t.subtree
             if (w.pos_ in ("NOUN", "PROPN", "ADJ", "NUM", "VERB", "ADV") and w.dep_ not in ("det", "poss", "cc"))
             or w.tag_ == "HYPH" or (w.i + 1 < len(w.doc) and w.doc[w.i + 1].tag_ == "HYPH" and not w.whitespace_)]
    parts = sorted(parts, key=lambda t: t.i)
    while parts and parts[0].tag_ == "HYPH":
        parts = parts[1:]
    return parts
