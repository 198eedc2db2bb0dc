"""Encoders, the vector cache and the cosine index."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from middleware.config import Settings
from middleware.errors import BadRequest, ConfigError
from middleware.text.embeddings import (
    CachedEncoder,
    EmbeddingCache,
    HashEncoder,
    SentenceEncoder,
    VectorIndex,
    open_encoder,
)


class CountingEncoder(HashEncoder):
    def __init__(self) -> None:
        super().__init__(dim=32)
        self.encoded: list[str] = []

    def encode(self, texts):  # type: ignore[no-untyped-def]
        self.encoded.extend(texts)
        return super().encode(texts)


@pytest.fixture(scope="module")
def minilm() -> SentenceEncoder:
    return SentenceEncoder()


def test_minilm_loads_offline_and_ranks_by_meaning(minilm: SentenceEncoder) -> None:
    facts = [
        "Titanic | directed by | James Cameron",
        "Heat | starred actors | Al Pacino",
        "Paris | capital of | France",
    ]
    vectors = minilm.encode(facts)
    assert vectors.shape == (3, 384) and vectors.dtype == np.float32
    assert np.allclose(np.linalg.norm(vectors, axis=1), 1.0, atol=1e-5)
    index: VectorIndex[str] = VectorIndex(dim=384)
    index.add(vectors, facts)
    hits = index.search(minilm.encode(["Who directed the film Titanic?"]), k=3)[0]
    assert hits[0].item == facts[0]
    assert hits[0].score > hits[1].score >= hits[2].score


def test_an_unknown_model_name_is_refused_without_download() -> None:
    with pytest.raises(ConfigError, match="never downloaded"):
        SentenceEncoder("sentence-transformers/all-mpnet-base-v2").encode(["x"])


def test_hash_encoder_is_deterministic_and_word_based() -> None:
    enc = HashEncoder(dim=128)
    a, b, c = enc.encode(["James Cameron", "james  CAMERON!", "Kate Winslet"])
    assert np.array_equal(a, b) and float(a @ c) < 0.5
    assert np.array_equal(
        enc.encode(["James Cameron"])[0], HashEncoder(dim=128).encode(["James Cameron"])[0]
    )


def test_cache_never_encodes_a_text_twice(tmp_path: Path) -> None:
    inner = CountingEncoder()
    cache = EmbeddingCache(tmp_path / "v.sqlite")
    enc = CachedEncoder(inner, cache, batch_size=2)
    first = enc.encode(["a", "b", "a", "c"])
    assert inner.encoded == ["a", "b", "c"]
    second = CachedEncoder(inner, EmbeddingCache(tmp_path / "v.sqlite")).encode(["c", "a", "d"])
    assert inner.encoded == ["a", "b", "c", "d"]
    assert np.array_equal(second[1], first[0]) and np.array_equal(second[0], first[3])
    assert cache.count("hash-32") == 4


def test_cache_keeps_models_apart(tmp_path: Path) -> None:
    cache = EmbeddingCache(tmp_path / "v.sqlite")
    CachedEncoder(HashEncoder(dim=8), cache).encode(["x"])
    CachedEncoder(HashEncoder(dim=16), cache).encode(["x"])
    assert cache.count("hash-8") == cache.count("hash-16") == 1


def test_numpy_and_faiss_give_the_same_top_k() -> None:
    rng = np.random.default_rng(0)
    vectors = rng.normal(size=(3000, 64)).astype(np.float32)
    queries = rng.normal(size=(20, 64)).astype(np.float32)
    exact: VectorIndex[int] = VectorIndex(dim=64, faiss_threshold=10**9)
    fast: VectorIndex[int] = VectorIndex(dim=64, faiss_threshold=1)
    for index in (exact, fast):
        index.add(vectors[:1000], list(range(1000)))
        index.add(vectors[1000:], list(range(1000, 3000)))
    assert exact.backend == "numpy" and fast.backend == "faiss"
    for a, b in zip(exact.search(queries, k=10), fast.search(queries, k=10), strict=True):
        assert [h.item for h in a] == [h.item for h in b]
        assert np.allclose([h.score for h in a], [h.score for h in b], atol=1e-5)


def test_index_edges() -> None:
    index: VectorIndex[str] = VectorIndex(dim=2)
    assert index.search(np.array([[1.0, 0.0]]), k=3) == [[]]
    index.add(np.array([[1.0, 0.0], [1.0, 0.0], [0.0, 1.0]]), ["first", "tie", "other"])
    hits = index.search(np.array([[1.0, 0.0]]), k=10)[0]
    assert [h.item for h in hits] == ["first", "tie", "other"]  # ties keep insertion order
    with pytest.raises(BadRequest, match="3 dimensions"):
        index.add(np.ones((1, 3)), ["x"])
    with pytest.raises(BadRequest, match="2 vectors for 1 items"):
        index.add(np.ones((2, 2)), ["x"])


def test_open_encoder_from_settings(tmp_path: Path) -> None:
    settings = Settings.load(
        config_path=None, env={}, overrides={"encoder": "hash-16", "cache_dir": str(tmp_path)}
    )
    enc = open_encoder(settings)
    assert isinstance(enc, CachedEncoder) and enc.dim == 16
    assert (tmp_path / "embeddings.sqlite").exists()
    with pytest.raises(ConfigError):
        open_encoder(Settings.load(config_path=None, env={}, overrides={"encoder": "hash-x"}))
