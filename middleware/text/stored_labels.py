"""A label index kept on disk beside a store's data, opened by every later process.

Building the index in memory reads and folds every label: 42 s and 1.9 GiB for the
1.45 M labels of FB15k-237 copied 100 times, paid by every process before its first
link. A store generation never changes once it is live (a load writes a new one), so
its labels are indexed once into an SQLite file in the generation's folder, and each
process opens that file read-only: a lookup is an index read, and what stays in memory
is SQLite's page cache. The name variants (``text/name_variants.py``) go to a second
file the first time a lookup needs them.

A file's name carries a hash of what its content depends on (the format, and the
profile's label and alias predicates and language), so a store opened under another
profile builds its own. Files are written under a temporary name and renamed into
place: a reader sees a whole file or none. The hits are those of the in-memory
``LabelIndex``, in the same order.

>>> import tempfile, pathlib
>>> from pyoxigraph import NamedNode
>>> from middleware.kg.base import KnowledgeGraph, LabelRow
>>> folder = pathlib.Path(tempfile.mkdtemp())
>>> rows = [LabelRow(NamedNode("urn:e:1"), "Michael  Mann"), LabelRow(NamedNode("urn:e:2"), "Heat")]
>>> build(rows, folder / "labels.sqlite", language=None)
>>> index = StoredLabelIndex(folder / "labels.sqlite", folder / "variants.sqlite")
>>> [(h.label, h.match) for h in index.hits("michael mann")]
[('Michael  Mann', 'folded')]
>>> index.labels[NamedNode("urn:e:2")], len(index)
('Heat', 2)
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import sqlite3
import weakref
from collections.abc import Iterable, Iterator, Mapping, Sequence
from pathlib import Path

from pyoxigraph import NamedNode

from middleware.errors import ConfigError
from middleware.kg.base import KnowledgeGraph, LabelRow
from middleware.kg.profiles import Profile
from middleware.support.frozen_sqlite import DamagedFile, FrozenFile, kept, written
from middleware.text.folding import fold, normalize_space
from middleware.text.label_index import LabelIndex, LabelSearch, language_rank
from middleware.text.name_variants import VariantLookup
from middleware.text.stored_pairs import StoredPairs, build_pairs
from middleware.text.stored_variants import KeptVariants, open_variants, storable

FORMAT = 1  # raise when the files' layout or the folding changes
BATCH = 50_000  # rows written per statement batch
KEYS_LOOKED_UP = 2_000  # candidate texts a search always reads by position
# candidate texts read by position in all, past which a search reads every text once (1.5 M
# texts at x100: 1.3 s and about 150 MiB, which one question, or a few, should not pay)
KEYS_READ_BY_POSITION = 200_000

_LABELS = """
CREATE TABLE rows(id INTEGER PRIMARY KEY, entity TEXT NOT NULL, text TEXT NOT NULL,
  alias INTEGER NOT NULL, language TEXT, normalized TEXT NOT NULL, folded TEXT NOT NULL,
  exact_group INTEGER NOT NULL);
