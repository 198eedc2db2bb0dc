"""Counting where a relation path ends gives what walking it to the end gives: the same
sample at every step, the wanted entities among its ends, and how many ends in all."""

from __future__ import annotations

import random
from pathlib import Path

import pytest
from pyoxigraph import NamedNode

from middleware.kg.backends.local import LocalStore
from middleware.kg.walks import RelationPath
from middleware.planning import mining
from middleware.planning.mining import mine
from middleware.planning.path_search import SearchBudget, StepsTaken, reach
from middleware.planning.reach_count import Reached, reach_count
from middleware.testing.graphs import ex, films_path
from tests.planning.hub_graphs import genre_hub

X = "http://example.org/r/"


def node(name: str) -> NamedNode:
    return NamedNode(X + name)


@pytest.fixture(scope="module")
def films() -> LocalStore:
    store = LocalStore(profile="generic")
    store.load([films_path()])
    return store


@pytest.fixture(scope="module")
def random_graph(tmp_path_factory: pytest.TempPathFactory) -> LocalStore:
    """400 entities, three relations, a few hubs, and literal ends for one relation."""
    rng = random.Random(11)
    lines = []
    for i in range(4_000):
        s = rng.choice(range(12)) if i % 3 == 0 else rng.randrange(400)  # hubs 0-11
        o = rng.randrange(400)
        lines.append(f"<{X}e{s}> <{X}p{rng.randrange(3)}> <{X}e{o}> .")
    lines += [f'<{X}e{i}> <{X}name> "entity {i % 50}" .' for i in range(0, 400, 3)]
    path = tmp_path_factory.mktemp("reach") / "random.nt"
    path.write_text("\n".join(lines) + "\n")
    store = LocalStore(tmp_path_factory.mktemp("store"), profile="generic")
    store.load([path])
    return store


def paths() -> list[RelationPath]:
    p = [node(f"p{i}") for i in range(3)]
    name = node("name")
    return [
        ((p[0], True),),
        ((p[1], False),),
        ((p[0], True), (p[1], False)),
        ((p[2], False), (p[2], True)),
        ((p[0], True), (name, True)),  # ends in literals
        ((p[1], True), (p[0], True), (p[2], False)),
    ]


