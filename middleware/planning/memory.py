"""The path memory: learned questions (topic masked) and the relation paths that answered
them, for one source. A JSON file (versioned) with the question vectors beside it.

It records what it was learned from, the source (kind, location, profile) and the
source's fingerprint at the time, and the encoder. Loading it for another source or
profile is refused; for the same store loaded again since, it warns that it may be
stale. Entries are keyed by (dataset, split, question id): learning a question again
replaces its entry.
"""

from __future__ import annotations

import hashlib
import json
import os
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from middleware.errors import ConfigError
from middleware.kg.base import KnowledgeGraph
from middleware.kg.identity import data_fingerprint, source_identity, store_folder
from middleware.planning.mining import MinedPath
from middleware.support.cache_dir import cache_root

FORMAT = "kgmw-path-memory"
VERSION = 1
FILE_NAME = "path-memory.json"


def fingerprint(graph: KnowledgeGraph) -> dict[str, Any]:
    """What changes when the source's data does (a store's live generation and size)."""
    return data_fingerprint(graph)


def default_location(graph: KnowledgeGraph, cache_dir: str | None) -> Path:
    """The store folder for a store on disk; otherwise the cache folder, keyed by the
    source's location and profile."""
    folder = store_folder(graph)
    if folder is not None:
        return folder / FILE_NAME
    identity = source_identity(graph)
    digest = hashlib.sha256(f"{identity['location']}|{identity['profile']}".encode()).hexdigest()
    return cache_root(cache_dir) / "path-memory" / f"{digest[:20]}.json"


@dataclass
class MemoryEntry:
    """One learned question: its masked text, hop count if known, and best paths."""

    key: str
    question: str
    paths: list[MinedPath]
    hops: str | None = None
    generated: bool = False  # worded from the graph (``from_graph.py``), not a user's question

    def to_dict(self) -> dict[str, Any]:
        data: dict[str, Any] = {
            "key": self.key,
            "question": self.question,
            "hops": self.hops,
            "paths": [p.to_dict() for p in self.paths],
        }
        if self.generated:
            data["generated"] = True
        return data

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> MemoryEntry:
        paths = [
            MinedPath(str(p["path"]), str(p["topic"]), int(p["reached"]), int(p["others"]))
            for p in data.get("paths", [])
        ]
        return cls(
            str(data["key"]),
            str(data["question"]),
            paths,
            data.get("hops"),
            bool(data.get("generated", False)),
        )


