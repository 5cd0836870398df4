"""Resolve: entity mentions → entity keys, and entity types by vote.

An entity is keyed by (namespace, normalised name). Normalisation folds Unicode compatibility forms,
case, white space, punctuation, possessives and leading articles, so "The Acme Corp.", "acme corp" and
"Acme Corp's" are one entity. First-person mentions map to the namespace's one user entity. The type is
the label seen most often for the key (counts are kept on the node), a definite one before "Name" or
"Concept"; ties keep the older type.

Embedding similarity never merges: a near-duplicate gets a ``SIMILAR_TO`` link for review (write stage).
"""

from __future__ import annotations

import re
import unicodedata
from collections import Counter
from collections.abc import Iterable

from graphmem.ingest.names import CONCEPT, NAME, USER, ExtractedEntity

UNTYPED = "Thing"  # the type of an entity no extraction has typed and no agent has typed either
USER_KEY = "@user"  # cannot collide: normalised names contain no '@'
_ARTICLES = re.compile(r"^(?:the|a|an)\s+")
_POSSESSIVE = re.compile(r"(?:'s|'|\u2019s|\u2019)(?=\s|$)")
_PUNCT = re.compile(r"[^\w\s+#]+", re.UNICODE)  # keeps C++ and C# apart from C


def normalize_name(name: str) -> str:
    text = unicodedata.normalize("NFKC", name).casefold().strip()
    text = _POSSESSIVE.sub("", text)
    text = _PUNCT.sub(" ", text)
    text = " ".join(text.split())
    return _ARTICLES.sub("", text)


def entity_key(namespace: str, ref: ExtractedEntity) -> str:
    """The uniqueness key of the entity a reference resolves to (``namespace|normalised name``)."""
    return f"{namespace}|{USER_KEY if ref.type == USER else normalize_name(ref.name)}"


def display(ref: ExtractedEntity, user_name: str) -> tuple[str, str]:
    """(name, type) an entity created from this reference gets."""
    return (user_name, "Person") if ref.type == USER else (ref.name.strip(), ref.type)


def vote(labels: list[str], counts: list[int], seen: Iterable[str], current: str | None) -> tuple[
        list[str], list[int], str]:
    """Add the newly seen type labels to the stored counts; return (labels, counts, winning type)."""
    tally = Counter(dict(zip(labels, counts, strict=True)))
    tally.update(seen)
    if not tally:  # only an agent has named it: its stated type is the type
        return [], [], current or UNTYPED
    ordered = sorted(tally)
    # a definite type beats "Name" and "Concept" however often those were seen: they say "type unknown"
    definite = [label for label in ordered if label not in (NAME, CONCEPT)] or ordered
    best = max(tally[label] for label in definite)
    winners = [label for label in definite if tally[label] == best]
    winner = current if current in winners else winners[0]
    return ordered, [tally[label] for label in ordered], winner
