"""Entity types from evidence: what a name is made of and how its sentence uses it, over NER's guess.

The small English model types invented and software names badly (measured on the invented genres of
``benchmarks/data/extraction``: Scala and Typesense a Place, Jenkins and Flutter a Person, most products an
Organization). An unknown type is better than a wrong one, so a spaCy label is kept only where the name or
the sentence agrees with it, and a name's own words decide when they can ("Dale County" is a place, "Orbital
Labs" an organisation, "Project Falcon" a product). The EntityRuler's labels (its own lists and the operator's
patterns) are names someone wrote down and are always kept. A type that is not kept becomes ``Name``: named,
type unknown; the entity's vote (``resolve.vote``) lets any definite type beat it.
"""

from __future__ import annotations

from spacy.tokens import Span, Token

NAME = "Name"  # a proper noun whose type is unknown (NER left it unlabelled, or its label lacked evidence)
_ORGANIZATION_WORDS = frozenset({
    "labs", "lab", "inc", "ltd", "llc", "gmbh", "corp", "corporation", "company", "co", "media", "health",
    "freight", "logistics", "insurance", "bank", "university", "college", "academy", "institute", "foundation",
    "trust", "society", "guild", "council", "team", "agency", "ministry", "department", "observatory",
    "association", "union", "club", "partners", "studios", "studio", "motors", "batteries", "energy", "airlines",
    "airways", "rail", "railways", "press", "publishing", "records", "capital", "ventures", "holdings",
    "industries", "mining", "works", "group", "systems", "technologies", "software", "consulting", "brewery",
    "bakery", "hospital", "clinic", "school", "museum", "orchestra", "ballet", "opera", "theatre",
    "committee", "commission", "authority", "services", "office", "collective", "cooperative", "hosting",
    "robotics", "analytics", "dynamics", "pharma", "pharmaceuticals", "solutions", "networks", "electronics",
    "aerospace", "automotive", "foods", "brewing", "lines", "shipping",
})
_PLACE_WORDS = frozenset({
    "city", "county", "street", "road", "avenue", "lane", "river", "lake", "mountain", "mountains", "valley",
    "bay", "island", "islands", "point", "square", "hill", "hills", "coast", "sea", "ocean", "harbour", "station",
    "airport", "forest", "desert", "province", "region", "district", "kingdom", "republic", "peninsula", "canal",
    "gulf", "strait", "park", "bridge", "field", "yard", "quay", "pier", "village", "town", "heights", "falls",
    "tower", "castle", "cathedral", "church", "palace", "stadium", "arena", "temple", "abbey",
})
_PLACE_FIRST = frozenset({"mount", "lake", "port", "cape", "fort", "river", "saint", "st", "isle"})
_EVENT_WORDS = frozenset({"summit", "conference", "festival", "fair", "hackathon", "offsite", "expo", "congress",
                          "symposium", "olympics", "games", "war", "election", "regatta", "marathon", "meetup"})
_LAW_WORDS = frozenset({"act", "treaty", "regulation", "directive", "convention", "accord"})
_WORK_WORDS = frozenset({"handbook", "runbook", "playbook", "guide", "manual", "report", "charter", "novel",
                         "newsletter", "magazine", "journal", "gazette", "times", "post", "review", "memo"})
# Last words of software and services: never a person, a place or an organisation, whatever NER says.
_THING_WORDS = frozenset({"cloud", "storage", "logging", "serve", "api", "gateway", "db", "database", "engine",
                          "platform", "app", "sdk", "cli", "server", "service", "pipeline", "dashboard", "bot"})
# Verbs whose subject is a person when spaCy says so ("Tom founded", "Priya joined"); software does not
# do these.
_HUMAN_VERBS = frozenset({
    "say", "tell", "ask", "think", "want", "feel", "like", "love", "hate", "call", "meet", "talk", "pair", "join",
    "lead", "review", "check", "book", "marry", "study", "live", "move", "travel", "fly", "buy", "visit", "hire",
    "found", "own", "manage", "present", "propose", "agree", "decide", "leave", "retire", "teach", "sign",
    "chair", "direct", "design", "paint", "compose", "invent", "discover", "win", "bear", "work", "quit",
    "promise", "plan", "email", "phone", "message", "interview", "celebrate", "volunteer", "coach", "run",
})
# Words a place is an object of ("lives in Leeds", "the office in Lisbon", "flew to Tokyo", "born in Marlow").
_PLACE_HEADS = frozenset({
    "live", "move", "base", "locate", "bear", "lie", "open", "travel", "fly", "relocate", "stay", "visit", "sit",
    "settle", "work", "grow", "arrive", "return", "drive", "sail", "go", "come", "head", "meet", "hold", "host",
    "office", "port", "town", "city", "branch", "depot", "warehouse", "home", "trip", "flight", "studio",
    "conference", "capital", "border", "cross", "flow", "found", "build", "situate", "headquarter", "hq",
})
_PLACE_SUBJECT_VERBS = frozenset({"lie", "border", "flow", "sit", "stretch", "rise"})
_PART_OF_PLACE = frozenset({"capital", "mayor", "north", "south", "east", "west", "centre", "center", "coast",
                            "outskirts", "edge", "heart", "city", "town", "region", "province", "county",
                            "governor", "population", "river", "port"})
