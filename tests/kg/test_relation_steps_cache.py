"""The relation steps of a store in this process are read once per version of its data:
the planner asks for the same hub's steps again and again (at 100x FB15k-237, almost half of
those queries repeated one already run)."""

from __future__ import annotations

from pathlib import Path

from pyoxigraph import NamedNode

from middleware.kg.backends.local import LocalStore

EX = "http://example.org/"
DATA = f"""
<{EX}Cameron> <{EX}directed> <{EX}Titanic> .
<{EX}Cameron> <{EX}bornIn> <{EX}Kapuskasing> .
"""


def test_a_store_reads_the_same_steps_once_until_its_data_changes() -> None:
    store = LocalStore()
    store.load_text(DATA, name="films.nt", format="nt")
    cameron = NamedNode(f"{EX}Cameron")
    first = store.relation_steps([cameron])
    spent = store.thread_query_count
    assert store.relation_steps([cameron]) == first
    assert store.thread_query_count == spent  # answered from what was read
    store.load_text(f"<{EX}Cameron> <{EX}wrote> <{EX}Avatar> .", name="more.nt", format="nt")
    again = store.relation_steps([cameron])
    assert store.thread_query_count > spent  # a load: read again
    assert (NamedNode(f"{EX}wrote"), True) in again and len(again) == len(first) + 1


def test_a_reader_sees_the_steps_of_a_load_made_by_another_process(tmp_path: Path) -> None:
    writer = LocalStore(tmp_path / "store")
    writer.load_text(DATA, name="films.nt", format="nt")
    reader = LocalStore(tmp_path / "store", read_only=True)
    cameron = NamedNode(f"{EX}Cameron")
    first = reader.relation_steps([cameron])
    writer.load_text(f"<{EX}Cameron> <{EX}wrote> <{EX}Avatar> .", name="more.nt", format="nt")
    assert (NamedNode(f"{EX}wrote"), True) in reader.relation_steps([cameron])  # not kept
    assert len(reader.relation_steps([cameron])) == len(first) + 1