@dataclass
class PathMemory:
    """Learned entries for one source, and what they were learned from."""

    source: dict[str, Any]
    encoder: str
    fingerprint: dict[str, Any] = field(default_factory=dict)  # of its learned entries
    learned_from: list[dict[str, Any]] = field(default_factory=list)
    entries: dict[str, MemoryEntry] = field(default_factory=dict)
    vectors: np.ndarray | None = None  # one row per entry, in entry order
    worded_fingerprint: dict[str, Any] = field(default_factory=dict)  # of generated ones

    @classmethod
    def new(cls, graph: KnowledgeGraph, encoder: str) -> PathMemory:
        return cls(source_identity(graph), encoder, fingerprint(graph))

    def add(self, entry: MemoryEntry) -> None:
        self.entries[entry.key] = entry
        self.vectors = None

    @property
    def generated(self) -> bool:
        """True when some entries were worded from the graph (``kgmw learn --from-graph``)."""
        return any(e.generated for e in self.entries.values())

    def counts(self) -> dict[str, Any]:
        """Entries, those with at least one path, and both by hop count."""
        with_paths = [e for e in self.entries.values() if e.paths]
        return {
            "entries": len(self.entries),
            "with_paths": len(with_paths),
            "by_hops": dict(Counter(str(e.hops) for e in self.entries.values())),
            "with_paths_by_hops": dict(Counter(str(e.hops) for e in with_paths)),
            "generated": sum(e.generated for e in self.entries.values()),
        }

    def check(self, graph: KnowledgeGraph) -> list[str]:
        """Refuse a memory learned on another source or profile; warnings if stale."""
        here = source_identity(graph)
        for what in ("profile", "kind", "location"):
            if self.source.get(what) != here[what]:
                raise ConfigError(
                    f"this path memory was learned on {self.source.get('kind')} "
                    f"{self.source.get('location')!r} (profile {self.source.get('profile')}), "
                    f"not on {here['kind']} {here['location']!r} (profile {here['profile']})",
                    hint="learn a memory for this source with `kgmw learn`, or give --memory",
                )
        now = fingerprint(graph)
        learned = any(not e.generated for e in self.entries.values()) or not self.generated
        if learned and self.fingerprint and now and now != self.fingerprint:
            return [
                "the store was loaded again since its path memory was learned "
                f"({self.fingerprint} then, {now} now); it may be stale: run `kgmw learn` again"
            ]
        if self.generated and self.worded_at and now and now != self.worded_at:
            return [
                "the store was loaded again since this path memory's generated entries were "
                f"worded ({self.worded_at} then, {now} now); they may be stale: run "
                "`kgmw learn --from-graph` again"
            ]
        return []

    @property
    def worded_at(self) -> dict[str, Any]:
        """The fingerprint of the graph its generated entries were worded from (a
        memory of an earlier version: that of the memory as a whole)."""
        return self.worded_fingerprint or self.fingerprint

    # -- files ----------------------------------------------------------------------------
    def to_dict(self) -> dict[str, Any]:
        return {
            "format": FORMAT,
            "version": VERSION,
            "source": self.source,
            "fingerprint": self.fingerprint,
            "worded_fingerprint": self.worded_fingerprint,
            "encoder": self.encoder,
            "learned_from": self.learned_from,
            "counts": self.counts(),
            "entries": [e.to_dict() for e in self.entries.values()],
        }

    def save(self, path: Path) -> None:
        """Write the JSON and the vectors (``.npy`` beside it) atomically."""
        path.parent.mkdir(parents=True, exist_ok=True)
        tmp = path.with_name(path.name + ".tmp")
        tmp.write_text(json.dumps(self.to_dict(), ensure_ascii=False), encoding="utf-8")
        if self.vectors is not None:
            with open(vectors_path(path).with_suffix(".tmp.npy"), "wb") as handle:
                np.save(handle, self.vectors.astype(np.float32))
            os.replace(vectors_path(path).with_suffix(".tmp.npy"), vectors_path(path))
        else:  # vectors of other entries must not be read as these ones'
            vectors_path(path).unlink(missing_ok=True)
        os.replace(tmp, path)

    @classmethod
    def load(cls, path: Path) -> PathMemory:
        """Read a memory file; anything else is a ConfigError naming the file."""
        try:
            data = json.loads(path.read_text(encoding="utf-8"))
        except (OSError, UnicodeDecodeError, json.JSONDecodeError) as err:
            raise ConfigError(f"{path}: cannot read the path memory: {err}") from err
        if not isinstance(data, dict) or data.get("format") != FORMAT:
            raise ConfigError(f"{path}: not a kgmw path memory")
        if data.get("version") != VERSION:
            raise ConfigError(
                f"{path}: path memory version {data.get('version')}, this kgmw reads {VERSION}",
                hint="learn it again with `kgmw learn`",
            )
        try:
            entries = [MemoryEntry.from_dict(e) for e in data["entries"]]
            memory = cls(
                dict(data["source"]),
                str(data["encoder"]),
                dict(data.get("fingerprint") or {}),
                list(data.get("learned_from") or []),
                {e.key: e for e in entries},
                worded_fingerprint=dict(data.get("worded_fingerprint") or {}),
            )
        except (KeyError, TypeError, ValueError) as err:
            raise ConfigError(f"{path}: malformed path memory ({err})") from err
        stored = vectors_path(path)
        if stored.is_file():
            vectors = np.load(stored)
            if vectors.shape[0] == len(memory.entries):
                memory.vectors = vectors
        return memory


def vectors_path(path: Path) -> Path:
    return path.with_suffix(".npy")


def memory_location(graph: KnowledgeGraph, configured: str | None, cache_dir: str | None) -> Path:
    """``configured`` (``--memory``, setting ``plan_memory``) or the source's default."""
    return Path(configured).expanduser() if configured else default_location(graph, cache_dir)


def open_memory(graph: KnowledgeGraph, path: Path) -> tuple[PathMemory | None, list[str]]:
    """The memory at ``path`` checked against ``graph`` (None if there is none yet),
    and its warnings; a memory of another source or profile is a ConfigError."""
    if not path.is_file():
        return None, []
    memory = PathMemory.load(path)
    return memory, memory.check(graph)