# Verbs whose direct object is a place or an organisation ("visited Lisbon", "joined Google"); "met Jordan" is
# neither.
_TAKES_AN_OBJECT = frozenset({"visit", "cross", "leave", "reach", "enter", "border", "tour", "explore", "join",
                              "acquire", "hire", "fund", "sponsor", "found", "contract", "sign", "base", "locate",
                              "headquarter", "situate", "bear", "hold", "host"})
_SPATIAL = frozenset({"in", "at", "from", "to", "near", "across", "around", "outside", "into", "through", "via"})
# Verbs and nouns that take an organisation ("works at Microsoft", "joined Google", "acquired by Varro Motors").
_ORGANIZATION_HEADS = frozenset({"work", "join", "leave", "acquire", "hire", "employ", "fund", "sponsor",
                                 "partner", "sign", "contract", "customer", "client", "invest", "found", "at"})
_SPACY_LABELS = frozenset({"PERSON", "ORG", "GPE", "LOC", "FAC", "NORP", "EVENT", "WORK_OF_ART", "LAW",
                           "LANGUAGE", "PRODUCT"})


def words_type(words: list[str]) -> str | None:
    """The type a name's own words give it ("Dale County", "Orbital Labs", "Project Falcon", "Treaty of
    Sarn"; "Kestrel Cloud" is software, so ``Name``: no person, place or organisation), or None."""
    if not words:
        return None
    first, last = words[0].lower(), words[-1].lower().rstrip(".")
    if first == "project" and len(words) > 1:
        return "Product"
    if first in _LAW_WORDS or last in _LAW_WORDS:
        return "Law"
    if len(words) > 1 and last in _ORGANIZATION_WORDS:
        return "Organization"
    if len(words) > 1 and (last in _PLACE_WORDS or first in _PLACE_FIRST):
        return "Place"
    if len(words) > 1 and last in _EVENT_WORDS:
        return "Event"
    if len(words) > 1 and last in _WORK_WORDS:
        return "Work"
    if last in _THING_WORDS:
        return NAME
    return None


def evidenced_type(ent: Span, words: list[str], kind: str) -> str:
    """``kind`` (the product type of the span's label) where the evidence agrees, else the type the name's
    words give, else ``Name``."""
    if ent.label_ not in _SPACY_LABELS:
        return kind  # the ruler's lists and the operator's own labels
    from_words = words_type(words)
    if from_words is not None:
        return from_words
    if ent.label_ in ("PRODUCT", "LAW", "LANGUAGE", "WORK_OF_ART"):
        return kind  # labels NER seldom guesses
    root = ent.root
    if kind == "Person":
        named_in_full = len(words) > 1 and all(w[:1].isupper() and w.isalpha() for w in words)
        return kind if named_in_full or _verb_of_subject(root) in _HUMAN_VERBS else NAME
    if kind == "Place":
        return kind if _governor(root) in _PLACE_HEADS or _verb_of_subject(root) in _PLACE_SUBJECT_VERBS else NAME
    if kind == "Organization":
        return kind if _governor(root) in _ORGANIZATION_HEADS else NAME
    if kind == "Group":  # "Dutch", "Norwegians"; not "Pelican"
        return kind if root.tag_ == "NNPS" or root.lower_.endswith(("ish", "ese", "an", "ans", "ic")) else NAME
    return NAME


def _verb_of_subject(token: Token) -> str | None:
    """The lemma of the verb a subject (or a conjunct subject) does."""
    while token.dep_ == "conj":
        token = token.head
    return token.head.lemma_.lower() if token.dep_ in ("nsubj", "nsubjpass") else None


def _governor(token: Token) -> str | None:
    """What takes the name: the verb or noun a preposition hangs from ("lives in", "office in", "works at",
    "capital of"; a place word after another name, "Microsoft in Seattle", counts as "located"), or the verb
    of a direct object ("joined Google")."""
    while token.dep_ == "conj":
        token = token.head
    if token.dep_ == "pobj":
        prep, head = token.head, token.head.head
        if prep.lower_ == "of":
            return "capital" if head.lemma_.lower() in _PART_OF_PLACE else None
        if prep.lower_ not in _SPATIAL | {"for", "by"}:
            return None
        return "locate" if head.pos_ == "PROPN" and prep.lower_ in ("in", "near") else head.lemma_.lower()
    if token.dep_ in ("dobj", "nsubjpass"):
        verb = token.head.lemma_.lower()
        return verb if verb in _TAKES_AN_OBJECT else None
    return None
