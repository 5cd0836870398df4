"""Embedding work the pipeline does not repeat: a text twice in one batch, an entity name seen in an earlier
batch (``nlp/embedder.py``: ``embed_distinct``, ``NameVectors``)."""

from __future__ import annotations

from collections.abc import Sequence

from graphmem.nlp.embedder import HashingEmbedder, NameVectors, embed_distinct


class Counting(HashingEmbedder):
    """The hashing embedder, recording every text it was asked to embed."""

    def __init__(self, name: str = HashingEmbedder.name) -> None:
        self.name = name
        self.asked: list[str] = []

    def embed(self, texts: Sequence[str]) -> list[list[float]]:
        self.asked.extend(texts)
        return super().embed(texts)


def test_a_text_twice_in_a_batch_is_embedded_once() -> None:
    embedder = Counting()
    texts = ["ok", "thanks", "ok", "We chose Kafka.", "thanks"]
    assert embed_distinct(embedder, texts) == HashingEmbedder().embed(texts)
    assert embedder.asked == ["ok", "thanks", "We chose Kafka."]


def test_names_seen_before_are_not_embedded_again() -> None:
    kept, embedder = NameVectors(), Counting()
    first = kept.embed(embedder, {"kafka": "Kafka", "lisbon": "Lisbon"})
    again = kept.embed(embedder, {"kafka": "Kafka", "oslo": "Oslo"})
    assert embedder.asked == ["Kafka", "Lisbon", "Oslo"]
    assert again["kafka"] == first["kafka"] == HashingEmbedder().embed(["Kafka"])[0]
    assert set(again) == {"kafka", "oslo"}


def test_another_embedder_never_gets_a_kept_vector() -> None:
    kept, one, other = NameVectors(), Counting(), Counting("another-model/1")
    kept.embed(one, {"kafka": "Kafka"})
    kept.embed(other, {"kafka": "Kafka"})
    assert one.asked == other.asked == ["Kafka"]


def test_kept_names_are_bounded() -> None:
    kept, embedder = NameVectors(), Counting()
    kept.embed(embedder, {f"n{i}": f"Name {i}" for i in range(NameVectors.SIZE + 10)})
    kept.embed(embedder, {"n0": "Name 0"})  # the oldest went out first
    assert embedder.asked.count("Name 0") == 2
