"""The one file lock: an exclusive ``flock`` that processes and threads take in turn."""

from __future__ import annotations

import fcntl
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import IO


class LockTimeout(TimeoutError):
    """``file_lock`` waited ``timeout`` seconds and the lock stayed taken."""


@contextmanager
def file_lock(
    path: Path, *, timeout: float | None = None, waiting: Callable[[], None] | None = None
) -> Iterator[None]:
    """Hold an exclusive lock on ``path`` (created with its folder if missing).

    >>> import tempfile
    >>> with file_lock(Path(tempfile.mkdtemp()) / "x.lock"):
    ...     pass
    """
    path.parent.mkdir(parents=True, exist_ok=True)
    with path.open("w") as handle:
        if timeout is None:
            fcntl.flock(handle, fcntl.LOCK_EX)
        else:
            _wait_for(handle, timeout, waiting)
        try:
            yield
        finally:
            fcntl.flock(handle, fcntl.LOCK_UN)


def _wait_for(handle: IO[str], timeout: float, waiting: Callable[[], None] | None) -> None:
    """Take the lock, trying again until ``timeout``; ``waiting`` is called once when
    the lock is taken by someone else."""
    deadline = time.monotonic() + timeout
    told = False
    while True:
        try:
            fcntl.flock(handle, fcntl.LOCK_EX | fcntl.LOCK_NB)
            return
        except BlockingIOError:
            if time.monotonic() >= deadline:
                raise LockTimeout(f"{handle.name} stayed locked for {timeout:g} s") from None
            if waiting is not None and not told:
                waiting()
                told = True
            time.sleep(0.1)
