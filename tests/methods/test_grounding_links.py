"""Grounding links the pieces of an answer by label only: it keeps exact and folded
matches, so it never pays for the typo-tolerant search (a scan of every label) or the
name-variant table (built from every label), whose matches it would drop anyway."""

from __future__ import annotations

from pathlib import Path

import pytest

from middleware.kg.backends.local import LocalStore
from middleware.methods.grounding import ground_answer
from middleware.text.label_index import LabelIndex
from middleware.text.linking import EntityLinker


@pytest.fixture
def linker(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> EntityLinker:
    store = LocalStore(tmp_path / "store", profile="metaqa")
    store.load_text("Heat|directed_by|Michael Mann\nHeat|starred_actors|Al Pacino\n", name="kb.txt")

    def refused(*_: object, **__: object) -> None:
        raise AssertionError("grounding read every label")

    monkeypatch.setattr(LabelIndex, "fuzzy", refused)
    monkeypatch.setattr(LabelIndex, "variants", property(refused))
    return EntityLinker(store)


def test_pieces_link_by_label_and_a_typo_links_nothing(linker: EntityLinker) -> None:
    found = ground_answer("michael mann, Al Pacinoo", "Who made Heat?", {}, linker=linker)
    assert [e.label for e in found] == ["Michael Mann"]


def test_without_a_label_index_the_graphs_own_search_is_kept(
    sample_server: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """An endpoint has no label index: its typo-tolerant path is one bounded search
    query, which can find a label its folded lookup missed ("Straße"), so it stays."""
    from middleware.kg.backends.endpoint import SparqlEndpoint

    asked: list[dict[str, object]] = []
    real = EntityLinker.link

    def spy(self: EntityLinker, mention: str, **options: object) -> object:
        asked.append(options)
        return real(self, mention, **options)  # type: ignore[arg-type]

    monkeypatch.setattr(EntityLinker, "link", spy)
    endpoint = SparqlEndpoint(sample_server, profile="metaqa", name="remote")
    found = ground_answer("Michael Mann", "Who directed Heat?", {}, linker=EntityLinker(endpoint))
    assert [e.label for e in found] == ["Michael Mann"]
    assert asked and all(o.get("typos", True) and o.get("variants", True) for o in asked)
