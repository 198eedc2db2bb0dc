"""``neighbors`` at a hub of a store in this process reads the first rows the engine
gives (a sample either way), not a window of 2,000 sorted for a few; a node that is no
hub reads exactly as before: all of a side sorted, or its 2,000-edge window."""

from __future__ import annotations

import pytest
from pyoxigraph import NamedNode

from middleware.kg.backends.local import LocalStore
from middleware.kg.base import SORT_WINDOW, QueryResult
from middleware.testing.observed import ObservedStore

E = "http://ex.org/"


class RowCountingStore(ObservedStore):
    """A local store that remembers the rows each query returned."""

    rows: list[int]

    def after(self, sparql: str, result: QueryResult) -> None:
        self.rows.append(len(result.rows))


@pytest.fixture(scope="module")
def store(tmp_path_factory: pytest.TempPathFactory) -> RowCountingStore:
    lines = [f"<{E}Hub> <{E}p> <{E}o{i:05d}> ." for i in range(SORT_WINDOW + 500)]
    lines += [f"<{E}s{i:04d}> <{E}q> <{E}Hub> ." for i in range(50)]
    lines += [f"<{E}Mid> <{E}p> <{E}m{i:04d}> ." for i in range(300)]  # over the limit, no hub
    lines += [f"<{E}m{i:04d}> <{E}q> <{E}Mid> ." for i in range(40)]
    lines += [f"<{E}Small> <{E}p> <{E}x{i}> ." for i in range(5)]
    folder = tmp_path_factory.mktemp("hub-neighbors")
    kg = RowCountingStore(folder / "store", profile="generic", name="hub")
    kg.load_text("\n".join(lines) + "\n", name="a.nt")
    return kg


def _sorted_side(store: LocalStore, node: NamedNode) -> list[str]:
    """Every outgoing edge of ``node``, sorted as ``neighbors`` sorts them."""
    return sorted(t.object.value for t in store.neighbors(node, direction="out", limit=9_999))


def test_a_hub_reads_about_the_limit_not_its_window(store: RowCountingStore) -> None:
    store.rows = []
    triples = store.neighbors(NamedNode(E + "Hub"), limit=100)
    assert len(triples) == 100 and all(store.has_triple(t) for t in triples)
    assert max(store.rows) <= 100, store.rows  # no 2,000-row window read
    objects = [t.object.value for t in triples]
    assert objects == sorted(objects)


@pytest.mark.parametrize("name", ["Mid", "Small"])
def test_a_node_that_is_no_hub_reads_exactly_as_before(store: RowCountingStore, name: str) -> None:
    """All of a side, sorted: the first ``limit`` of it, whatever the engine's order."""
    node = NamedNode(E + name)
    for limit in (1, 3, 100, 400):
        out = [t.object.value for t in store.neighbors(node, direction="out", limit=limit)]
        assert out == _sorted_side(store, node)[:limit]
    both = store.neighbors(node, limit=400)
    assert [t.subject for t in both].count(node) == len(_sorted_side(store, node))
