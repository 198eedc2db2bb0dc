"""paths() returns exactly the simple paths a brute-force networkx enumeration finds."""

from __future__ import annotations

import pytest
from pyoxigraph import NamedNode

from middleware.kg.backends.local import LocalStore
from middleware.support.resources import data_file
from tests.kg.bruteforce import brute_force_paths, path_key, relation_graph, sample_pairs

PAIRS = 100


@pytest.fixture(scope="module")
def sample_slice() -> LocalStore:
    store = LocalStore(profile="metaqa", name="slice")
    store.load([data_file("metaqa-sample.txt.gz")])
    return store


@pytest.mark.slow
@pytest.mark.parametrize("hops", [1, 2, 3])
def test_paths_match_networkx(sample_slice: LocalStore, hops: int) -> None:
    skipped = {str(p) for p in sample_slice.profile.skipped_predicates}
    triples = [
        (str(q.subject), str(q.predicate), str(q.object))
        for q in sample_slice._store
        if str(q.predicate) not in skipped
    ]
    graph = relation_graph(triples)
    checked = 0
    for a, b in sample_pairs(graph, PAIRS, hops, seed=hops):
        expected = set()
        for length in range(1, hops + 1):
            expected |= brute_force_paths(graph, a, b, length)
        got = sample_slice.paths(
            NamedNode(a[1:-1]), NamedNode(b[1:-1]), max_hops=hops, limit=10_000
        )
        keys = [path_key(p) for p in got]
        assert len(keys) == len(set(keys)), "a path was returned twice"
        assert set(keys) == expected, (a, b)
        assert [len(p) for p in got] == sorted(len(p) for p in got)
        checked += 1
    assert checked == PAIRS
