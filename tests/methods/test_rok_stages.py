"""RoK's graph stages pinned on a small hand-made graph: pairs, paths, PageRank, buckets, neighbours."""

from __future__ import annotations

import random

import networkx as nx
import pytest
from pyoxigraph import NamedNode

from middleware.errors import BadRequest
from middleware.kg.backends.local import LocalStore
from middleware.kg.base import Hop, Path, Triple
from middleware.methods.rok.pagerank import pagerank
from middleware.methods.rok.path_search import (
    canonical_key,
    neighbour_candidates,
    rank_paths,
    search_pairs,
    select_paths,
    spread,
    subgraph,
)

KB = """\
Film A|directed_by|Dir X
Film A|starred_actors|Actor P
Film A|has_genre|Drama
Film B|directed_by|Dir X
Film B|starred_actors|Actor Q
Film C|starred_actors|Actor P
Film C|has_genre|Drama
Film D|has_genre|Comedy
"""


@pytest.fixture(scope="module")
def kg() -> LocalStore:
    store = LocalStore(profile="metaqa")
    store.load_text(KB, name="kb.txt")
    return store


def iri(kg: LocalStore, label: str) -> NamedNode:
    return kg.entity_iri(label)


def texts(kg: LocalStore, paths: list[Path]) -> set[str]:
    from middleware.text.verbalize import Verbalizer

    return {Verbalizer(kg).path(p) for p in paths}


def test_pairs_follow_algorithm_1(kg: LocalStore) -> None:
    a, q, x, d = (iri(kg, n) for n in ("Film A", "Actor Q", "Dir X", "Film D"))
    search = search_pairs(kg, [a, q, x, d], max_hops=2)
    # Start at A against all others; X is reached, so X starts next against what is left;
    # then Q (reached from X); D, never reached, is tried against Q last.
    assert search.pairs == [(a, q), (a, x), (a, d), (x, q), (x, d), (q, d)]
    assert search.found == {(a, q): 0, (a, x): 1, (a, d): 0, (x, q): 1, (x, d): 0, (q, d): 0}
    assert texts(kg, search.paths) == {
        "Film A | directed by | Dir X",
        "Dir X | directed | Film B | starring | Actor Q",
    }


def test_every_unordered_pair_is_searched_once(kg: LocalStore) -> None:
    keys = [iri(kg, n) for n in ("Actor P", "Actor Q", "Film D", "Dir X", "Film C")]
    pairs = search_pairs(kg, keys, max_hops=2).pairs
    assert len(pairs) == len({frozenset(p) for p in pairs}) == 10


def test_three_hops_find_longer_paths(kg: LocalStore) -> None:
    a, q = iri(kg, "Film A"), iri(kg, "Actor Q")
    assert search_pairs(kg, [a, q], max_hops=2).paths == []
    found = search_pairs(kg, [a, q], max_hops=3).paths
    assert texts(kg, found) == {
        "Film A | directed by | Dir X | directed | Film B | starring | Actor Q"
    }


def test_paths_and_their_reverses_count_once(kg: LocalStore) -> None:
    a, x = iri(kg, "Film A"), iri(kg, "Dir X")
    forward = kg.paths(a, x)[0]
    backward = kg.paths(x, a)[0]
    assert forward.key() != backward.key()
    assert canonical_key(forward) == canonical_key(backward)


def test_subgraph_deduplicates_triples(kg: LocalStore) -> None:
    a, p, c = (iri(kg, n) for n in ("Film A", "Actor P", "Film C"))
    search = search_pairs(kg, [a, p, c], max_hops=2)
    triples = subgraph(search.paths)
    assert len(triples) == len({t.key() for t in triples})
    assert sum(len(path) for path in search.paths) > len(triples)


def _random_edges(seed: int) -> list[tuple[str, str]]:
    rng = random.Random(seed)
    nodes = [f"n{i}" for i in range(rng.randint(2, 25))]
    edges = [(rng.choice(nodes), rng.choice(nodes)) for _ in range(rng.randint(1, 60))]
    return edges


@pytest.mark.parametrize("seed", range(25))
@pytest.mark.parametrize("damping", [0.85, 0.5, 0.95])
def test_pagerank_matches_networkx(seed: int, damping: float) -> None:
    edges = _random_edges(seed)
    graph = nx.Graph()
    for u, v in edges:  # parallel triples add weight, as they do in ours
        weight = graph[u][v]["weight"] + 1 if graph.has_edge(u, v) else 1
        graph.add_edge(u, v, weight=weight)
    expected = nx.pagerank(graph, alpha=damping, weight="weight", tol=1e-10, max_iter=1000)
    ours = pagerank(edges, damping=damping, tolerance=1e-10, max_iterations=1000)
    assert set(ours) == set(expected)
    for node, value in expected.items():
        assert ours[node] == pytest.approx(value, abs=1e-8)
    assert sum(ours.values()) == pytest.approx(1.0)


