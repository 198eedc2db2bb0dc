"""A store on disk reads its predicates once per generation, not once per process:
the first process keeps them in the generation's folder, the next ones read that file,
and a load (a new generation) reads them again."""

from __future__ import annotations

from pathlib import Path

from pyoxigraph import NamedNode

from middleware.kg.vocabulary_file import FILE_NAME
from middleware.testing.observed import ObservedStore

SCAN = "SELECT DISTINCT ?p"


class QueryLog(ObservedStore):
    """A local store that keeps the text of every query it runs."""

    def before(self, sparql: str) -> None:
        self.texts.append(sparql)


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
