"""The character-pair lists of a stored label index, kept on disk beside it.

A typo-tolerant search scores only the labels that share enough character pairs with
the mention (``text/bigrams.py``). In memory, the pair lists of every label are built
on a process's first such search: 7.8 s and 325 MiB for the 1.47 M folded labels of
FB15k-237 copied 100 times. Kept in an SQLite file (``kgmw-pairs2-HASH.sqlite``, one
row per pair and label length holding its positions as little-endian 32-bit
integers), a search reads only the rows of the mention's own pairs at the lengths
within reach, then the candidate labels by position. A file of another ``FORMAT`` (an
older one, without lengths) counts as damaged, so it is derived again.

>>> import tempfile, pathlib
>>> folder = pathlib.Path(tempfile.mkdtemp())
>>> keys = ["heat", "michael mann", "the heat"]
>>> build_pairs(keys, folder / "pairs.sqlite")
>>> pairs = StoredPairs(folder / "pairs.sqlite")
>>> pairs.positions("michel mann", 85.0)
[1]
>>> pairs.positions("hat", 85.0)  # too short for the pair bound: lengths 3 and 4
[0]
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np

from middleware.support.frozen_sqlite import DamagedFile, FrozenFile, written
from middleware.text.bigrams import candidate_positions, postings_of

FORMAT = "2"  # pair lists by label length

_SCHEMA = """
CREATE TABLE pairs(
  pair TEXT NOT NULL, length INTEGER NOT NULL, positions BLOB NOT NULL,
  PRIMARY KEY (pair, length)
) WITHOUT ROWID;
CREATE TABLE meta(key TEXT PRIMARY KEY, value TEXT NOT NULL) WITHOUT ROWID;
"""


def build_pairs(keys: list[str], target: Path) -> None:
    """Keep the pair lists of ``keys`` (by position, per label length) in the file
    ``target``."""
    with written(target) as db:
        db.executescript(_SCHEMA)
        db.executemany(
            "INSERT INTO pairs VALUES (?, ?, ?)",
            (
                (pair, length, positions.astype("<i4").tobytes())
                for pair, length, positions in postings_of(keys)
            ),
        )
        db.execute("INSERT INTO meta VALUES ('keys', ?)", (str(len(keys)),))
        db.execute("INSERT INTO meta VALUES ('format', ?)", (FORMAT,))


class StoredPairs:
    """The pair lists in a file written by ``build_pairs``."""

    def __init__(self, path: Path) -> None:
        self.file = FrozenFile(path)
        meta = {str(k): str(v) for k, v in self.file.rows("SELECT key, value FROM meta")}
        if meta.get("format") != FORMAT:
            raise DamagedFile(path, f"pair lists of format {meta.get('format')}, not {FORMAT}")
        self.size = int(meta["keys"])
        found = self.file.rows("SELECT max(length) FROM pairs WHERE pair = ''")
        self.longest = int(str(found[0][0])) if found and found[0][0] is not None else 0

    def _postings(self, pair: str, low: int, high: int) -> list[tuple[int, np.ndarray[Any, Any]]]:
        found = self.file.rows(
            "SELECT length, positions FROM pairs WHERE pair = ? AND length BETWEEN ? AND ?",
            pair,
            low,
            high,
        )
        return [(int(str(length)), self._checked(pair, blob)) for length, blob in found]

    def _checked(self, pair: str, blob: object) -> np.ndarray[Any, Any]:
        if not isinstance(blob, bytes) or len(blob) % 4:
            raise DamagedFile(self.file.path, f"the positions of pair {pair!r} are cut")
        positions = np.frombuffer(blob, dtype="<i4")
        if len(positions) and (positions.min() < 0 or positions.max() >= self.size):
            raise DamagedFile(self.file.path, f"the positions of pair {pair!r} are out of range")
        return positions

    def positions(self, key: str, cutoff: float) -> list[int] | None:
        """The positions of the labels that may reach ``cutoff`` against ``key``, in
        order; None when every label must be scored (no cutoff)."""
        return candidate_positions(key, cutoff, self._postings, self.longest)
