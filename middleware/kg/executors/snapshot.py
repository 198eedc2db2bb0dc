"""An in-memory store copied to a store folder, so executor processes can open it.

Executors are forked from a fork server, not from the process that holds the store in
memory, so they cannot see it. ``Snapshot`` writes it to a temporary store folder as a
generation (``backends/generations.py``) and writes a new one when the store's content
changes; executors move to the newest generation before each query, as readers of any
store folder do. The folder goes when the snapshot is closed or the process exits.
"""

from __future__ import annotations

import shutil
import tempfile
import threading
import weakref
from pathlib import Path

import pyoxigraph as ox

from middleware.kg.backends.generations import new_generation_dir, remove_stale, swap


class Snapshot:
    """A folder holding the latest copy of an in-memory store."""

    def __init__(self) -> None:
        self.folder = Path(tempfile.mkdtemp(prefix="kgmw-snapshot-"))
        self.version: object = None  # what the copy was made from
        self._lock = threading.Lock()
        self._cleanup = weakref.finalize(self, shutil.rmtree, self.folder, True)

    def update(self, store: ox.Store, version: object) -> None:
        """Copy ``store`` unless the copy was made from ``version`` already."""
        with self._lock:
            if version == self.version:
                return
            generation = new_generation_dir(self.folder)
            copy = ox.Store(str(generation))
            copy.bulk_extend(store)
            copy.flush()
            del copy
            swap(self.folder, generation, "generic")
            remove_stale(self.folder, {generation.name})
            self.version = version

    def close(self) -> None:
        self._cleanup()
