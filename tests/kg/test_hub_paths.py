"""Path searches at a hub read a window of the smaller end's edges: a path from a hub to
a small node is searched from the small node and turned around, and a search between
two hubs reads a window, not their degrees."""

from __future__ import annotations

import pytest

from middleware.kg.base import SORT_WINDOW
from middleware.kg.operations import PATHS_WINDOW
from middleware.testing.observed import QueryLog

FILMS = PATHS_WINDOW + 100


@pytest.fixture(scope="module")
def store(tmp_path_factory: pytest.TempPathFactory) -> QueryLog:
    lines = [f"Film {i:05d}|has_genre|Drama" for i in range(FILMS)]
    lines += [f"Film {i:05d}|in_language|English" for i in range(FILMS)]
    lines += ["Film 20050|directed_by|Ann Hui", "Heat|directed_by|Ann Hui"]
    kg = QueryLog(tmp_path_factory.mktemp("hubpaths") / "store", profile="metaqa", name="p")
    kg.texts = []
    kg.load_text("\n".join(lines) + "\n", name="kb.txt")
    return kg


def short(path) -> list[tuple[str, str, bool]]:  # type: ignore[no-untyped-def]
    return [
        (
            h.triple.subject.value.rsplit("/", 1)[-1],
            h.triple.predicate.value.rsplit("/", 1)[-1],
            h.forward,
        )
        for h in path.hops
    ]


def test_from_a_hub_the_search_starts_at_the_small_end_and_reads_the_right_way(
    store: QueryLog,
) -> None:
    drama, hui = store.named("Drama"), store.named("Ann Hui")
    store.texts.clear()
    found = store.paths(drama, hui, max_hops=2)
    assert [short(p) for p in found] == [
        [("Film%2020050", "has_genre", False), ("Film%2020050", "directed_by", True)]
    ]
    assert found[0].nodes[0] == drama and found[0].nodes[-1] == hui
    two_hops = [t for t in store.texts if "?m1 ?p2" in t]
    assert len(two_hops) == 1
    assert f"{{ <{hui.value}> ?p1 ?m1" in two_hops[0], "read from the small end"
    back = store.paths(hui, drama, max_hops=2)
    assert [short(p) for p in back] == [
        [("Film%2020050", "directed_by", False), ("Film%2020050", "has_genre", True)]
    ]


def test_between_two_hubs_a_sample_of_the_sort_window_is_read(store: QueryLog) -> None:
    drama, english = store.named("Drama"), store.named("English")
    store.texts.clear()
    found = store.paths(drama, english, max_hops=2, limit=10)
    assert len(found) == 10
    assert all(p.nodes[0] == drama and p.nodes[-1] == english for p in found)
    two_hops = [t for t in store.texts if "?m1 ?p2" in t]
    assert two_hops and all(f"LIMIT {SORT_WINDOW}  #" in t for t in two_hops)


def test_three_hops_from_a_hub_are_turned_around_too(store: QueryLog) -> None:
    drama, heat = store.named("Drama"), store.named("Heat")
    found = store.paths(drama, heat, max_hops=3)
    assert [short(p) for p in found] == [
        [
            ("Film%2020050", "has_genre", False),
            ("Film%2020050", "directed_by", True),
            ("Heat", "directed_by", False),
        ]
    ]
    assert found[0].nodes[0] == drama and found[0].nodes[-1] == heat
