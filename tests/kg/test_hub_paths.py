"""Path searches at a hub read a window of the smaller end's edges: a path from a hub to
a small node is searched from the small node and turned around, and a search between
two hubs reads a window, not their degrees."""

from __future__ import annotations

import pytest

from middleware.kg.base import SORT_WINDOW
from middleware.kg.path_reads import PATHS_WALKS, PATHS_WINDOW
from middleware.testing.observed import QueryLog

FILMS = PATHS_WINDOW + 100


@pytest.fixture(scope="module")
def store(tmp_path_factory: pytest.TempPathFactory) -> QueryLog:
    lines = [f"Film {i:05d}|has_genre|Drama" for i in range(FILMS)]
    lines += [f"Film {i:05d}|in_language|English" for i in range(FILMS)]
    lines += ["Film 20050|directed_by|Ann Hui", "Heat|directed_by|Ann Hui"]
    lines += ["Film 00003|written_by|Bo Yang", "Heat|written_by|Bo Yang"]
    lines += ["Small A|has_genre|Drama"]
    lines += [f"Film {i:05d}|starred_actors|Zed" for i in (1, 2, 4)]
    kg = QueryLog.loaded(tmp_path_factory.mktemp("hubpaths") / "store", lines, name="p")
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


def test_three_hops_from_a_hub_are_turned_around_in_the_hubs_order(store: QueryLog) -> None:
    drama, heat = store.named("Drama"), store.named("Heat")
    found = store.paths(drama, heat, max_hops=3)
    assert [short(p) for p in found] == [
        [
            ("Film%2000003", "has_genre", False),
            ("Film%2000003", "written_by", True),
            ("Heat", "written_by", False),
        ],
        [
            ("Film%2020050", "has_genre", False),
            ("Film%2020050", "directed_by", True),
            ("Heat", "directed_by", False),
        ],
    ]
    assert all(p.nodes[0] == drama and p.nodes[-1] == heat for p in found)
    # searched from Heat, whose own order would put Ann Hui's path first
    assert store.paths(drama, heat, max_hops=3, limit=1) == found[:1]


def test_three_hops_from_a_small_end_next_to_a_hub_are_all_found(store: QueryLog) -> None:
    small, zed = store.named("Small A"), store.named("Zed")
    store.texts.clear()
    there = store.paths(small, zed, max_hops=3)
    three = [t for t in store.texts if "?m2 ?p3" in t]
    assert three and f"LIMIT {PATHS_WALKS}  #" in three[0], "Drama's films are walked whole"
    back = store.paths(zed, small, max_hops=3)
    assert len(there) == len(back) == 3
    assert {p.nodes[2].value.rsplit("/", 1)[-1] for p in there} == {
        "Film%2000001",
        "Film%2000002",
        "Film%2000004",
    }


def test_a_nodes_edge_count_is_read_once_per_version(tmp_path) -> None:  # type: ignore[no-untyped-def]
    lines = [f"Film {i:05d}|has_genre|Drama" for i in range(50)]
    lines += ["Film 00001|directed_by|Ann Hui", "Film 00002|directed_by|Bo Yang"]
    kg = QueryLog.loaded(tmp_path / "store", lines, name="c")
    drama, hui, yang = kg.named("Drama"), kg.named("Ann Hui"), kg.named("Bo Yang")
    kg.texts.clear()
    first = [kg.paths(drama, other, max_hops=2) for other in (hui, yang, hui)]
    counted = [t for t in kg.texts if "COUNT(*)" in t]
    assert len(counted) == 1, "Drama's edges counted once for its three searches"
    kg.load_text("Film 00003|directed_by|Ann Hui\n", name="more.txt")
    kg.texts.clear()
    again = kg.paths(drama, hui, max_hops=2)
    assert len([t for t in kg.texts if "COUNT(*)" in t]) == 1, "a load moves the version"
    assert len(again) == len(first[0]) + 1
