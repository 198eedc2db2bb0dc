"""Degree counts at a hub cost a cap, not the hub's degree, where a caller only needs to
know that a node is a hub (ranking linked entities, the planner's notes)."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from pyoxigraph import NamedNode

from middleware.kg import degrees as degrees_module
from middleware.kg.base import SORT_WINDOW
from middleware.kg.degrees import DEGREES_WINDOW
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


@pytest.fixture(autouse=True)
def counted_afresh() -> None:
    """Each test sees what a fresh process reads (counts are kept per data version)."""
    degrees_module._DEGREES.clear()


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
    for text in counts:  # the uncapped batch count would read every hub edge
        limit = int(re.search(r"LIMIT (\d+)", text).group(1))  # type: ignore[union-attr]
        assert limit <= max(SORT_WINDOW, DEGREES_WINDOW)


def test_capped_counts_of_many_entities_are_one_query_when_they_fit(hub: QueryLog) -> None:
    films = [hub.named(f"Film {i:05d}") for i in range(150)]
    before = hub.query_count
    counts = hub.degrees(films, at_most=SORT_WINDOW)
    assert hub.query_count - before == 1
    assert (
        counts
        == {film: hub.degree(film, at_most=SORT_WINDOW) for film in films}
        == dict.fromkeys(films, 1)
    )


@pytest.mark.parametrize("cap", [1, 100, SORT_WINDOW])
@pytest.mark.parametrize("window", [DEGREES_WINDOW, 1_000])
def test_capped_counts_with_a_hub_among_them_are_each_entitys_own(
    hub: QueryLog, cap: int, window: int, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Whether the hub fits the batch's window (counted there) or fills it (each entity
    is then counted up to the cap on its own), the counts are each entity's own."""
    monkeypatch.setattr(degrees_module, "DEGREES_WINDOW", window)
    entities = [hub.named("Film 00007"), hub.named("Drama"), hub.named("Drama Queen")]
    entities += [hub.named("Ann Hui"), hub.named("DRAMA")]
    expected = {e: hub.degree(e, at_most=cap) for e in entities}
    assert hub.degrees(entities, at_most=cap) == expected
    assert expected[hub.named("Drama")] == cap