CREATE TABLE folded_keys(position INTEGER PRIMARY KEY, folded TEXT NOT NULL);
CREATE TABLE display(entity TEXT PRIMARY KEY, label TEXT NOT NULL) WITHOUT ROWID;
CREATE TABLE meta(key TEXT PRIMARY KEY, value TEXT NOT NULL) WITHOUT ROWID;
"""
_LABEL_INDEXES = """
CREATE INDEX rows_by_normalized ON rows(normalized);
CREATE INDEX rows_by_folded ON rows(folded);
"""


def file_names(profile: Profile) -> tuple[str, str]:
    """The names of the labels file and the variants file for ``profile``."""
    basis = json.dumps(
        [
            FORMAT,
            sorted(str(p) for p in profile.label_predicates),
            sorted(str(p) for p in profile.alias_predicates),
            profile.language,
        ]
    )
    digest = hashlib.sha256(basis.encode()).hexdigest()[:12]
    return f"kgmw-labels-{digest}.sqlite", f"kgmw-variants-{digest}.sqlite"


def build(rows: Iterable[LabelRow], target: Path, *, language: str | None) -> None:
    """Index ``rows`` into the SQLite file ``target`` (written whole, then renamed)."""
    groups: dict[str, int] = {}
    keys: dict[str, None] = {}
    best: dict[str, tuple[int, str]] = {}
    with written(target) as db:
        db.executescript(_LABELS)
        batch: list[tuple[str, str, int, str | None, str, str, int]] = []
        for row in rows:
            normalized, folded = normalize_space(row.text), fold(row.text)
            group = groups.setdefault(normalized, len(groups))
            if folded:
                keys.setdefault(folded)
            entity = row.entity.value
            if not row.alias:
                rank = (language_rank(row.language, language), row.text)
                if entity not in best or rank < best[entity]:
                    best[entity] = rank
            batch.append((entity, row.text, row.alias, row.language, normalized, folded, group))
            if len(batch) >= BATCH:
                _insert_rows(db, batch)
                batch = []
        _insert_rows(db, batch)
        db.executemany("INSERT INTO folded_keys(folded) VALUES (?)", ((k,) for k in keys))
        db.executemany(
            "INSERT INTO display VALUES (?, ?)", ((e, text) for e, (_, text) in best.items())
        )
        db.execute("INSERT INTO meta VALUES ('exact_texts', ?)", (str(len(groups)),))
        db.executescript(_LABEL_INDEXES)


def _insert_rows(db: sqlite3.Connection, batch: Sequence[tuple[object, ...]]) -> None:
    db.executemany(
        "INSERT INTO rows(entity, text, alias, language, normalized, folded, exact_group) "
        "VALUES (?, ?, ?, ?, ?, ?, ?)",
        batch,
    )


class _DisplayLabels(Mapping[NamedNode, str]):
    """Each entity's display label, read from the file per lookup."""

    def __init__(self, reader: FrozenFile) -> None:
        self._reader = reader

    def __getitem__(self, entity: NamedNode) -> str:
        found = self._reader.rows("SELECT label FROM display WHERE entity = ?", entity.value)
        if not found:
            raise KeyError(entity)
        return str(found[0][0])

    def __iter__(self) -> Iterator[NamedNode]:
        for (entity,) in self._reader.rows("SELECT entity FROM display"):
            yield NamedNode(str(entity))

    def __len__(self) -> int:
        return int(str(self._reader.rows("SELECT count(*) FROM display")[0][0]))


class StoredLabelIndex(LabelSearch):
    """The label search over a file written by ``build``; the name variants are kept in
    ``variants_path``, derived and written there on first use if it is not there."""

    def __init__(self, path: Path, variants_path: Path) -> None:
        super().__init__()
        self._reader = FrozenFile(path)
        self._variants_path = variants_path.resolve()
        self._variants: VariantLookup | None = None
        self._variant_files: list[FrozenFile] = []
        name = self._variants_path.name  # the pair lists' file sits beside the variants'
        self._pairs_path = self._variants_path.with_name(
            # "pairs2": an older version reading lists kept by length would misread them
            name.replace("kgmw-variants-", "kgmw-pairs2-", 1)
            if name.startswith("kgmw-variants-")
            else f"{self._variants_path.stem}-pairs2.sqlite"
        )
        self._pairs: StoredPairs | None = None
        self._every_key: Sequence[str] | None = None  # for a mention too short to bound
        self._read_by_position = 0  # candidate texts read by position so far
        self.labels = _DisplayLabels(self._reader)
        found = self._reader.rows("SELECT value FROM meta WHERE key = 'exact_texts'")
        self._size = int(str(found[0][0]))

    def _rows(self, column: str, value: str) -> list[LabelRow]:
        if not storable(value):  # no label holds a lone surrogate
            return []
        found = self._read(
            f"SELECT entity, text, alias, language FROM rows WHERE {column} = ? ORDER BY id",
            value,
        )
        return [
            LabelRow(NamedNode(str(e)), str(t), bool(a), None if lang is None else str(lang))
            for e, t, a, lang in found
        ]

    def _read(self, sql: str, *args: object) -> list[tuple[object, ...]]:
        """Rows of the labels file; a damaged file is removed, to be derived again by the
        next lookup (``label_index``), and named in the error."""
        try:
            return self._reader.rows(sql, *args)
        except DamagedFile as err:
            self.damaged = True
            with contextlib.suppress(OSError):
                err.path.unlink()
            raise ConfigError(
                f"the label index {err.path} is damaged and was removed",
                hint="run the command again: the index is built again from the store",
            ) from err

    def close(self) -> None:
        """Close the files' connections (a later lookup opens them again)."""
        self._reader.close()
        for frozen in self._variant_files:
            frozen.close()
        if self._pairs is not None:
            self._pairs.file.close()

    def fuzzy_choices(self, key: str, cutoff: float) -> Sequence[str]:
        """As in memory, from the pair lists kept beside the index (derived and kept
        there on the first typo-tolerant search if they are not there yet)."""
        with self._lock:
            if self._pairs is None:
                self._pairs = self._open_pairs()
            pairs = self._pairs
        if pairs is None:  # a folder this process cannot write: lists in memory
            return super().fuzzy_choices(key, cutoff)
        try:
            positions = pairs.positions(key, cutoff)
        except DamagedFile:
            with self._lock:
                if self._pairs is pairs:  # the first thread to see it: derived again next
                    self._pairs = None  # (its connections close once no thread holds them)
                    with contextlib.suppress(OSError):
                        self._pairs_path.unlink()
            return super().fuzzy_choices(key, cutoff)
        if positions is not None and self._every_key is None:
            with self._lock:
                by_position = len(positions) <= KEYS_LOOKED_UP or (
                    self._read_by_position + len(positions) <= KEYS_READ_BY_POSITION
                )
                if by_position:
                    self._read_by_position += len(positions)
            if by_position:
                return self._keys_at(positions)
        with self._lock:  # many candidates, often: every folded text, read once
            if self._every_key is None:
                self._every_key = self.folded_keys()
        every = self._every_key
        return every if positions is None else [every[i] for i in positions]

    def _keys_at(self, positions: list[int]) -> list[str]:
        """The folded texts at ``positions`` (0-based, in the order given)."""
        found: dict[int, str] = {}
        for start in range(0, len(positions), 500):
            chunk = [p + 1 for p in positions[start : start + 500]]  # SQLite's are 1-based
            marks = ", ".join("?" * len(chunk))
            for position, folded in self._read(
                f"SELECT position, folded FROM folded_keys WHERE position IN ({marks})", *chunk
            ):
                found[int(str(position)) - 1] = str(folded)
        return [found[p] for p in positions]

    def _open_pairs(self) -> StoredPairs | None:
        def build(path: Path) -> None:
            build_pairs(list(self.folded_keys()), path)

        return kept(self._pairs_path, build, StoredPairs)

    def exact_rows(self, text: str) -> list[LabelRow]:
        return self._rows("normalized", text)

    def folded_rows(self, key: str) -> list[LabelRow]:
        return self._rows("folded", key) if key else []  # as in memory: "" is no key

    def folded_keys(self) -> Sequence[str]:
        found = self._read("SELECT folded FROM folded_keys ORDER BY position")
        return [str(key) for (key,) in found]

    @property
    def variants(self) -> VariantLookup:
        """The name variants, read from their file (derived and kept there first if the
        file is not there yet; kept in memory where the folder cannot be written)."""
        with self._lock:
            if self._variants is None:
                self._variants = self._open_variants()
            return self._variants

    def prepare(self) -> None:
        """Derive the name variants and the character-pair lists now, kept beside."""
        super().prepare()
        with self._lock:
            if self._pairs is None:
                self._pairs = self._open_pairs()

    def _open_variants(self) -> VariantLookup:
        found = open_variants(self._variants_path, self._variant_texts)
        if isinstance(found, KeptVariants):
            self._variant_files.append(found.file)
        return found

    def _variant_texts(self) -> list[str]:
        """Every label (not alias) text, in the in-memory index's order."""
        found = self._read("SELECT text FROM rows WHERE alias = 0 ORDER BY exact_group, id")
        return [str(text) for (text,) in found]

    def __len__(self) -> int:
        return self._size


