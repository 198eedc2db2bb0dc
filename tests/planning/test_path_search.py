"""The bounded path search of mining: the same paths as the graph's own path query on
a small graph, a cost set by the cap around hubs, and a budget per question."""

from __future__ import annotations

from pathlib import Path

import pytest
from pyoxigraph import NamedNode

from middleware.kg.backends.local import LocalStore
from middleware.planning.mining import mine
from middleware.planning.path_search import (
    SearchBudget,
    SearchBudgetSpent,
    StepsTaken,
    links,
    reach,
    relation_paths,
)
from middleware.planning.relpaths import walked
from middleware.testing.graphs import ex, films_path
from tests.planning.hub_graphs import genre_hub

PAIRS = [
    ("Titanic", "Avatar"),
    ("Cameron", "Winslet"),
    ("Inception", "DiCaprio"),
    ("Nolan", "Winslet"),
    ("Avatar", "DiCaprio"),
]


@pytest.fixture(scope="module")
def films() -> LocalStore:
    store = LocalStore(profile="generic")
    store.load([films_path()])
    return store


@pytest.mark.parametrize(("start", "end"), PAIRS)
@pytest.mark.parametrize("hops", [1, 2, 3])
def test_it_finds_the_relation_paths_the_path_query_finds(
    films: LocalStore, start: str, end: str, hops: int
) -> None:
    expected = {walked(p) for p in films.paths(ex(start), ex(end), max_hops=hops, limit=500)}
    found = relation_paths(films, ex(start), ex(end), max_hops=hops, limit=500)
    assert set(found) == expected
    assert [len(p) for p in found] == sorted(len(p) for p in found)  # shortest first


def test_reach_follows_a_relation_path_without_coming_back(films: LocalStore) -> None:
    same_director = ((ex("directedBy"), True), (ex("directedBy"), False))
    assert reach(films, ex("Titanic"), same_director) == {ex("Avatar")}
    expected = {w.nodes[-1] for w in films.follow(ex("Titanic"), same_director)}
    assert reach(films, ex("Titanic"), same_director) == expected


def hub_graph(tmp_path: Path, films_at_hub: int) -> LocalStore:
    """A genre with many films; one of them, Rare, is starred in by Ann, who also
    starred in Small; Small's genre is the hub too."""
    x = "http://example.org/h/"
    starring = [f"<{x}Rare> <{x}starring> <{x}Ann> .", f"<{x}Small> <{x}starring> <{x}Ann> ."]
    return genre_hub(tmp_path, x, films_at_hub, members=("Rare", "Small"), extra=starring)


def test_a_hub_end_costs_what_the_cap_allows_and_is_met_from_the_other_end(
    tmp_path: Path,
) -> None:
    store = hub_graph(tmp_path, 100_000)
    x = "http://example.org/h/"
    small, drama = NamedNode(x + "Small"), NamedNode(x + "Drama")
    budget = SearchBudget(queries=50, seconds=600)
    found = relation_paths(store, small, drama, max_hops=3, cap=50, budget=budget)
    starring, genre = NamedNode(x + "starring"), NamedNode(x + "genre")
    assert ((genre, True),) in found
    # Small -starring-> Ann <-starring- Rare -genre-> Drama: Rare is not among the 50
    # of Drama's 100,002 films read, and is reached from Small's side instead
    assert ((starring, True), (starring, False), (genre, True)) in found
    assert budget.spent <= 10


def test_a_question_past_its_budget_stops_mining(tmp_path: Path) -> None:
    store = hub_graph(tmp_path, 100)
    x = "http://example.org/h/"
    with pytest.raises(SearchBudgetSpent, match="at most 1 queries"):
        mine(
            store,
            [NamedNode(x + "Small")],
            [NamedNode(x + "Drama")],
            budget=SearchBudget(queries=1, seconds=600),
        )
    with pytest.raises(SearchBudgetSpent, match="plan_learn_seconds"):
        mine(
            store,
            [NamedNode(x + "Small")],
            [NamedNode(x + "Drama")],
            budget=SearchBudget(queries=500, seconds=-1.0),
        )


