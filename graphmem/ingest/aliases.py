"""Aliases: a short name or a plural that names one entity of the namespace links to it, never by similarity.

"Maya" names "Maya Okafor" and "Falcon" names "Project Falcon" when exactly one entity of the namespace has that
short form and its type agrees; "Blue Heron" names "Blue Herons". The rule, in whichever order the two forms
arrive:

* a full name registers its short forms (``short_forms``) as ``(:Alias)-[:ALIAS_OF]->(:Entity)``, the
  registry every later mention is checked against (a form with two targets is ambiguous);
* an extracted mention whose own name is no stored entity resolves to the one candidate its form has (an
  alias target, or a stored entity whose name is its plural or singular); with none, or several, it is an
  entity of its own;
* a full name arriving after its short form was stored alone takes that entity's mentions and triples in, when
  the short form names it alone (``plan``'s ``absorb``).

A linked mention keeps its surface text and records its form (``MENTIONS.alias``); an entity's aliases in a
view are the surface forms of its linked mentions in that view, so an alias only forgotten memories support
leaves the view, and a lookup by alias finds an entity only through such a mention. A later second full form
makes the short form ambiguous: new mentions stay apart, mentions already linked stay linked. Agents state
names exactly, so what an agent asserted neither links nor is absorbed.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field

from graphmem.ingest.names import CONCEPT, NAME
from graphmem.ingest.resolve import normalize_name

PERSON, ORGANIZATION = "Person", "Organization"
# Words that mark a name as a project or a company rather than being the name ("Project Falcon", "Acme Corp").
LEADING_DESIGNATORS = frozenset({"project", "operation", "team", "the"})
TRAILING_DESIGNATORS = frozenset({
    "inc", "corp", "corporation", "co", "company", "ltd", "llc", "plc", "gmbh", "labs", "group", "holdings",
    "foundation", "project",
})
MIN_SHORT = 3  # a short form of fewer letters is an initial or a word, not a name ("Al", "Wu" stay apart)


def short_forms(normalized: str, type_: str) -> set[str]:
    """The normalised forms shorter than the name that can stand for it: a person's first or last name (a name
    of unknown type may be a person's); an organisation's first word; any name without its designator word."""
    words = normalized.split()
    if len(words) < 2:
        return set()
    forms: set[str] = set()
    if type_ in (PERSON, NAME) and len(words) <= 4:
        forms |= {words[0], words[-1]}
    if type_ == ORGANIZATION:
        forms.add(words[0])
    if words[0] in LEADING_DESIGNATORS:
        forms.add(" ".join(words[1:]))
    if words[-1] in TRAILING_DESIGNATORS:
        forms.add(" ".join(words[:-1]))
    return {form for form in forms if len(form) >= MIN_SHORT and form not in LEADING_DESIGNATORS}


def number_variants(normalized: str) -> set[str]:
    """The name with its last word in the other grammatical number ("blue herons" ↔ "blue heron"); only a
    stored entity of that name makes one a candidate, so "atlas" looks for "atla" and finds nothing."""
    head, _, last = normalized.rpartition(" ")
    prefix = f"{head} " if head else ""
    if len(last) < 3 or not last.isalpha():
        return set()
    variants = {last + "s", last + "es"}
    if last.endswith("ies"):
        variants.add(last[:-3] + "y")
    if last.endswith("es"):
        variants.add(last[:-2])
    if last.endswith("s") and not last.endswith("ss"):
        variants.add(last[:-1])
    if last.endswith("y"):
        variants.add(last[:-1] + "ies")
    return {prefix + variant for variant in variants if len(variant) >= 3}


def alias_keys(namespaces: Iterable[str], names: Iterable[str]) -> list[str]:
    """The keys (``namespace|normalised form``) a lookup of these names reads: of the alias registry, and of
    the entities themselves, which are keyed alike (``resolve.entity_key``)."""
    return sorted({f"{namespace}|{normalize_name(name)}" for namespace in namespaces for name in names})


def agrees(mention_type: str, target_type: str, short: bool) -> bool:
    """Whether a mention typed so may name an entity typed so. The same type, or a name of unknown type on
    either side; but a short form is never a common noun (a Concept), and a short form of a name of unknown
    type must be a person's or a name's ("GitHub", a technology, never names "GitHub Actions")."""
    if short and mention_type == CONCEPT:
        return False
    if mention_type in (target_type, NAME):
        return True
    if target_type == NAME:
        return mention_type == PERSON if short else mention_type != CONCEPT
    return False


@dataclass(frozen=True)
class Known:
    """An entity the batch may link to: its normalised name and type. (Whether an agent named it, which
    keeps it from being absorbed, the absorb statements check: ``cypher/ingest.cypher``.)"""
    name: str
    type: str


@dataclass
class AliasPlan:
    """What a batch does about aliases: its mentions' keys rewritten, bare entities absorbed, forms registered."""
    links: dict[str, tuple[str, str]] = field(default_factory=dict)  # mention key → (target key, form)
    absorb: list[dict[str, str]] = field(default_factory=list)  # {short_key, full_key, form}
    register: list[dict[str, str]] = field(default_factory=list)  # {alias_key, form, entity_key}


def plan(namespace: str, mentioned: Mapping[str, tuple[str, bool]], stored: Mapping[str, Known],
         targets: Mapping[str, Iterable[str]]) -> AliasPlan:
    """Decide the links of one batch.

    ``mentioned``: the batch's entity keys → (the type its mentions vote for, whether only extraction named it);
    ``stored``: the stored entities among those keys, their number variants and their short forms;
    ``targets``: a stored alias form → the keys of the entities it is registered for (each also in ``stored``)."""
    prefix = f"{namespace}|"
    new_full = {key: mentioned[key][0] for key in mentioned if key not in stored}
    registry: dict[str, set[str]] = {form: set(keys) for form, keys in targets.items()}
    for key, type_ in new_full.items():
        for form in short_forms(key.removeprefix(prefix), type_):
            registry.setdefault(form, set()).add(key)

    def type_of(key: str) -> str:
        return stored[key].type if key in stored else mentioned[key][0]

    result = AliasPlan()
    for key, (type_, extracted) in mentioned.items():
        if key in stored or not extracted:
            continue
        form = key.removeprefix(prefix)
        short = {k for k in registry.get(form, set()) if k != key and agrees(type_, type_of(k), short=True)}
        # a stored entity in the other number; of two new ones, the longer form links to the shorter
        plural = {k for k in (prefix + v for v in number_variants(form))
                  if (k in stored or (k in new_full and len(k) < len(key))) and agrees(type_, type_of(k), short=False)}
        candidates = short | plural
        if len(candidates) == 1:
            result.links[key] = (candidates.pop(), form)
    for key, (target, _) in list(result.links.items()):
        if target in result.links:  # a chain (short → plural → full) stops at its first step's target
            del result.links[key]
    for key, type_ in new_full.items():
        if key in result.links:
            continue
        for form in short_forms(key.removeprefix(prefix), type_):
            result.register.append({"alias_key": prefix + form, "form": form, "entity_key": key})
            bare = stored.get(prefix + form)
            if bare is not None and registry.get(form) == {key} \
                    and agrees(bare.type, type_, short=True):
                result.absorb.append({"short_key": prefix + form, "full_key": key, "form": form})
    for key, (target, form) in result.links.items():
        result.register.append({"alias_key": key, "form": form, "entity_key": target})
    return result
