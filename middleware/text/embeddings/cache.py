"""Vectors on disk, keyed by encoder name and text, so no text is encoded twice.

>>> import tempfile, pathlib
>>> from middleware.text.embeddings.encoders import HashEncoder
>>> folder = pathlib.Path(tempfile.mkdtemp())
>>> enc = CachedEncoder(HashEncoder(dim=8), EmbeddingCache(folder / "vectors.sqlite"))
>>> _ = enc.encode(["a b", "c"]); _ = enc.encode(["c", "d"])
>>> enc.hits, enc.misses
(1, 3)
"""

from __future__ import annotations

import hashlib
from collections.abc import Sequence
from pathlib import Path

import numpy as np

from middleware.support.progress_bar import progress_bar
from middleware.support.sqlite_file import SqliteFile
from middleware.text.embeddings.encoders import Encoder, Vectors

_CHUNK = 500


def text_key(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


class EmbeddingCache(SqliteFile):
    """SQLite table of (encoder, sha256(text)) -> float32 vector."""

    def __init__(self, path: str | Path) -> None:
        super().__init__(
            path,
            "CREATE TABLE IF NOT EXISTS vectors (model TEXT NOT NULL, key TEXT NOT NULL, "
            "vector BLOB NOT NULL, PRIMARY KEY (model, key))",
        )

    def get_many(self, model: str, keys: Sequence[str]) -> dict[str, Vectors]:
        found: dict[str, Vectors] = {}
        db = self.db()
        for start in range(0, len(keys), _CHUNK):
            chunk = list(keys[start : start + _CHUNK])
            marks = ",".join("?" * len(chunk))
            rows = db.execute(
                f"SELECT key, vector FROM vectors WHERE model = ? AND key IN ({marks})",
                [model, *chunk],
            )
            for key, blob in rows:
                found[key] = np.frombuffer(blob, dtype=np.float32)
        return found

    def put_many(self, model: str, items: dict[str, Vectors]) -> None:
        with self.db() as db:
            db.executemany(
                "INSERT OR REPLACE INTO vectors (model, key, vector) VALUES (?, ?, ?)",
                [(model, k, np.asarray(v, dtype=np.float32).tobytes()) for k, v in items.items()],
            )

    def count(self, model: str | None = None) -> int:
        if model is None:
            row = self.db().execute("SELECT COUNT(*) FROM vectors").fetchone()
        else:
            row = (
                self.db()
                .execute("SELECT COUNT(*) FROM vectors WHERE model = ?", (model,))
                .fetchone()
            )
        return int(row[0])


class CachedEncoder:
    """Any encoder plus the on-disk cache; misses are encoded in batches with a progress bar."""

    def __init__(
        self,
        encoder: Encoder,
        cache: EmbeddingCache,
        *,
        batch_size: int = 64,
        progress: bool = False,
        progress_min: int = 2000,
    ) -> None:
        self.inner = encoder
        self.cache = cache
        self.batch_size = batch_size
        self.progress = progress
        self.progress_min = progress_min
        self.hits = 0
        self.misses = 0

    @property
    def name(self) -> str:
        return self.inner.name

    @property
    def dim(self) -> int:
        return self.inner.dim

    def encode(self, texts: Sequence[str]) -> Vectors:
        keys = [text_key(t) for t in texts]
        known = self.cache.get_many(self.name, list(dict.fromkeys(keys)))
        missing = list(dict.fromkeys(k for k in keys if k not in known))
        by_key = {k: t for k, t in zip(keys, texts, strict=True)}
        self.hits += len(texts) - sum(1 for k in keys if k not in known)
        self.misses += len(missing)
        if missing:
            bar = progress_bar(
                total=len(missing),
                desc="encoding",
                unit="text",
                disable=not self.progress or len(missing) < self.progress_min,
            )
            with bar:
                for start in range(0, len(missing), self.batch_size):
                    batch = missing[start : start + self.batch_size]
                    vectors = self.inner.encode([by_key[k] for k in batch])
                    fresh = dict(zip(batch, vectors, strict=True))
                    self.cache.put_many(self.name, fresh)
                    known.update(fresh)
                    bar.update(len(batch))
        if not keys:
            return np.zeros((0, self.dim), dtype=np.float32)
        return np.vstack([known[k] for k in keys]).astype(np.float32)
