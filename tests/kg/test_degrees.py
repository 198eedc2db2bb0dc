"""Degree counts at a hub cost a cap, not the hub's degree, where a caller only needs to
know that a node is a hub (ranking linked entities, the planner's notes)."""

from __future__ import annotations

import pytest

from middleware.kg.base import SORT_WINDOW
from middleware.testing.observed import QueryLog
from middleware.text.linking import EntityLinker

HUB_EDGES = SORT_WINDOW + 500


@pytest.fixture(scope="module")
def hub(tmp_path_factory: pytest.TempPathFactory) -> QueryLog:
    lines = [f"Film {i:05d}|has_genre|Drama" for i in range(HUB_EDGES)]
    lines += ["Drama Queen|directed_by|Ann Hui", "Drama|has_tags|genre"]
    lines += ["DRAMA|has_tags|shouting"]  # folds as "Drama" does: a tie that degrees break
    store = QueryLog.loaded(tmp_path_factory.mktemp("hub") / "store", lines, name="hub")
    return store


def test_a_capped_count_stops_at_the_cap_and_an_uncapped_one_does_not(hub: QueryLog) -> None:
    drama, queen = hub.named("Drama"), hub.named("Drama Queen")
    assert hub.degree(drama) == HUB_EDGES + 1
    assert hub.degree(drama, at_most=100) == 100
    assert hub.degrees([drama, queen], at_most=100) == {drama: 100, queen: 1}
    assert hub.degrees([drama, queen]) == {drama: HUB_EDGES + 1, queen: 1}


def test_linking_counts_a_hubs_edges_only_up_to_the_sort_window(hub: QueryLog) -> None:
    hub.texts.clear()
    found = EntityLinker(hub).link("drama")
    assert found and found[0].label == "Drama"
    counts = [t for t in hub.texts if "COUNT(*)" in t]
    assert counts, "ranking the tied candidates counts their degrees"
    for text in counts:
        assert "GROUP BY ?e" not in text, "the uncapped batch count reads every hub edge"
        assert f"LIMIT {SORT_WINDOW}" in text