def test_an_answer_found_beyond_a_hub_counts_though_the_sample_missed_it(
    tmp_path: Path,
) -> None:
    """The path search finds Topic - genre - Drama - genre - Gold; reaching along that
    relation path samples only 10 of Drama's 5,001 films, so it may miss Gold: the walk
    the search found still counts, and the path is mined."""
    x = "http://example.org/h/"
    store = genre_hub(tmp_path, x, 5_000)
    topic, gold = NamedNode(x + "Topic"), NamedNode(x + "Gold")
    genre = NamedNode(x + "genre")
    assert gold not in reach(store, topic, ((genre, True), (genre, False)), limit=10)
    mined = mine(store, [topic], [gold], max_hops=2, max_walks=10)
    assert [(m.reached, m.others) for m in mined] == [(1, 10)]


def test_the_links_between_two_sets_are_looked_up_pair_by_pair(films: LocalStore) -> None:
    """Two separate VALUES let an engine scan every edge of a hub in one set; rows of
    pairs bind both ends, so each is one index lookup (x100 FB15k-237: 11 s to 0.07 s)."""
    text = films.templates.render(
        "mine_links", pairs=[(ex("Titanic"), ex("Cameron"))], limit=5, skipped=[]
    )
    assert (
        "VALUES (?x ?y) { (<http://example.org/film/Titanic> <http://example.org/film/Cameron>) }"
        in text
    )


def test_links_come_back_in_order_though_the_engine_sorts_none() -> None:
    """The lookups carry no ORDER BY (sorting in the engine cost more than the search);
    the rows are ordered here as ``ORDER BY ?x ?y ?p ?forward`` would order them."""
    store = LocalStore(profile="generic")
    store.load_text(
        "<http://example.org/z> <http://example.org/p> <http://example.org/b> .\n"
        "<http://example.org/b> <http://example.org/q> <http://example.org/a> .\n"
        "<http://example.org/a> <http://example.org/q> <http://example.org/b> .\n"
        "<http://example.org/a> <http://example.org/p> <http://example.org/b> .\n"
        "<http://example.org/z> <http://example.org/p> <http://example.org/a> .\n",
        name="edges.nt",
    )
    text = store.templates.render("mine_links", pairs=[(ex("a"), ex("b"))], limit=5, skipped=[])
    assert not [line for line in text.splitlines() if line.startswith("ORDER BY")]

    def e(name: str) -> NamedNode:
        return NamedNode(f"http://example.org/{name}")

    found = links(store, [e("z"), e("a")], [e("b"), e("a")])
    assert [(x.value[-1], p.value[-1], forward, y.value[-1]) for x, (p, forward), y in found] == [
        ("a", "p", True, "b"),
        ("a", "q", False, "b"),
        ("a", "q", True, "b"),
        ("z", "p", True, "a"),
        ("z", "p", True, "b"),
    ]


def test_paths_that_begin_alike_share_their_first_steps(films: LocalStore) -> None:
    """A question's candidate paths often start with the same step; with ``taken`` the
    step is queried once, and the entities reached are the same."""
    directed = (ex("directedBy"), True)
    paths = [(directed, (ex("directedBy"), False)), (directed, (ex("starring"), False))]
    budget, taken = SearchBudget(), StepsTaken()
    shared = [reach(films, ex("Titanic"), p, budget=budget, taken=taken) for p in paths]
    assert shared == [reach(films, ex("Titanic"), p) for p in paths]
    assert shared[0] and budget.spent == 3  # not 4: the first step once


def test_steps_taken_under_one_limit_are_not_reused_under_another(films: LocalStore) -> None:
    directed = ((ex("directedBy"), True), (ex("directedBy"), False))
    taken = StepsTaken()
    narrow = reach(films, ex("Titanic"), directed, limit=1, taken=taken)
    assert reach(films, ex("Titanic"), directed, limit=100, taken=taken) == reach(
        films, ex("Titanic"), directed, limit=100
    )
    assert len(narrow) <= 1
