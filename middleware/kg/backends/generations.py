"""A store folder's generations: ``gen-NNNNNN`` directories, each a complete pyoxigraph
store, and the ``current`` link that names the one in use.

A load writes a new generation and swaps the link atomically, so readers see the old
graph or the new one, never half of one.
"""

from __future__ import annotations

import json
import os
import shutil
import tempfile
import time
from pathlib import Path

META_FILE = "kgmw-store.json"
CURRENT = "current"


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
    handle, tmp_meta = tempfile.mkstemp(dir=folder, prefix=".meta-")
    with os.fdopen(handle, "w", encoding="utf-8") as out:
        json.dump(meta, out)
    os.replace(tmp_meta, folder / META_FILE)
    _fsync_dir(folder)


def remove_stale(folder: Path, keep: set[str]) -> None:
    """Delete every generation not named in ``keep``."""
    for candidate in folder.glob("gen-*"):
        if candidate.name not in keep:
            shutil.rmtree(candidate, ignore_errors=True)


def _fsync_dir(path: Path) -> None:
    fd = os.open(path, os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)