def test_pagerank_default_tolerance_is_close_to_networkx() -> None:
    edges = _random_edges(99)
    graph = nx.Graph()
    graph.add_edges_from(edges)
    expected = nx.pagerank(graph, alpha=0.85)
    ours = pagerank(list(dict.fromkeys((min(u, v), max(u, v)) for u, v in edges)))
    assert max(abs(ours[n] - expected[n]) for n in expected) < 1e-5


def test_pagerank_rejects_bad_damping() -> None:
    with pytest.raises(BadRequest, match="damping"):
        pagerank([("a", "b")], damping=1.0)
    assert pagerank([]) == {}


def _path(*steps: tuple[str, str, str]) -> Path:
    hops = []
    for s, p, o in steps:
        hops.append(
            Hop(Triple(NamedNode(f"urn:{s}"), NamedNode(f"urn:{p}"), NamedNode(f"urn:{o}")))
        )
    return Path(tuple(hops))


def test_buckets_then_mean_pagerank_then_top_k() -> None:
    n = {name: NamedNode(f"urn:{name}") for name in "ABCDEF"}
    p_two_keys = _path(("A", "r", "C"), ("C", "r", "B"))  # holds keys A, B
    p_two_keys_low = _path(("A", "r", "D"), ("D", "r", "B"))
    p_one_key_high = _path(("A", "r", "E"))
    p_three_keys = _path(("A", "r", "B"), ("B", "r", "F"))  # holds A, B, F
    ranks = {n["A"]: 0.3, n["B"]: 0.2, n["C"]: 0.2, n["D"]: 0.01, n["E"]: 0.9, n["F"]: 0.01}
    keys = [n["A"], n["B"], n["F"]]
    ranked = rank_paths([p_one_key_high, p_two_keys_low, p_two_keys, p_three_keys], keys, ranks)
    assert [r.path for r in ranked] == [p_three_keys, p_two_keys, p_two_keys_low, p_one_key_high]
    assert [r.key_entities for r in ranked] == [3, 2, 2, 1]
    assert ranked[1].score == pytest.approx((0.3 + 0.2 + 0.2) / 3)
    assert [s.path for s in select_paths(ranked, 2)] == [p_three_keys, p_two_keys]
    # k larger than the fullest bucket: the next bucket fills the rest, best first.
    assert [s.path for s in select_paths(ranked, 3)] == [p_three_keys, p_two_keys, p_two_keys_low]


def test_paths_through_a_question_entity_rank_first() -> None:
    n = {name: NamedNode(f"urn:{name}") for name in "QABC"}
    # Q is named in the question; A and B are guesses from the chain of thought.
    guess_to_guess = _path(("A", "r", "C"), ("C", "r", "B"))
    from_question = _path(("Q", "r", "C"), ("C", "r", "A"))
    ranks = {n["A"]: 0.4, n["B"]: 0.4, n["C"]: 0.1, n["Q"]: 0.01}
    keys = [n["Q"], n["A"], n["B"]]
    ranked = rank_paths([guess_to_guess, from_question], keys, ranks, anchors=[n["Q"]])
    assert [r.path for r in ranked] == [from_question, guess_to_guess]
    assert [r.anchors for r in ranked] == [1, 0]
    # Without anchors the higher PageRank wins, as in the paper's ranking.
    assert rank_paths([guess_to_guess, from_question], keys, ranks)[0].path == guess_to_guess


def test_neighbours_drop_main_path_triples_and_its_relations(kg: LocalStore) -> None:
    a, x = iri(kg, "Film A"), iri(kg, "Dir X")
    main = kg.paths(a, x, max_hops=1)
    report = neighbour_candidates(kg, [a, x], main)
    # Film A: directed_by Dir X is the main path; Dir X: Film B's directed_by uses the
    # same relation on the same side as the main path, so it goes.
    assert report.on_main_path == 2
    assert report.same_relation == 1
    from middleware.text.verbalize import Verbalizer

    shown = {Verbalizer(kg).triple(c.triple) for c in report.candidates}
    assert shown == {"Film A | starring | Actor P", "Film A | has genre | Drama"}


def test_same_relation_on_the_other_side_is_kept(kg: LocalStore) -> None:
    b, q = iri(kg, "Film B"), iri(kg, "Actor Q")
    main = kg.paths(b, q, max_hops=1)  # Film B -starred_actors-> Actor Q
    report = neighbour_candidates(kg, [iri(kg, "Film A")], main)
    # Film A is not on the path: its starred_actors triple stays.
    assert report.same_relation == 0
    assert report.fetched == 3


def test_spread_takes_relations_in_turn() -> None:
    from middleware.methods.rok.path_search import Neighbour

    e = NamedNode("urn:e")
    many = [
        Neighbour(e, "out", Triple(e, NamedNode("urn:film"), NamedNode(f"urn:f{i}")))
        for i in range(10)
    ]
    one = [Neighbour(e, "out", Triple(e, NamedNode("urn:born"), NamedNode("urn:city")))]
    picked = spread(many + one, 3)
    assert [p.triple.object.value for p in picked] == ["urn:f0", "urn:city", "urn:f1"]
    assert spread(many, 0) == []
    assert len(spread(many + one, 50)) == 11
