"""A store on disk reads its predicates once per generation, not once per process:
the first process keeps them in the generation's folder, the next ones read that file,
and a load (a new generation) reads them again."""

from __future__ import annotations

import json
from pathlib import Path

from pyoxigraph import NamedNode

from middleware.kg.vocabulary_file import FILE_NAME, keep
from middleware.testing.observed import QueryLog

SCAN = "SELECT DISTINCT ?p"


def opened(folder: Path) -> QueryLog:
    store = QueryLog(folder, profile="metaqa", read_only=True)
    store.texts = []
    return store


def names(predicates: list[NamedNode] | None) -> list[str]:
    assert predicates is not None
    return [p.value.rsplit("/", 1)[-1] for p in predicates]


def test_the_next_process_reads_the_kept_predicates_and_a_load_reads_them_again(
    tmp_path: Path,
) -> None:
    folder = tmp_path / "store"
    writer = QueryLog(folder, profile="metaqa")
    writer.texts = []
    writer.load_text("Heat|directed_by|Michael Mann\n", name="kb.txt")

    first = opened(folder)
    assert names(first.relation_vocabulary()) == ["directed_by"]
    assert any(SCAN in t for t in first.texts), "the first reader scans the graph"
    kept = first.vocabulary_file()
    assert kept is not None and kept.name == FILE_NAME and kept.is_file()

    second = opened(folder)
    assert names(second.relation_vocabulary()) == ["directed_by"]
    assert not any(SCAN in t for t in second.texts), "the next reader reads the kept file"

    writer.load_text("Heat|in_language|English\n", name="more.txt")
    third = opened(folder)
    assert names(third.relation_vocabulary()) == ["directed_by", "in_language"]
    assert any(SCAN in t for t in third.texts), "a new generation is read again"


def test_a_damaged_file_is_read_past(tmp_path: Path) -> None:
    folder = tmp_path / "store"
    QueryLog(folder, profile="metaqa").load_text("Heat|directed_by|Michael Mann\n", name="kb.txt")
    first = opened(folder)
    path = first.vocabulary_file()
    assert path is not None
    path.write_text("{not json")
    assert names(first.relation_vocabulary()) == ["directed_by"]
    assert any(SCAN in t for t in first.texts)


class LoadDuringScan(QueryLog):
    """A reader whose scan of the predicates is overtaken by another process's load."""

    def after(self, sparql: str, result: object) -> None:
        if SCAN in sparql and self.meanwhile is not None:
            self.meanwhile()
            self.meanwhile = None


def test_a_load_during_the_scan_leaves_no_stale_predicates_behind(tmp_path: Path) -> None:
    folder = tmp_path / "store"
    writer = QueryLog(folder, profile="metaqa")
    writer.load_text("Heat|directed_by|Michael Mann\n", name="kb.txt")
    racing = LoadDuringScan(folder, profile="metaqa", read_only=True)
    racing.texts = []
    racing.meanwhile = lambda: writer.load_text("Heat|in_language|English\n", name="more.txt")
    racing.relation_vocabulary()
    assert names(opened(folder).relation_vocabulary()) == ["directed_by", "in_language"]
    assert names(racing.relation_vocabulary()) == ["directed_by", "in_language"]


def test_a_file_naming_no_iri_is_read_past(tmp_path: Path) -> None:
    folder = tmp_path / "store"
    QueryLog(folder, profile="metaqa").load_text("Heat|directed_by|Michael Mann\n", name="kb.txt")
    first = opened(folder)
    assert names(first.relation_vocabulary()) == ["directed_by"]
    path = first.vocabulary_file()
    assert path is not None
    skipped = [str(p) for p in first.profile.skipped_predicates]
    path.write_text(json.dumps({"skipped": skipped, "predicates": ["not an iri"]}))
    assert names(opened(folder).relation_vocabulary()) == ["directed_by"]


def test_the_kept_file_is_readable_by_other_users_as_the_store_is(tmp_path: Path) -> None:
    import os

    old = os.umask(0o022)
    try:
        keep(tmp_path / FILE_NAME, [], [NamedNode("urn:p")])
    finally:
        os.umask(old)
    assert (tmp_path / FILE_NAME).stat().st_mode & 0o777 == 0o644
