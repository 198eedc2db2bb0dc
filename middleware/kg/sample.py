"""The bundled sample graph, loaded on first use into the user's cache directory."""

from __future__ import annotations

import hashlib
from pathlib import Path

from middleware.kg.backends.generations import CURRENT
from middleware.kg.backends.local import LocalStore
from middleware.kg.executors.limits import ExecutorLimits
from middleware.support.cache_dir import cache_root
from middleware.support.locks import file_lock
from middleware.support.resources import data_file

SAMPLE_FILE = "metaqa-sample.txt.gz"
SAMPLE_PROFILE = "metaqa"
SAMPLE_NAME = "sample"


def sample_store_dir(cache_dir: str | None = None) -> Path:
    """Where the sample store lives; the name changes when the shipped file changes."""
    digest = hashlib.sha256(data_file(SAMPLE_FILE).read_bytes()).hexdigest()[:12]
    return cache_root(cache_dir) / f"sample-metaqa-{digest}"


def sample_store(
    *,
    cache_dir: str | None = None,
    progress: bool = False,
    timeout: float = 30.0,
    executors: ExecutorLimits | None = None,
) -> LocalStore:
    """Open the sample store read-only, loading it first if this machine lacks it."""
    folder = sample_store_dir(cache_dir)
    if not (folder / CURRENT).is_symlink() or not (folder / ".complete").exists():
        with file_lock(folder.parent / f"{folder.name}.lock"):
            if not (folder / ".complete").exists():
                writer = LocalStore(
                    folder, profile=SAMPLE_PROFILE, name=SAMPLE_NAME, progress=progress
                )
                if len(writer) == 0:
                    writer.load([data_file(SAMPLE_FILE)])
                writer.close()
                del writer
                (folder / ".complete").touch()
    return LocalStore(
        folder,
        profile=SAMPLE_PROFILE,
        name=SAMPLE_NAME,
        read_only=True,
        timeout=timeout,
        executors=executors,
    )
