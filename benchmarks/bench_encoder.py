"""Encoder speed: MiniLM sentences/s cold by batch size, and warm through the vector cache.

Run: cd benchmarks && ../.venv/bin/python bench_encoder.py
"""

from __future__ import annotations

import tempfile
import time
from pathlib import Path

from bench_llm import sample_texts
from common import save

from middleware.text.embeddings import CachedEncoder, EmbeddingCache, SentenceEncoder

N = 2000


def rate(count: int, seconds: float) -> float:
    return round(count / seconds, 1)


def main() -> None:
    facts, _ = sample_texts()
    texts = facts[:N]
    encoder = SentenceEncoder()
    encoder.encode(["warm up"])
    by_batch = {}
    for batch in (16, 64, 256):
        encoder.batch_size = batch
        started = time.perf_counter()
        encoder.encode(texts)
        by_batch[batch] = rate(N, time.perf_counter() - started)
        print("batch", batch, by_batch[batch], "sentences/s")

    encoder.batch_size = 64
    cache_path = Path(tempfile.mkdtemp()) / "vectors.sqlite"
    cached = CachedEncoder(encoder, EmbeddingCache(cache_path), batch_size=64)
    started = time.perf_counter()
    cached.encode(texts)
    cold = rate(N, time.perf_counter() - started)
    started = time.perf_counter()
    cached.encode(texts)
    warm = rate(N, time.perf_counter() - started)
    fresh = CachedEncoder(encoder, EmbeddingCache(cache_path))
    started = time.perf_counter()
    fresh.encode(texts)
    warm_new_process = rate(N, time.perf_counter() - started)
    result = {
        "texts": N,
        "cold_sentences_per_s_by_batch": by_batch,
        "cached_cold_sentences_per_s": cold,
        "cached_warm_sentences_per_s": warm,
        "cached_warm_reopened_sentences_per_s": warm_new_process,
        "cache_bytes": cache_path.stat().st_size,
    }
    print(result)
    print("saved", save("encoder", result))


if __name__ == "__main__":
    main()
