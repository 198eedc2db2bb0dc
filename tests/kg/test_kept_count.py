"""A store on disk counts its triples once per generation: the next process reads the
count kept beside the data, and a load (a new generation) counts again."""

from __future__ import annotations

import json
from pathlib import Path

from middleware.kg.backends.local import LocalStore
from middleware.kg.kept_count import FILE_NAME


def test_the_count_is_kept_per_generation(tmp_path: Path) -> None:
    store = LocalStore(tmp_path / "store", profile="metaqa")
    store.load_text("Heat|directed_by|Michael Mann\n", name="kb.txt")
    size = len(store)
    folder = store.index_folder()
    assert folder is not None
    assert json.loads((folder / FILE_NAME).read_text()) == {"triples": size}
    (folder / FILE_NAME).write_text(json.dumps({"triples": 999}))  # what a reader trusts
    assert len(LocalStore(tmp_path / "store", profile="metaqa", read_only=True)) == 999
    store.load_text("Alien|directed_by|Ridley Scott\n", name="more.txt")
    assert len(store) > size  # a new generation: counted again, not the kept 999


def test_a_damaged_count_is_counted_again(tmp_path: Path) -> None:
    store = LocalStore(tmp_path / "store", profile="metaqa")
    store.load_text("Heat|directed_by|Michael Mann\n", name="kb.txt")
    folder = store.index_folder()
    assert folder is not None
    for damaged in ("{", '{"triples": -1}', '{"triples": true}', "[1]"):
        (folder / FILE_NAME).write_text(damaged)
        reader = LocalStore(tmp_path / "store", profile="metaqa", read_only=True)
        assert len(reader) == len(store.query("SELECT * WHERE { ?s ?p ?o }").rows)


def test_a_store_in_memory_counts_every_time() -> None:
    store = LocalStore(profile="metaqa")
    store.load_text("Heat|directed_by|Michael Mann\n", name="kb.txt")
    before = len(store)
    store.load_text("Alien|directed_by|Ridley Scott\n", name="more.txt")
    assert len(store) > before
