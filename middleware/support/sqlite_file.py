"""A small SQLite file shared by threads and processes: one connection per thread, WAL."""

from __future__ import annotations

import sqlite3
import threading
from pathlib import Path


class SqliteFile:
    """Opens (creating if needed) ``path`` and runs ``schema`` once; ``db()`` per thread."""

    def __init__(self, path: str | Path, schema: str) -> None:
        self.path = Path(path).expanduser()
        self.path.parent.mkdir(parents=True, exist_ok=True)
        self._local = threading.local()
        with self.db() as db:
            db.execute("PRAGMA journal_mode=WAL")
            db.execute(schema)

    def db(self) -> sqlite3.Connection:
        connection: sqlite3.Connection | None = getattr(self._local, "db", None)
        if connection is None:
            connection = sqlite3.connect(self.path, timeout=30.0)
            self._local.db = connection
        return connection
