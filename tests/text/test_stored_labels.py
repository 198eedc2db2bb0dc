"""The label index kept on disk gives the in-memory index's hits, in the same order, and
is built once per store generation, by whichever process needs it first."""

from __future__ import annotations

import random
import threading
from pathlib import Path

import pytest
from pyoxigraph import NamedNode

from middleware.errors import ConfigError
from middleware.kg.backends.local import LocalStore
from middleware.kg.base import LabelRow
from middleware.kg.profiles import load_profile
from middleware.text import stored_labels
from middleware.text.label_index import LabelIndex
from middleware.text.linking import EntityLinker
from middleware.text.stored_labels import (
    StoredLabelIndex,
    build,
    file_names,
    label_index,
    stored_index,
)
from middleware.text.stored_pairs import StoredPairs as StoredPairsFile

WORDS = ["united", "kingdom", "state", "new", "york", "heat", "mann", "caf\u00e9", "of", "the"]
NAMES = [
    "United Kingdom",
    "United  Kingdom",
    "united kingdom",
    "C. S. Lewis",
    "English Language",
    "Jamaica",
    "South Australia",
    "Caf\u00e9 Society",
    "CAFE SOCIETY",
    "Heat (1995 film)",
    "Michael Mann",
    "Robin Hood: Prince of Thieves",
    "United States of America",
    "$",
    "!!",
    "",
    "   ",
]


def labelled_rows(count: int, seed: int = 3) -> list[LabelRow]:
    """Labels with shared texts, case and accent variants, aliases and languages."""
    pick = random.Random(seed)
    rows = []
    for _ in range(count):
        entity = NamedNode(f"http://ex.org/e{pick.randrange(count // 2)}")
        if pick.random() < 0.3:
            text = pick.choice(NAMES)
        else:
            text = " ".join(pick.choice(WORDS) for _ in range(pick.randint(1, 3))).title()
        language = pick.choice([None, "en", "de", "en-GB"])
        rows.append(LabelRow(entity, text, pick.random() < 0.2, language))
    return rows


MENTIONS = [
    "United Kingdom",
    "united kingdom",
    "uk",
    "cs lewis",
    "english",
    "jamaican",
    "south australian",
    "cafe society",
    "heat",
    "New York",
    "unitd kingdm",
    "robin hood",
    "usa",
    "nothing like it",
    "!",
    "?",
    "$",
    "Heat\udcff",
    "",
]


def test_the_stored_index_gives_the_same_hits_in_the_same_order(tmp_path: Path) -> None:
    rows = labelled_rows(3000)
    memory = LabelIndex(rows, language="en")
    build(rows, tmp_path / "labels.sqlite", language="en")
    stored = StoredLabelIndex(tmp_path / "labels.sqlite", tmp_path / "variants.sqlite")
    assert len(stored) == len(memory)
    assert dict(stored.labels) == memory.labels
    for mention in MENTIONS:
        for variants in (True, False):
            assert stored.hits(mention, variants=variants) == memory.hits(
                mention, variants=variants
            ), mention
        for cutoff in (60.0, 85.0):
            assert stored.fuzzy(mention, cutoff=cutoff, limit=5) == memory.fuzzy(
                mention, cutoff=cutoff, limit=5
            ), mention
    assert (tmp_path / "variants.sqlite").exists()  # derived on first use, kept
    reopened = StoredLabelIndex(tmp_path / "labels.sqlite", tmp_path / "variants.sqlite")
    assert reopened.hits("uk") == memory.hits("uk")


def test_threads_share_one_stored_index(tmp_path: Path) -> None:
    rows = labelled_rows(500)
    build(rows, tmp_path / "labels.sqlite", language=None)
    stored = StoredLabelIndex(tmp_path / "labels.sqlite", tmp_path / "variants.sqlite")
    want = LabelIndex(rows).hits("united kingdom")
    found: list[object] = []
    threads = [
        threading.Thread(target=lambda: found.append(stored.hits("united kingdom")))
        for _ in range(4)
    ]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert found == [want] * 4


