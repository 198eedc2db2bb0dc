"""SQLite files written once, whole, then only read, by many threads and processes.

``written(target)`` gives a connection to a new file beside ``target`` and renames it
into place when the block ends well (after an fsync, so a crash cannot leave a renamed
file with pages missing); a failed or interrupted block leaves nothing behind, and a
later write removes what a killed writer left. ``FrozenFile`` reads such a file with
connections opened ``immutable`` (no locks, no journal), lent to one thread at a time
from a pool, opened again after a fork and closed by ``close()`` or when the reader is
collected. A read that finds the file damaged raises ``DamagedFile``.

>>> import pathlib, tempfile
>>> target = pathlib.Path(tempfile.mkdtemp()) / "numbers.sqlite"
>>> with written(target) as db:
...     _ = db.execute("CREATE TABLE t(n INTEGER)")
...     _ = db.executemany("INSERT INTO t VALUES (?)", [(1,), (2,)])
>>> frozen = FrozenFile(target)
>>> frozen.rows("SELECT sum(n) FROM t")
[(3,)]
>>> frozen.close()
"""

from __future__ import annotations

import contextlib
import os
import sqlite3
import threading
import weakref
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import TypeVar

from middleware.support.temp_files import temporary_beside

Opened = TypeVar("Opened")
TEMPORARY = ".frozen-{pid}-"  # a temporary file's prefix names the process writing it


class DamagedFile(Exception):
    """A frozen file could not be read as written (``path`` names it)."""

    def __init__(self, path: Path, why: str) -> None:
        super().__init__(f"{path} is damaged ({why})")
        self.path = path


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:  # another user's process: alive
        return True
    return True


def _remove_abandoned(folder: Path) -> None:
    """Delete the temporary files of writers that are gone (killed mid-write)."""
    for leftover in folder.glob(".frozen-*-*"):
        pid = leftover.name.split("-")[1]
        if pid.isdigit() and not _alive(int(pid)):
            with contextlib.suppress(OSError):
                leftover.unlink()


@contextlib.contextmanager
def written(target: Path) -> Iterator[sqlite3.Connection]:
    """A connection to a new file that replaces ``target`` when the block ends well."""
    _remove_abandoned(target.parent)
    handle, temporary = temporary_beside(target, prefix=TEMPORARY.format(pid=os.getpid()))
    os.close(handle)
    connection = sqlite3.connect(temporary)
    try:
        connection.execute("PRAGMA journal_mode=OFF")
        connection.execute("PRAGMA synchronous=OFF")  # one fsync at the end instead
        yield connection
        connection.commit()
        connection.close()
        with open(temporary, "rb") as done:
            os.fsync(done.fileno())
        os.replace(temporary, target)
    except BaseException:  # also Ctrl-C: nothing half-written stays; re-raised
        connection.close()
        with contextlib.suppress(OSError):
            os.unlink(temporary)
        raise


def _close_all(connections: list[sqlite3.Connection]) -> None:
    for connection in connections:
        with contextlib.suppress(sqlite3.Error):
            connection.close()
    connections.clear()


class FrozenFile:
    """Read-only, pooled connections to one file that never changes."""

    def __init__(self, path: Path) -> None:
        self.path = path.resolve()  # a URI needs it whole, and the working folder may change
        self._lock = threading.Lock()
        self._idle: list[sqlite3.Connection] = []
        self._opened: list[sqlite3.Connection] = []  # every connection of this process
        self._pid = os.getpid()
        self._closing = False  # close() was called while some connections were lent
        self._closer = weakref.finalize(self, _close_all, self._opened)

    def _lend(self) -> sqlite3.Connection:
        with self._lock:
            if self._pid != os.getpid():  # a forked child: the parent's connections stay its own
                self._idle, self._opened, self._pid = [], [], os.getpid()
                self._closer.detach()
                self._closer = weakref.finalize(self, _close_all, self._opened)
            self._closing = False  # a read after close() opens afresh
            if self._idle:
                return self._idle.pop()
        uri = f"{self.path.as_uri()}?mode=ro&immutable=1"
        try:
            connection = sqlite3.connect(uri, uri=True, check_same_thread=False)
        except sqlite3.Error as err:
            raise DamagedFile(self.path, str(err)) from err
        with self._lock:
            self._opened.append(connection)
        return connection

    def rows(self, sql: str, *args: object) -> list[tuple[object, ...]]:
        """Every row of ``sql`` with ``args`` bound."""
        connection = self._lend()
        try:
            return list(connection.execute(sql, args))
        except sqlite3.DatabaseError as err:  # also "file is not a database", "malformed"
            raise DamagedFile(self.path, str(err)) from err
        finally:
            with self._lock:
                if connection not in self._opened:  # a fork reset the pool meanwhile
                    pass
                elif self._closing:  # closed meanwhile: this connection goes too
                    self._opened.remove(connection)
                    connection.close()
                else:
                    self._idle.append(connection)

    def close(self) -> None:
        """Close the connections no thread is using now, and the others as their reads
        end (a later read opens one again)."""
        with self._lock:
            idle, self._idle = self._idle, []
            for connection in idle:
                self._opened.remove(connection)
                connection.close()
            self._closing = bool(self._opened)


def kept(
    path: Path, build: Callable[[Path], None] | None, open_file: Callable[[Path], Opened]
) -> Opened | None:
    """The file at ``path`` as ``open_file`` reads it: built first with ``build`` where
    it is missing, and removed and built again, once, where ``open_file`` finds it
    damaged (``DamagedFile``, or content not as written: ``IndexError``,
    ``ValueError``). None where there is no usable file and none can be built (no
    ``build``, or a folder this process cannot write)."""
    for _ in range(2):
        if not path.exists():
            if build is None:
                return None
            try:
                build(path)
            except (OSError, sqlite3.Error):
                return None
        try:
            return open_file(path)
        except (DamagedFile, IndexError, ValueError):
            with contextlib.suppress(OSError):
                path.unlink()
    return None
