"""An on-disk cache of LLM replies, so an identical deterministic call is made once.

Keys cover the backend, the model, the messages, the options of ``choose()`` and
every generation parameter. Temperature-0 calls are cached, and so are sampled calls
that carry a seed (the key then holds the temperature and the seed too): the same seed
gives the same sample. Sampled calls without a seed are meant to differ and are never
cached. The cache is one SQLite file, safe across threads and processes.
"""

from __future__ import annotations

import hashlib
import json
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from middleware.llm.base import (
    DEFAULT_MAX_TOKENS,
    LLM,
    Choice,
    Completion,
    Identified,
    Message,
)
from middleware.support.sqlite_file import SqliteFile


def cache_key(**parts: Any) -> str:
    """A stable digest of the JSON form of ``parts``."""
    blob = json.dumps(parts, sort_keys=True, ensure_ascii=False, separators=(",", ":"))
    return hashlib.sha256(blob.encode("utf-8")).hexdigest()


def sampling_parts(temperature: float, seed: int | None) -> dict[str, Any] | None:
    """What a call's sampling adds to its key: nothing at temperature 0 (so keys made
    before seeds existed still hit), temperature and seed for a seeded sampled call,
    and None (do not cache) for a sampled call without a seed.

    >>> sampling_parts(0.0, 7), sampling_parts(0.7, 3), sampling_parts(0.7, None)
    ({}, {'temperature': 0.7, 'seed': 3}, None)
    """
    if temperature == 0:
        return {}
    if seed is None:
        return None
    return {"temperature": temperature, "seed": seed}


class ResponseCache(SqliteFile):
    """SQLite-backed map from a call's key to its recorded reply."""

    def __init__(self, path: str | Path) -> None:
        super().__init__(
            path,
            "CREATE TABLE IF NOT EXISTS replies "
            "(key TEXT PRIMARY KEY, value TEXT NOT NULL, created REAL NOT NULL)",
        )

    def get(self, key: str) -> dict[str, Any] | None:
        row = self.db().execute("SELECT value FROM replies WHERE key = ?", (key,)).fetchone()
        if row is None:
            return None
        value = json.loads(row[0])
        return value if isinstance(value, dict) else None

    def put(self, key: str, value: dict[str, Any]) -> None:
        with self.db() as db:
            db.execute(
                "INSERT OR REPLACE INTO replies (key, value, created) VALUES (?, ?, ?)",
                (key, json.dumps(value, ensure_ascii=False), time.time()),
            )

    def __len__(self) -> int:
        return int(self.db().execute("SELECT COUNT(*) FROM replies").fetchone()[0])

    def clear(self) -> None:
        with self.db() as db:
            db.execute("DELETE FROM replies")


class CachedLLM:
    """Wraps any LLM; temperature-0 and seeded replies come from the cache when seen before."""

    def __init__(self, llm: LLM, cache: ResponseCache) -> None:
        self.inner = llm
        self.cache = cache

    @property
    def name(self) -> str:
        return self.inner.name

    @property
    def model(self) -> str:
        return self.inner.model

    def _identity(self) -> str:
        if isinstance(self.inner, Identified):
            return self.inner.identity
        return f"{self.inner.name}:{self.inner.model}"

    def complete(
        self,
        messages: Sequence[Message],
        *,
        max_tokens: int = DEFAULT_MAX_TOKENS,
        temperature: float = 0.0,
        stop: Sequence[str] = (),
        seed: int | None = None,
    ) -> Completion:
        def call() -> Completion:
            return self.inner.complete(
                messages, max_tokens=max_tokens, temperature=temperature, stop=stop, seed=seed
            )

        sampling = sampling_parts(temperature, seed)
        if sampling is None:
            return call()
        key = cache_key(
            kind="complete",
            llm=self._identity(),
            messages=list(messages),
            max_tokens=max_tokens,
            stop=list(stop),
            **sampling,
        )
        hit = self.cache.get(key)
        if hit is not None:
            return Completion.from_dict(hit).as_cached()
        completion = call()
        self.cache.put(key, completion.to_dict())
        return completion

    def choose(
        self,
        messages: Sequence[Message],
        options: Sequence[str],
        *,
        temperature: float = 0.0,
        seed: int | None = None,
    ) -> Choice:
        sampling = sampling_parts(temperature, seed)
        if sampling is None:
            return self.inner.choose(messages, options, temperature=temperature, seed=seed)
        key = cache_key(
            kind="choose",
            llm=self._identity(),
            messages=list(messages),
            options=list(options),
            **sampling,
        )
        hit = self.cache.get(key)
        if hit is not None:
            index = int(hit["index"])
            completion = Completion.from_dict(hit["completion"]).as_cached()
            return Choice(index, options[index], completion, tuple(hit.get("notes", ())))
        choice = self.inner.choose(messages, options, temperature=temperature, seed=seed)
        self.cache.put(
            key,
            {
                "index": choice.index,
                "completion": choice.completion.to_dict(),
                "notes": list(choice.notes),
            },
        )
        return choice
