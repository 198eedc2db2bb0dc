"""Chat answers kept on disk for ``GET /v1/answers/{id}``: per owner, for a while, capped.

One SQLite file per host in the cache folder, shared by every worker process there.
Ids are 128 random bits. Each answer records its owner: the SHA-256 of the API key
that asked for it, or ``open`` when the service had no keys; only the same owner
reads it back, and a stranger's, an expired or an evicted answer all read as missing.
An answer's age is read against the time to live in force, so lowering ``answers_ttl``
takes effect at once. Opening the file and every write sweep expired answers; a write
then drops the oldest until the file's answers fit in ``max_bytes``.
"""

from __future__ import annotations

import hashlib
import json
import re
import secrets
import socket
import sqlite3
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from middleware.support.cache_dir import cache_root
from middleware.support.sqlite_file import SqliteFile

ID_PREFIX = "chatcmpl-kgmw-"
ID_PATTERN = re.compile(ID_PREFIX + r"[0-9a-f]{32}")
OPEN_OWNER = "open"
_SCHEMA = """CREATE TABLE IF NOT EXISTS answers (
    id TEXT PRIMARY KEY, owner TEXT NOT NULL, created REAL NOT NULL,
    size INTEGER NOT NULL, body TEXT NOT NULL)"""


def new_answer_id() -> str:
    """A completion id nobody can guess: ``chatcmpl-kgmw-`` and 32 random hex digits."""
    return ID_PREFIX + secrets.token_hex(16)


def owner_of(authorization: str | None, *, keys: bool) -> str:
    """Who owns what a request creates: the digest of its bearer key when the service
    has keys (admission has checked it), else ``open``."""
    if not keys:
        return OPEN_OWNER
    token = (authorization or "").strip().partition(" ")[2].strip()
    return "sha256:" + hashlib.sha256(token.encode()).hexdigest()


def store_path(cache_dir: str | None) -> Path:
    """``answers/HOST.sqlite`` under the cache folder (one file per host, so a cache
    folder on a shared disk never has two hosts writing one SQLite file)."""
    host = re.sub(r"[^A-Za-z0-9._-]", "_", socket.gethostname()) or "host"
    return cache_root(cache_dir) / "answers" / f"{host}.sqlite"


class AnswerStore:
    """Answers by id for ``ttl`` seconds, at most ``max_bytes`` of them in all."""

    def __init__(
        self,
        path: str | Path,
        *,
        ttl: float,
        max_bytes: int,
        clock: Callable[[], float] = time.time,
    ) -> None:
        self._file = SqliteFile(path, _SCHEMA)
        self.ttl = ttl
        self.max_bytes = max_bytes
        self._clock = clock
        db = self._file.db()
        with db:
            db.execute("DELETE FROM answers WHERE created <= ?", (self._clock() - self.ttl,))

    def put(self, answer_id: str, owner: str, body: dict[str, Any]) -> bool:
        """Keep ``body``; False when it alone is larger than the cap (then not kept)."""
        text = json.dumps(body, ensure_ascii=False)
        size = len(text.encode("utf-8"))
        if size > self.max_bytes:
            return False
        now = self._clock()
        db = self._file.db()
        with db:
            db.execute("BEGIN IMMEDIATE")  # one writer at a time across processes
            db.execute("DELETE FROM answers WHERE created <= ?", (now - self.ttl,))
            db.execute(
                "INSERT OR REPLACE INTO answers VALUES (?, ?, ?, ?, ?)",
                (answer_id, owner, now, size, text),
            )
            self._evict(db)
        return True

    def _evict(self, db: sqlite3.Connection) -> None:
        total = db.execute("SELECT COALESCE(SUM(size), 0) FROM answers").fetchone()[0]
        rows = db.execute("SELECT id, size FROM answers ORDER BY created, rowid").fetchall()
        doomed = []
        for answer_id, size in rows:
            if total <= self.max_bytes:
                break
            doomed.append((answer_id,))
            total -= size
        db.executemany("DELETE FROM answers WHERE id = ?", doomed)

    def get(self, answer_id: str, owner: str) -> dict[str, Any] | None:
        """The answer kept as ``answer_id`` for ``owner``; None when there is none, it
        expired, or it belongs to someone else."""
        if not ID_PATTERN.fullmatch(answer_id):
            return None
        row = (
            self._file.db()
            .execute(
                "SELECT owner, body FROM answers WHERE id = ? AND created > ?",
                (answer_id, self._clock() - self.ttl),
            )
            .fetchone()
        )
        if row is None or not secrets.compare_digest(row[0], owner):
            return None
        found: dict[str, Any] = json.loads(row[1])
        return found

    def ids(self) -> list[str]:
        """Every id in the file, oldest first (expired ones too, until the next write)."""
        rows = self._file.db().execute("SELECT id FROM answers ORDER BY created, rowid")
        return [row[0] for row in rows]

    def size(self) -> int:
        row = self._file.db().execute("SELECT COALESCE(SUM(size), 0) FROM answers").fetchone()
        return int(row[0])
