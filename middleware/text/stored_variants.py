"""The name variants of a stored label index, kept on disk beside it.

Deriving the name variants (``text/name_variants.py``) reads every label: 18 s at
1.45 M labels. A stored index keeps the table it derived (``kgmw-variants-HASH.sqlite``:
each key's labels and each stem's labels, in the order derived), and a lookup reads a
key's rows.

>>> import tempfile, pathlib
>>> folder = pathlib.Path(tempfile.mkdtemp())
>>> found = open_variants(folder / "v.sqlite", lambda: ["United Kingdom", "Jamaica"])
>>> found.labels("uk"), found.labels("jamaican")
(['United Kingdom'], ['Jamaica'])
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from pathlib import Path

from middleware.support.frozen_sqlite import DamagedFile, FrozenFile, kept, written
from middleware.text.name_variants import NameVariants, VariantLookup

_SCHEMA = """
CREATE TABLE keys(id INTEGER PRIMARY KEY, key TEXT NOT NULL, label TEXT NOT NULL);
CREATE TABLE stems(id INTEGER PRIMARY KEY, key TEXT NOT NULL, label TEXT NOT NULL);
"""
_INDEXES = """
CREATE INDEX keys_by_key ON keys(key);
CREATE INDEX stems_by_key ON stems(key);
"""


def storable(text: str) -> bool:
    """Whether ``text`` can be bound into a query: no lone surrogate (no label holds
    one, so such a text matches nothing)."""
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return False
    return True


def build_variants(labels: Iterable[str], target: Path) -> None:
    """Derive the name variants of ``labels`` and keep them in the file ``target``."""
    table = NameVariants(labels)
    with written(target) as db:
        db.executescript(_SCHEMA)
        for name, lists in (("keys", table.keys), ("stems", table.stems)):
            db.executemany(
                f"INSERT INTO {name}(key, label) VALUES (?, ?)",
                ((key, label) for key, found in lists.items() for label in found),
            )
        db.executescript(_INDEXES)


class _Lists(Mapping[str, Sequence[str]]):
    """A variant table on disk: the labels of a key, in the order they were derived."""

    def __init__(self, reader: FrozenFile, table: str) -> None:
        self._reader = reader
        self._sql = f"SELECT label FROM {table} WHERE key = ? ORDER BY id"

    def __getitem__(self, key: str) -> Sequence[str]:
        if not storable(key):
            raise KeyError(key)
        found = [str(label) for (label,) in self._reader.rows(self._sql, key)]
        if not found:
            raise KeyError(key)
        return found

    def __iter__(self) -> Iterator[str]:
        raise TypeError("a variant table on disk is looked up by key, not listed")

    def __len__(self) -> int:
        raise TypeError("a variant table on disk is looked up by key, not counted")


class KeptVariants(VariantLookup):
    """The variant table read from its file."""

    def __init__(self, file: FrozenFile) -> None:
        super().__init__(_Lists(file, "keys"), _Lists(file, "stems"))
        self.file = file


def open_variants(path: Path, texts: Callable[[], list[str]]) -> VariantLookup:
    """The variants kept at ``path``, derived from ``texts()`` and kept there first if
    the file is missing or damaged; derived in memory where it cannot be written."""

    def opened(path: Path) -> KeptVariants:
        reader = FrozenFile(path)
        try:
            reader.rows("SELECT count(*) FROM keys")
            reader.rows("SELECT count(*) FROM stems")
        except DamagedFile:
            reader.close()
            raise
        return KeptVariants(reader)

    found = kept(path, lambda target: build_variants(texts(), target), opened)
    return found if found is not None else NameVariants(texts())  # in this process only