def test_a_store_on_disk_indexes_its_labels_once_for_every_process(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    store = LocalStore(tmp_path / "store", profile="metaqa")
    store.load_text("Heat|directed_by|Michael Mann\n", name="kb.txt")
    built: list[int] = []
    real = stored_labels.build
    monkeypatch.setattr(stored_labels, "build", lambda *a, **k: built.append(1) or real(*a, **k))
    assert [e.label for e in EntityLinker(store).link("michael mann")] == ["Michael Mann"]
    folder = store.index_folder()
    assert folder is not None
    labels_file, _ = file_names(store.profile)
    assert (folder / labels_file).exists()
    # another reader (a later process opens the store the same way) builds nothing
    reader = LocalStore(tmp_path / "store", profile="metaqa", read_only=True)
    assert [e.label for e in EntityLinker(reader).link("heat")] == ["Heat"]
    assert built == [1]
    # a load writes a new generation: its labels are indexed again, there
    store.load_text("Alien|directed_by|Ridley Scott\n", name="more.txt")
    assert [e.label for e in EntityLinker(reader).link("ridley scott")] == ["Ridley Scott"]
    assert built == [1, 1]


def test_each_profile_gets_its_own_file() -> None:
    assert file_names(load_profile("metaqa")) != file_names(load_profile("freebase"))


def test_a_folder_that_cannot_be_written_falls_back_to_memory(tmp_path: Path) -> None:
    rows = labelled_rows(50)
    assert stored_index(tmp_path / "missing", load_profile("generic"), rows) is None
    assert not list(tmp_path.iterdir())  # nothing half-written left behind


def test_a_store_in_memory_keeps_its_index_in_memory() -> None:
    store = LocalStore(profile="metaqa")
    store.load_text("Heat|directed_by|Michael Mann\n", name="kb.txt")
    assert store.index_folder() is None
    assert isinstance(label_index(store), LabelIndex)


def test_the_files_are_readable_by_other_users_as_the_store_is(tmp_path: Path) -> None:
    import os

    old = os.umask(0o022)
    try:
        build(labelled_rows(20), tmp_path / "labels.sqlite", language=None)
    finally:
        os.umask(old)
    assert (tmp_path / "labels.sqlite").stat().st_mode & 0o777 == 0o644


def kgmw_load_heat(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> tuple[Path, tuple[int, str, str]]:
    """``kgmw load`` of one MetaQA row into a new store: the store, and the run's result."""
    from tests.cli_helpers import run

    data = tmp_path / "kb.txt"
    data.write_text("Heat|directed_by|Michael Mann\n")
    store = tmp_path / "store"
    argv = ["load", str(data), "--store", str(store), "--profile", "metaqa", "--no-progress"]
    return store, run(capsys, *argv)


def test_kgmw_load_indexes_the_labels_and_their_variants(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    store, (code, out, _) = kgmw_load_heat(tmp_path, capsys)
    assert code == 0 and "indexed 2 label texts" in out
    labels, variants = file_names(load_profile("metaqa"))
    generation = (store / "current").resolve()
    assert (generation / labels).exists() and (generation / variants).exists()
    assert (generation / labels.replace("kgmw-labels-", "kgmw-pairs2-")).exists()
    # the predicates too: at x100 FB15k-237 reading them took the first answer 28 s
    assert "and 1 predicate(s)" in out and (generation / "kgmw-predicates.json").exists()


def test_a_damaged_file_is_derived_again(tmp_path: Path) -> None:
    rows = labelled_rows(300)
    profile = load_profile("generic")
    labels, variants = file_names(profile)
    (tmp_path / labels).write_bytes(b"not a database at all" * 100)
    (tmp_path / variants).write_bytes(b"nor this")
    index = stored_index(tmp_path, profile, rows)
    assert index is not None
    want = LabelIndex(rows, language=profile.language)
    assert index.hits("uk") == want.hits("uk")  # the variants file was derived again too
    assert stored_index(tmp_path, profile, None) is not None  # the new file is whole


def test_damage_inside_the_file_is_named_and_repaired(tmp_path: Path) -> None:
    store = LocalStore(tmp_path / "store", profile="metaqa")
    lines = "".join(f"Film {i}|directed_by|Director {i}\n" for i in range(3000))
    store.load_text(lines, name="kb.txt")
    assert EntityLinker(store).link("film 7")
    folder = store.index_folder()
    assert folder is not None
    labels, _ = file_names(store.profile)
    damaged = bytearray((folder / labels).read_bytes())
    for share in (0.5, 0.7, 0.9):  # pages in the middle, not the header
        start = int(len(damaged) * share)
        damaged[start : start + 16384] = b"\xff" * 16384
    reader = LocalStore(tmp_path / "store", profile="metaqa", read_only=True)
    (folder / labels).write_bytes(bytes(damaged))
    linker = EntityLinker(reader)
    with pytest.raises(ConfigError, match="damaged and was removed"):
        for i in range(0, 3000, 7):  # some lookup reaches a damaged page
            linker.link(f"film {i}")
            linker.link(f"flm {i}")
    assert [e.label for e in linker.link("film 7")] == ["Film 7"]  # derived again
    assert stored_index(folder, store.profile, None) is not None


def test_connections_are_pooled_and_let_go_with_their_generation(tmp_path: Path) -> None:
    store = LocalStore(tmp_path / "store", profile="metaqa")
    store.load_text("Heat|directed_by|Michael Mann\n", name="kb.txt")
    index = label_index(store)
    assert isinstance(index, StoredLabelIndex)
    for _ in range(50):  # short-lived threads, one after another, share one connection
        thread = threading.Thread(target=index.hits, args=("heat",))
        thread.start()
        thread.join()
    assert len(index._reader._opened) == 1
    store.load_text("Alien|directed_by|Ridley Scott\n", name="more.txt")
    assert label_index(store) is not index
    assert index._reader._opened == []  # the old generation's file is closed at once


def test_a_relative_store_path_survives_a_change_of_folder(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    rows = labelled_rows(200)
    build(rows, Path("labels.sqlite"), language=None)
    index = StoredLabelIndex(Path("labels.sqlite"), Path("variants.sqlite"))
    monkeypatch.chdir("/")
    assert index.hits("uk") == LabelIndex(rows).hits("uk")
    assert (tmp_path / "variants.sqlite").exists()


def test_the_pair_lists_are_kept_and_a_damaged_file_derived_again(tmp_path: Path) -> None:
    rows = labelled_rows(400)
    build(rows, tmp_path / "kgmw-labels-x.sqlite", language=None)
    memory = LabelIndex(rows)
    index = StoredLabelIndex(tmp_path / "kgmw-labels-x.sqlite", tmp_path / "kgmw-variants-x.sqlite")
    assert index.fuzzy("unitd kingdm", cutoff=85.0, limit=5) == memory.fuzzy(
        "unitd kingdm", cutoff=85.0, limit=5
    )
    pairs = tmp_path / "kgmw-pairs2-x.sqlite"
    assert pairs.exists()
    pairs.write_bytes(b"damaged" * 500)
    again = StoredLabelIndex(tmp_path / "kgmw-labels-x.sqlite", tmp_path / "kgmw-variants-x.sqlite")
    assert again.fuzzy("michal mann", cutoff=60.0, limit=5) == memory.fuzzy(
        "michal mann", cutoff=60.0, limit=5
    )
    assert StoredPairsFile(pairs).size == len(memory.folded_keys())


def test_pair_lists_of_an_older_format_are_derived_again(tmp_path: Path) -> None:
    import sqlite3

    rows = labelled_rows(400)
    build(rows, tmp_path / "kgmw-labels-x.sqlite", language=None)
    pairs = tmp_path / "kgmw-pairs2-x.sqlite"
    with sqlite3.connect(pairs) as db:  # the first format: one row per pair, no lengths
        db.executescript(
            "CREATE TABLE pairs(pair TEXT PRIMARY KEY, positions BLOB NOT NULL) WITHOUT ROWID;"
            "CREATE TABLE meta(key TEXT PRIMARY KEY, value TEXT NOT NULL) WITHOUT ROWID;"
            "INSERT INTO meta VALUES ('keys', '400');"
        )
    db.close()
    index = StoredLabelIndex(tmp_path / "kgmw-labels-x.sqlite", tmp_path / "kgmw-variants-x.sqlite")
    memory = LabelIndex(rows)
    for mention in MENTIONS:
        assert index.fuzzy(mention, cutoff=85.0, limit=5) == memory.fuzzy(
            mention, cutoff=85.0, limit=5
        ), mention
    assert StoredPairsFile(pairs).size == len(memory.folded_keys())


def prepared_pair(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> tuple[StoredLabelIndex, LabelIndex]:
    """A stored index with its pair lists derived, and the same labels in memory; any
    search of more than 3 candidates counts against the by-position budget."""
    monkeypatch.setattr(stored_labels, "KEYS_LOOKED_UP", 3)
    rows = labelled_rows(1000)
    build(rows, tmp_path / "labels.sqlite", language=None)
    stored = StoredLabelIndex(tmp_path / "labels.sqlite", tmp_path / "variants.sqlite")
    stored.prepare()  # the pair lists, derived from every text first
    return stored, LabelIndex(rows)


def test_many_candidates_are_read_from_every_text_at_once(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(stored_labels, "KEYS_READ_BY_POSITION", 20)
    stored, memory = prepared_pair(tmp_path, monkeypatch)
    read_all = []
    every = stored.folded_keys
    monkeypatch.setattr(stored, "folded_keys", lambda: read_all.append(1) or every())
    for mention in MENTIONS:
        assert stored.fuzzy(mention, cutoff=60.0, limit=5) == memory.fuzzy(
            mention, cutoff=60.0, limit=5
        ), mention
    assert read_all == [1], "read once, when the texts read by position pass their budget"


def test_a_few_searches_read_only_their_candidates(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    stored, memory = prepared_pair(tmp_path, monkeypatch)
    monkeypatch.setattr(stored, "folded_keys", lambda: pytest.fail("every text was read"))
    for mention in MENTIONS:
        assert stored.fuzzy(mention, cutoff=60.0, limit=5) == memory.fuzzy(
            mention, cutoff=60.0, limit=5
        ), mention


def test_threads_searching_a_damaged_pairs_file_get_the_right_hits(tmp_path: Path) -> None:
    import sqlite3

    rows = labelled_rows(3000)
    build(rows, tmp_path / "labels.sqlite", language=None)
    first = StoredLabelIndex(tmp_path / "labels.sqlite", tmp_path / "variants.sqlite")
    first.fuzzy("heat", cutoff=90.0, limit=5)  # writes the pair lists
    first.close()
    pairs = tmp_path / "variants-pairs2.sqlite"
    assert pairs.exists() and pairs != tmp_path / "variants.sqlite"
    with sqlite3.connect(pairs) as db:  # positions past the end, and a cut blob
        db.execute("UPDATE pairs SET positions = x'ffffff7f' WHERE pair = 'he'")
        db.execute("UPDATE pairs SET positions = x'010203' WHERE pair = 'ea'")
    memory = LabelIndex(rows)
    want = memory.fuzzy("heat of the new york state", cutoff=90.0, limit=5)
    index = StoredLabelIndex(tmp_path / "labels.sqlite", tmp_path / "variants.sqlite")
    found: list[object] = []

    def search() -> None:
        found.append(index.fuzzy("heat of the new york state", cutoff=90.0, limit=5))

    threads = [threading.Thread(target=search) for _ in range(8)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert found == [want] * 8
    assert index.fuzzy("unitd kingdm", cutoff=85.0, limit=5) == memory.fuzzy(
        "unitd kingdm", cutoff=85.0, limit=5
    )  # the lists derived again


def test_kgmw_load_succeeds_when_reading_the_predicates_times_out(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """The data is live before the predicates are read: a timeout there is a note (the
    first answer that needs them reads them), not a failed load."""
    from middleware.errors import EndpointTimeout
    from middleware.kg.backends.local import LocalStore

    def slow(self: LocalStore) -> None:
        raise EndpointTimeout("local store 'kb': query ran past its 30 s timeout")

    monkeypatch.setattr(LocalStore, "relation_vocabulary", slow)
    _, (code, out, err) = kgmw_load_heat(tmp_path, capsys)
    assert code == 0 and "indexed 2 label texts in" in out
    assert "predicates were not read" in err and "30 s timeout" in err
