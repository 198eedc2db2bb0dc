"""A hub's neighbours spread over its relations (``kg/spread.py``): the rare relation a
question asks about is read even when thousands of edges of another come first."""

from __future__ import annotations

import pytest

from middleware.kg.backends.local import LocalStore
from middleware.kg.base import SORT_WINDOW
from middleware.kg.capped import neighbors_capped
from middleware.methods.collect import neighbourhood

FILMS = SORT_WINDOW + 100


@pytest.fixture(scope="module")
def kg() -> LocalStore:
    lines = [f"Film {i:05d}|has_genre|Drama" for i in range(FILMS)]
    lines += ["Drama|has_tags|genre", "Drama Queen|written_by|Drama"]
    lines += [f"Small|starred_actors|Actor {i}" for i in range(30)] + ["Small|has_genre|Drama"]
    store = LocalStore(profile="metaqa")
    store.load_text("\n".join(lines) + "\n", name="kb.txt")
    return store


def _relations(triples: list) -> set[str]:  # type: ignore[type-arg]
    return {t.predicate.value.rsplit("/", 1)[-1] for t in triples}


def test_a_hubs_spread_neighbours_hold_each_of_its_relations(kg: LocalStore) -> None:
    drama = kg.search("Drama")[0].iri
    sample = neighbors_capped(kg, drama, 10)
    assert "written_by" not in _relations(sample.items)  # 2,100 has_genre sort first
    read = neighbors_capped(kg, drama, 10, spread=True)
    assert read.cut and read.spread and len(read.items) == 10
    assert _relations(read.items) == {"has_genre", "has_tags", "written_by"}
    assert all(kg.has_triple(t) for t in read.items)
    keys = [(t.subject != drama, t.predicate.value) for t in read.items]
    assert keys == sorted(keys)  # relation by relation: outgoing first, then by predicate


@pytest.mark.parametrize("direction", ["in", "out"])
def test_one_direction_reads_as_before(kg: LocalStore, direction: str) -> None:
    """One side of a hub may be whole (Drama's outgoing edges): only both are spread."""
    drama = kg.search("Drama")[0].iri
    plain = neighbors_capped(kg, drama, 5, direction)  # type: ignore[arg-type]
    assert neighbors_capped(kg, drama, 5, direction, spread=True) == plain  # type: ignore[arg-type]


def test_a_hub_of_one_relation_reads_as_before() -> None:
    store = LocalStore(profile="metaqa")
    store.load_text("".join(f"Film {i:05d}|has_genre|Noir\n" for i in range(FILMS)), name="kb.txt")
    noir = store.search("Noir")[0].iri
    assert neighbors_capped(store, noir, 5, spread=True) == neighbors_capped(store, noir, 5)


def test_a_hub_of_more_relations_than_the_cap_reads_the_first_and_says_how_many() -> None:
    lines = [f"Film {i:05d}|has_genre|Noir" for i in range(FILMS)]
    lines += [f"Noir|rel_{c}|Thing {c}" for c in "bcdefg"]
    store = LocalStore(profile="metaqa")
    store.load_text("\n".join(lines) + "\n", name="kb.txt")
    noir = store.search("Noir")[0].iri
    read = neighbors_capped(store, noir, 4, spread=True)
    assert _relations(read.items) == {"rel_b", "rel_c", "rel_d", "rel_e"} and read.spread == 4


def test_a_node_under_the_hub_threshold_reads_as_before(kg: LocalStore) -> None:
    small = kg.search("Small")[0].iri
    assert neighbors_capped(kg, small, 5, spread=True) == neighbors_capped(kg, small, 5)


def test_the_neighbourhood_note_says_the_hub_was_spread(kg: LocalStore) -> None:
    drama = kg.search("Drama")[0].iri
    cuts: list[str] = []
    triples = neighbourhood(kg, [drama], per_entity=6, cuts=cuts, spread=True)
    assert _relations([b.triple for b in triples]) == {"has_genre", "has_tags", "written_by"}
    assert cuts and "read from 3 of its relations in turn" in cuts[0]
