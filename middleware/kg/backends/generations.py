"""A store folder's generations: ``gen-NNNNNN`` directories, each a complete pyoxigraph
store, and the ``current`` link that names the one in use.

A load writes a new generation and swaps the link atomically, so readers see the old
graph or the new one, never half of one. A reader holds a shared lock on the generation
it has open (``hold``); a load deletes an old generation only when it can lock it
alone, so a query that spans two loads never reads a deleted generation: the next load
after its reader moved on deletes it.
"""

from __future__ import annotations

import contextlib
import fcntl
import os
import shutil
import time
from pathlib import Path

from middleware.support.temp_files import write_json

META_FILE = "kgmw-store.json"
CURRENT = "current"
READERS = "kgmw-readers.lock"  # inside a generation: shared-locked by each reader


def hold(generation: Path) -> int | None:
    """A shared lock on ``generation`` for a reader (a file descriptor to ``release``);
    None when it cannot be taken: it is being deleted, or the folder is not writable."""
    try:
        fd = os.open(generation / READERS, os.O_RDONLY | os.O_CREAT, 0o644)
    except OSError:
        return None
    try:
        fcntl.flock(fd, fcntl.LOCK_SH | fcntl.LOCK_NB)
    except OSError:
        os.close(fd)
        return None
    return fd


def release(fd: int | None) -> None:
    """Let go of a reader's lock."""
    if fd is not None:
        with contextlib.suppress(OSError):
            os.close(fd)


def current_name(folder: Path) -> str | None:
    """The generation ``current`` points at, None when there is none."""
    try:
        return os.readlink(folder / CURRENT)
    except OSError:
        return None


def new_generation_dir(folder: Path) -> Path:
    """The path for the next generation (not created)."""
    folder.mkdir(parents=True, exist_ok=True)
    numbers = [int(p.name[4:]) for p in folder.glob("gen-*") if p.name[4:].isdigit()]
    return folder / f"gen-{max(numbers, default=0) + 1:06d}"


def swap(folder: Path, generation: Path, profile: str) -> None:
    """Point ``current`` at ``generation`` atomically (rename of a symlink), and record
    the profile and generation in the folder's metadata."""
    temp = folder / f".current-{os.getpid()}"
    if temp.is_symlink():
        temp.unlink()
    os.symlink(generation.name, temp)
    os.replace(temp, folder / CURRENT)
    meta = {"profile": profile, "generation": generation.name, "updated": time.time()}
    write_json(folder / META_FILE, meta, prefix=".meta-")
    _fsync_dir(folder)


def remove_stale(folder: Path, keep: set[str]) -> None:
    """Delete every generation not named in ``keep`` that no reader holds."""
    for candidate in folder.glob("gen-*"):
        if candidate.name in keep:
            continue
        try:
            fd = os.open(candidate / READERS, os.O_RDONLY | os.O_CREAT, 0o644)
        except OSError:  # half-written or already half-deleted: nobody reads it
            shutil.rmtree(candidate, ignore_errors=True)
            continue
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except OSError:
            os.close(fd)
            continue  # a reader still has it open: a later load deletes it
        try:  # held alone while it goes, so no reader can take it meanwhile
            shutil.rmtree(candidate, ignore_errors=True)
        finally:
            os.close(fd)


def _fsync_dir(path: Path) -> None:
    fd = os.open(path, os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)
