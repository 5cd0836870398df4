"""Who a sentence's persons are: the first person of a chat turn is its speaker, and "it", "he" and "she" stand for
a named subject before them (or are dropped: no guess beats a wrong one). Run after ``extract``, on a memory's
sentences in order."""

from __future__ import annotations

from graphmem.ingest.extract import Mention, SentenceExtraction, Triple
from graphmem.ingest.names import CONCEPT, NAME, OBJECT_IT, PRONOUN, USER, ExtractedEntity

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
                                  found.attributes, found.topic if found.topic and found.topic.type != USER else None)
    person = ExtractedEntity(speaker, "Person")

    def who(entity: ExtractedEntity) -> ExtractedEntity:
        return person if entity.type == USER else entity

    mentions = [Mention(who(m.entity), m.start, m.end) for m in found.mentions]
    if header_at is not None:
        mentions.insert(0, Mention(person, header_at, header_at + len(speaker)))
    triples = [Triple(who(t.subject), t.predicate, who(t.object), t.negated) for t in found.triples]
    return SentenceExtraction(mentions, [t for t in triples if t.subject != t.object], found.attributes,
                              who(found.topic) if found.topic else None)


def resolve_pronouns(sentences: list[SentenceExtraction], reach: int = 2) -> None:
    """Give each "it", "he" or "she" of a memory's sentences (in order) what it stands for, when it fits ("he"
    and "she" a person, or a name of unknown type; "it" anything named but a person): the sentence's own topic
    (the named subject of its main clause: "Mira founded Acme after she left Google") when the pronoun is not
    that subject, else the topic of the newest of the ``reach`` sentences before it that has one. Triples whose
    pronoun stands for nothing that fits are dropped, and a pronoun's mention stays only for a triple that
    kept it: no guess beats a wrong one. "Kiln is the build system of Brackenridge. It wraps Bazel." → (Kiln,
    wrap, Bazel)."""
    for index, found in enumerate(sentences):
        own = found.topic if found.topic is not None and found.topic.type != PRONOUN else None
        if own is None:
            found.topic = None
        pronouns = {m.entity for m in found.mentions if m.entity.type == PRONOUN}
        if not pronouns:
            continue
        before = next((s.topic for s in sentences[max(0, index - reach):index][::-1] if s.topic), None)
        resolved = {p: (_antecedent(p, own) if p.name != OBJECT_IT else None) or _antecedent(p, before)
                    for p in pronouns}
        triples = [Triple(resolved.get(t.subject) or t.subject, t.predicate, resolved.get(t.object) or t.object,
                          t.negated) for t in found.triples]
        found.triples = [t for t in triples if PRONOUN not in (t.subject.type, t.object.type) and t.subject != t.object]
        ends = {ref for t in found.triples for ref in (t.subject, t.object)}
        found.mentions = [m if m.entity.type != PRONOUN else Mention(resolved[m.entity], m.start, m.end)  # type: ignore[arg-type]
                          for m in found.mentions if m.entity.type != PRONOUN or resolved[m.entity] in ends]
        if found.topic is None and before is not None and before in ends:
            found.topic = before  # "It wraps Bazel. It caches ...": the chain goes on


def _antecedent(pronoun: ExtractedEntity, candidate: ExtractedEntity | None) -> ExtractedEntity | None:
    if candidate is None or candidate.type in (CONCEPT, USER, PRONOUN):
        return None
    thing = pronoun.name in ("it", OBJECT_IT)
    return candidate if (candidate.type in ("Person", NAME)) != thing or (thing and candidate.type == NAME) else None