@pytest.mark.parametrize("limit", [1, 7, 60, 2_000])
@pytest.mark.parametrize("start", [0, 3, 150, 399])
def test_it_counts_what_the_walk_reaches(random_graph: LocalStore, limit: int, start: int) -> None:
    rng = random.Random(start * limit)
    for path in paths():
        ends = reach(random_graph, node(f"e{start}"), path, limit=limit)
        wanted = {node(f"e{rng.randrange(400)}") for _ in range(30)} | {node(f"e{start}")}
        if ends:  # some of the ends wanted, to see them come back
            named = sorted((e for e in ends if isinstance(e, NamedNode)), key=str)
            wanted |= set(named[:: max(1, len(named) // 5)])
        found = reach_count(random_graph, node(f"e{start}"), path, wanted, limit=limit)
        assert found.answers == ends & wanted, path
        assert found.count == len(ends), path
        assert found.others == len(ends - wanted)


def test_a_walk_never_counts_its_start(films: LocalStore) -> None:
    same_director = ((ex("directedBy"), True), (ex("directedBy"), False))
    found = reach_count(films, ex("Titanic"), same_director, {ex("Titanic"), ex("Avatar")})
    assert found.answers == {ex("Avatar")}
    assert found.count == len(reach(films, ex("Titanic"), same_director))


def test_a_hubs_sample_is_the_one_the_walk_reads(tmp_path: Path) -> None:
    """Past the limit both read the same sample: the gold beyond it is missed by both."""
    store = genre_hub(tmp_path, X, 3_000)
    genre = ((node("genre"), True), (node("genre"), False))
    for limit in (10, 500, 2_999, 3_001, 5_000):
        ends = reach(store, node("Topic"), genre, limit=limit)
        found = reach_count(store, node("Topic"), genre, {node("Gold")}, limit=limit)
        assert (found.answers, found.count) == (ends & {node("Gold")}, len(ends))


def test_the_steps_before_the_last_are_shared_and_each_step_is_one_query(
    films: LocalStore,
) -> None:
    directed = (ex("directedBy"), True)
    two = [(directed, (ex("directedBy"), False)), (directed, (ex("starring"), False))]
    budget, taken = SearchBudget(), StepsTaken()
    for path in two:
        found = reach_count(films, ex("Titanic"), path, {ex("Avatar")}, budget=budget, taken=taken)
        assert found.count == len(reach(films, ex("Titanic"), path))
    assert budget.spent == 3  # the first step once, then each last step counted
    # a path walked to its end before is counted from what it reached
    walked = reach(films, ex("Titanic"), (directed,), taken=taken)
    spent = budget.spent
    found = reach_count(
        films, ex("Titanic"), (directed,), {ex("Cameron")}, budget=budget, taken=taken
    )
    assert (found.answers, found.count, budget.spent) == (walked & {ex("Cameron")}, 1, spent)


def test_the_ends_never_come_back_only_their_count(films: LocalStore) -> None:
    rows = films.run_template(
        "mine_step_count",
        nodes=[ex("Titanic"), ex("Avatar"), ex("Inception")],
        step=(ex("starring"), True),
        limit=2_000,
        start=ex("Titanic"),
        wanted=[ex("Winslet")],
        skipped=[],
    )
    assert len(rows) == 1
    assert rows[0]["hits"].value.split() == [ex("Winslet").value]


def walked_to_the_end(
    graph: LocalStore,
    start: NamedNode,
    path: RelationPath,
    wanted: set[NamedNode],
    *,
    limit: int,
    budget: SearchBudget | None,
    taken: StepsTaken | None,
) -> Reached:
    """The reference: every step walked and its ends read, as mining did before."""
    ends = reach(graph, start, path, limit=limit, budget=budget, taken=taken)
    return Reached(frozenset(ends & wanted), len(ends))


@pytest.mark.parametrize("seed", range(12))
def test_mining_picks_the_same_paths_with_the_same_queries_as_walking_to_the_end(
    random_graph: LocalStore, seed: int, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A path counted at its end and walked on later (its longer candidates) costs one
    query for that step, as walking it did: a question's budget lasts as long."""
    rng = random.Random(seed)
    topic = node(f"e{rng.randrange(12)}")
    golds = [node(f"e{rng.randrange(400)}") for _ in range(rng.choice([1, 3, 8]))]
    counted_budget = SearchBudget(queries=10_000)
    counted = mine(random_graph, [topic], golds, max_hops=3, budget=counted_budget)
    monkeypatch.setattr(mining, "reach_count", walked_to_the_end)
    walked_budget = SearchBudget(queries=10_000)
    walked = mine(random_graph, [topic], golds, max_hops=3, budget=walked_budget)
    assert counted == walked
    assert counted_budget.spent == walked_budget.spent


def test_a_budget_that_sufficed_for_walking_suffices_for_counting(tmp_path: Path) -> None:
    store = LocalStore(profile="generic")
    store.load_text(f"<{X}T> <{X}p> <{X}A> .\n<{X}A> <{X}q> <{X}B> .\n", name="two.nt")
    reference = SearchBudget()
    mine(store, [node("T")], [node("A"), node("B")], budget=reference)
    exact = SearchBudget(queries=reference.spent)
    found = mine(store, [node("T")], [node("A"), node("B")], budget=exact)
    assert {m.key for m in found} == {f"<{X}p>", f"<{X}p>/<{X}q>"}


def test_an_iri_with_unusual_whitespace_comes_back_whole() -> None:
    """IRIs may hold a no-break space (U+00A0) or other Unicode spaces; only U+0020
    separates the answers found."""
    store = LocalStore(profile="generic")
    odd = NamedNode(X + "Caf\u00e9\u00a0Noir\u3000x")
    store.load_text(f"<{X}S> <{X}p> <{odd.value}> .\n<{X}S> <{X}p> <{X}B> .\n", name="odd.nt")
    found = reach_count(store, node("S"), ((node("p"), True),), {odd, node("B")})
    assert (found.answers, found.count) == ({odd, node("B")}, 2)
