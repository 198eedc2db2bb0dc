"""Exact cosine top-k over normalized vectors: NumPy for small sets, faiss for large ones.

>>> import numpy as np
>>> index = VectorIndex(dim=2)
>>> index.add(np.array([[1, 0], [0, 1], [0.6, 0.8]], dtype=np.float32), ["x", "y", "xy"])
>>> [(h.item, round(h.score, 2)) for h in index.search(np.array([[0.0, 1.0]]), k=2)[0]]
[('y', 1.0), ('xy', 0.8)]
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, Generic, TypeVar

import numpy as np
import numpy.typing as npt

from middleware.errors import BadRequest
from middleware.text.embeddings.encoders import Vectors, normalize

T = TypeVar("T")
DEFAULT_FAISS_THRESHOLD = 50_000


@dataclass(frozen=True)
class Hit(Generic[T]):
    """One search result: the stored item, its position and its cosine similarity."""

    item: T
    position: int
    score: float


def _faiss() -> Any:
    try:
        import faiss
    except ImportError:
        return None
    return faiss


class VectorIndex(Generic[T]):
    """Items with normalized vectors; ``search`` returns the k most similar, best first.

    Ties keep insertion order. With ``faiss_threshold`` items or more (and faiss
    installed) the search runs on a faiss exact inner-product index.
    """

    def __init__(self, dim: int, *, faiss_threshold: int = DEFAULT_FAISS_THRESHOLD) -> None:
        self.dim = dim
        self.faiss_threshold = faiss_threshold
        self._items: list[T] = []
        self._blocks: list[Vectors] = []
        self._matrix: Vectors | None = None
        self._faiss_index: Any = None

    def __len__(self) -> int:
        return len(self._items)

    @property
    def items(self) -> list[T]:
        return list(self._items)

    @property
    def backend(self) -> str:
        use = len(self) >= self.faiss_threshold and _faiss() is not None
        return "faiss" if use else "numpy"

    def add(self, vectors: npt.NDArray[Any], items: Sequence[T]) -> None:
        matrix = normalize(vectors)
        if matrix.shape[0] != len(items):
            raise BadRequest(f"{matrix.shape[0]} vectors for {len(items)} items")
        if matrix.shape[0] and matrix.shape[1] != self.dim:
            raise BadRequest(f"vectors have {matrix.shape[1]} dimensions, the index {self.dim}")
        self._items.extend(items)
        self._blocks.append(matrix)
        self._matrix = None
        self._faiss_index = None

    def _all(self) -> Vectors:
        if self._matrix is None:
            blocks = [b for b in self._blocks if b.shape[0]]
            self._matrix = (
                np.vstack(blocks) if blocks else np.zeros((0, self.dim), dtype=np.float32)
            )
            self._blocks = [self._matrix]
        return self._matrix

    def search(self, queries: npt.NDArray[Any], k: int = 10) -> list[list[Hit[T]]]:
        """For each query row, up to ``k`` hits ordered by descending cosine."""
        query = normalize(queries)
        if len(self) == 0 or k <= 0:
            return [[] for _ in range(query.shape[0])]
        k = min(k, len(self))
        if self.backend == "faiss":
            scores, positions = self._search_faiss(query, k)
        else:
            scores, positions = self._search_numpy(query, k)
        return [
            [
                Hit(self._items[int(p)], int(p), float(s))
                for s, p in zip(row_scores, row_positions, strict=True)
                if p >= 0
            ]
            for row_scores, row_positions in zip(scores, positions, strict=True)
        ]

    def _search_numpy(
        self, query: Vectors, k: int
    ) -> tuple[npt.NDArray[np.float32], npt.NDArray[np.int64]]:
        scores = query @ self._all().T
        if k < scores.shape[1]:
            top = np.argpartition(-scores, k - 1, axis=1)[:, :k]
        else:
            top = np.tile(np.arange(scores.shape[1]), (scores.shape[0], 1))
        picked = np.take_along_axis(scores, top, axis=1)
        # Descending score, then ascending position: a stable order for ties.
        order = np.lexsort((top, -picked), axis=1)
        positions = np.take_along_axis(top, order, axis=1).astype(np.int64)
        return np.take_along_axis(scores, positions, axis=1), positions

    def _search_faiss(
        self, query: Vectors, k: int
    ) -> tuple[npt.NDArray[np.float32], npt.NDArray[np.int64]]:
        faiss = _faiss()
        if self._faiss_index is None:
            index = faiss.IndexFlatIP(self.dim)
            index.add(np.ascontiguousarray(self._all()))
            self._faiss_index = index
        scores, positions = self._faiss_index.search(np.ascontiguousarray(query), k)
        return scores.astype(np.float32), positions.astype(np.int64)
