"""Zero-shot growth reads a path's frontier from a small window: at a hub, sorting the
walks a frontier is sampled from costs FRONTIER_WINDOW walks, not SORT_WINDOW."""

from __future__ import annotations

import pytest

from middleware.kg.base import SORT_WINDOW
from middleware.planning.candidates import FRONTIER, FRONTIER_WINDOW, grow
from middleware.testing.observed import QueryLog

FILMS = FRONTIER_WINDOW * 3


@pytest.fixture(scope="module")
def store(tmp_path_factory: pytest.TempPathFactory) -> QueryLog:
    lines = [f"Film {i:05d}|has_genre|Drama" for i in range(FILMS)]
    lines += [f"Film {i:05d}|directed_by|Director {i % 7}" for i in range(FILMS)]
    lines += ["Small Film|has_genre|Drama", "Small Film|directed_by|Ann Hui"]
    kg = QueryLog.loaded(tmp_path_factory.mktemp("frontier") / "store", lines, name="f")
    return kg


def test_frontier_reads_sort_a_small_window_at_a_hub(store: QueryLog) -> None:
    store.texts.clear()
    paths = grow(store, store.named("Drama"), max_hops=2)
    # the walks are read unsorted and sorted and cut at FRONTIER by the caller
    follows = [t for t in store.texts if "SELECT ?n1" in t]
    assert follows, "growth samples each path's frontier"
    for text in follows:
        assert f"LIMIT {FRONTIER_WINDOW}" in text
        assert f"LIMIT {SORT_WINDOW}" not in text
    # the hub's films lead on to their directors all the same
    assert any(len(p) == 2 and p[1][0].value.endswith("directed_by") for p in paths)


def test_a_walk_read_for_a_plan_keeps_the_full_window(store: QueryLog) -> None:
    store.texts.clear()
    drama = store.named("Drama")
    step = next(s for s in store.relation_steps([drama]) if s[0].value.endswith("has_genre"))
    walks = store.follow(drama, (step,), limit=1000)
    assert len(walks) == FILMS + 1  # every Drama film: under the full window, none cut
    assert any(f"LIMIT {SORT_WINDOW}" in t for t in store.texts)


def test_below_the_window_the_sample_is_the_sorted_one(store: QueryLog) -> None:
    director = store.named("Director 3")  # 86 films: fewer walks than the narrow window
    films = tuple(s for s in store.relation_steps([director]) if s[0].value.endswith("directed_by"))
    narrow = store.follow(director, films, limit=FRONTIER, window=FRONTIER_WINDOW)
    wide = store.follow(director, films, limit=FRONTIER)
    assert len(narrow) == FRONTIER
    assert narrow == wide  # both the first FRONTIER of all the walks, sorted


def test_past_the_window_the_sample_is_the_same_every_time(store: QueryLog) -> None:
    drama = store.named("Drama")
    genre = tuple(s for s in store.relation_steps([drama]) if s[0].value.endswith("has_genre"))
    first = store.follow(drama, genre, limit=FRONTIER, window=FRONTIER_WINDOW)
    assert len(first) == FRONTIER
    assert first == store.follow(drama, genre, limit=FRONTIER, window=FRONTIER_WINDOW)