def test_a_hub_that_fills_the_window_is_known_without_a_count_of_its_own(
    hub: QueryLog, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Its edges in the filled window reach the cap; the others are counted each."""
    monkeypatch.setattr(degrees_module, "DEGREES_WINDOW", 1_000)
    others = [hub.named(f"Film {i:05d}") for i in range(20)] + [hub.named("Ann Hui")]
    drama = hub.named("Drama")
    hub.texts.clear()
    counts = hub.degrees([drama, *others], at_most=100)
    assert counts == {drama: 100, **dict.fromkeys(others, 1)}
    assert len(hub.texts) == 1 + len(others)
    assert not any(drama.value in text for text in hub.texts[1:])


@pytest.mark.parametrize("cap", [-1, 0, 1, 2, 10])
def test_capped_counts_of_a_batch_are_each_entitys_capped_count(cap: int) -> None:
    """``degrees`` caps as ``degree`` does: below one it counts up to one."""
    from middleware.kg.backends.local import LocalStore

    kg = LocalStore(profile="metaqa")
    kg.load_text("Heat|directed_by|Michael Mann\nHeat|in_language|English\n", name="kb.txt")
    heat, mann = kg.search("Heat")[0].iri, kg.search("Michael Mann")[0].iri
    assert kg.degrees([heat, mann], at_most=cap) == {
        heat: kg.degree(heat, at_most=cap),
        mann: kg.degree(mann, at_most=cap),
    }


def test_a_profiles_own_degree_counts_its_capped_counts_too() -> None:
    """Wikidata counts truthy (wdt:) edges only: capped counts, one at a time or from a
    batch's window, count the same edges."""
    from middleware.kg.backends.local import LocalStore

    wd, wdt, p = (
        "http://www.wikidata.org/entity/",
        "http://www.wikidata.org/prop/direct/",
        "http://www.wikidata.org/prop/",
    )
    lines = [
        f"<{wd}Q1> <{wdt}P31> <{wd}Q5> .",
        f"<{wd}Q1> <{p}P31> <{wd}statement1> .",
        f"<{wd}Q2> <{wdt}P50> <{wd}Q1> .",
    ]
    kg = LocalStore(profile="wikidata")
    kg.load_text("\n".join(lines) + "\n", name="wd.nt")
    q1 = NamedNode(f"{wd}Q1")
    assert kg.degree(q1) == 2
    assert kg.degree(q1, at_most=10) == 2
    assert kg.degrees([q1], at_most=10) == {q1: 2} == kg.degrees([q1])


def test_a_few_entities_read_at_most_a_hubs_window_each_before_counting_each(
    hub: QueryLog,
) -> None:
    """Entities under the cap have fewer edges than it each, so a batch of n that fills
    n x the cap holds one at the cap: a few entities need not read ``DEGREES_WINDOW``
    (each reads at least SORT_WINDOW, so that a small cap does not fill it at once)."""
    drama, queen = hub.named("Drama"), hub.named("Drama Queen")
    hub.texts.clear()
    assert hub.degrees([drama, queen], at_most=100) == {drama: 100, queen: 1}
    assert f"LIMIT {2 * SORT_WINDOW} " in hub.texts[0]
    ann = hub.named("Ann Hui")
    hub.texts.clear()
    assert hub.degrees([queen, ann], at_most=100) == {queen: 1, ann: 1}
    assert len(hub.texts) == 1, "two small entities fit their window: one query"


def test_a_small_cap_still_reads_a_hubs_window_before_counting_each(hub: QueryLog) -> None:
    """With a cap of 1 a window of one edge per entity would fill at once and send every
    entity to a count of its own: a batch reads at least SORT_WINDOW edges per entity."""
    films = [hub.named(f"Film {i:05d}") for i in range(10)]
    drama = hub.named("Drama")
    before = hub.query_count
    assert hub.degrees([drama, *films], at_most=1) == dict.fromkeys([drama, *films], 1)
    assert hub.query_count - before <= 2


def test_capped_counts_are_kept_until_the_data_changes(tmp_path: Path) -> None:
    store = QueryLog.loaded(
        tmp_path / "store",
        ["Heat|directed_by|Michael Mann", "Ali|directed_by|Michael Mann"],
        name="kept",
    )
    mann, heat = store.named("Michael Mann"), store.named("Heat")
    assert store.degrees([mann, heat], at_most=10) == {mann: 2, heat: 1}
    before = store.query_count
    assert store.degrees([heat, mann], at_most=10) == {heat: 1, mann: 2}
    assert store.query_count == before  # kept
    assert store.degrees([mann], at_most=1) == {mann: 1}  # another cap is counted anew
    assert store.query_count == before + 1
    store.load_text("Thief|directed_by|Michael Mann\n", name="more.txt")
    assert store.degrees([mann], at_most=10) == {mann: 3}  # a load moves the version
    uncapped = store.query_count
    store.degrees([mann])
    store.degrees([mann])
    assert store.query_count == uncapped + 2  # an exact count is never kept


def test_a_wrapped_store_keeps_no_counts() -> None:
    """Its data may change under it without a new version."""
    from pyoxigraph import Store

    from middleware.kg.backends.local import LocalStore

    kg = LocalStore(store=Store(), profile="metaqa")
    kg.load_text("Heat|directed_by|Michael Mann\n", name="kb.txt")
    mann = kg.search("Michael Mann")[0].iri
    assert kg.degrees([mann], at_most=10) == {mann: 1}
    before = kg.thread_query_count
    kg.degrees([mann], at_most=10)
    assert kg.thread_query_count == before + 1


def test_counts_read_while_a_load_moves_the_version_are_not_kept(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A load (another thread's, or another process's a reader moves to) that lands
    while a batch is counted: the counts may be the old data's, so none is kept."""
    store = QueryLog.loaded(tmp_path / "store", ["Heat|directed_by|Michael Mann"], name="race")
    mann = store.named("Michael Mann")
    counted_before = store._capped_batch

    def a_load_meanwhile(batch: list[NamedNode], cap: int) -> dict[NamedNode, int]:
        counted = counted_before(batch, cap)
        store.load_text("Ali|directed_by|Michael Mann\n", name="more.txt")
        return counted

    monkeypatch.setattr(store, "_capped_batch", a_load_meanwhile)
    assert store.degrees([mann], at_most=10) == {mann: 1}  # what was read, at the old data
    monkeypatch.undo()
    assert store.degrees([mann], at_most=10) == {mann: 2}