def stored_index(
    folder: Path, profile: Profile, rows: Iterable[LabelRow] | None
) -> StoredLabelIndex | None:
    """The index kept in ``folder`` for ``profile``, built from ``rows`` first if it is
    not there or cannot be read (None: no usable file and no ``rows``, or the folder
    cannot be written)."""
    labels, variants = file_names(profile)
    once = iter([rows] if rows is not None else [])  # the rows can be read only once

    def build_once(path: Path) -> None:
        found = next(once, None)
        if found is None:
            raise OSError("the label rows were read already")
        build(found, path, language=profile.language)

    return kept(
        folder / labels,
        build_once if rows is not None else None,
        lambda path: StoredLabelIndex(path, folder / variants),
    )


_INDEXES: weakref.WeakKeyDictionary[object, tuple[int, LabelSearch]] = weakref.WeakKeyDictionary()


def label_index(graph: KnowledgeGraph) -> LabelSearch:
    """The index of ``graph`` (which must have ``capabilities.label_index``), rebuilt
    when its version changes: kept on disk where the graph has a folder for files
    derived from its data, else held in memory."""
    graph.refresh()  # first: a reader moves to a load another process swapped in
    version = graph.version  # read before the rows: a later swap rebuilds again
    cached = _INDEXES.get(graph)
    if cached is None or cached[0] != version or cached[1].damaged:
        if cached is not None:
            cached[1].close()  # a file of an old generation is let go at once
        cached = (version, _built(graph))
        _INDEXES[graph] = cached
    return cached[1]


def _built(graph: KnowledgeGraph) -> LabelSearch:
    folder = graph.index_folder()
    if folder is not None:
        stored = stored_index(folder, graph.profile, graph.label_rows())
        if stored is not None:
            return stored
    return LabelIndex(graph.label_rows(), language=graph.profile.language)
