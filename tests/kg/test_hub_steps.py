"""Relation steps of a batch that a hub fills: only the hub is probed predicate by
predicate; the other nodes' steps are read from their own edges, and the steps found
are the same as each node's own."""

from __future__ import annotations

import pytest

from middleware.kg.base import SORT_WINDOW
from middleware.kg.walks import STEPS_WINDOW
from middleware.testing.observed import QueryLog

FILMS = STEPS_WINDOW + 100
BUSY = 12  # nodes under the hub threshold whose edges fill the window together
BUSY_EDGES = SORT_WINDOW - 100


@pytest.fixture(scope="module")
def store(tmp_path_factory: pytest.TempPathFactory) -> QueryLog:
    lines = [f"Film {i:05d}|has_genre|Drama" for i in range(FILMS)]
    lines += ["Drama|has_tags|genre", "Small One|directed_by|Ann Hui"]
    lines += ["Small Two|written_by|Bo Yang", "Small Two|in_language|Cantonese"]
    lines += [
        f"Busy {b}|starred_actors|Actor {b}-{i}" for b in range(BUSY) for i in range(BUSY_EDGES)
    ]
    kg = QueryLog(tmp_path_factory.mktemp("hubsteps") / "store", profile="metaqa", name="h")
    kg.texts = []
    kg.load_text("\n".join(lines) + "\n", name="kb.txt")
    return kg


def test_only_the_hub_is_probed_and_the_steps_are_each_nodes_own(store: QueryLog) -> None:
    drama, one, two = store.named("Drama"), store.named("Small One"), store.named("Small Two")
    each = set()
    for node in (drama, one, two):
        each |= set(store.relation_steps([node]))
    store.texts.clear()
    together = store.relation_steps([drama, one, two])
    assert set(together) == each
    assert {(p.value.rsplit("/", 1)[-1], f) for p, f in together} == {
        ("has_genre", False),
        ("has_tags", True),
        ("directed_by", True),
        ("written_by", True),
        ("in_language", True),
    }
    probes = [t for t in store.texts if "EXISTS" in t]
    assert len(probes) == 1
    assert drama.value in probes[0]
    assert one.value not in probes[0] and two.value not in probes[0]


def test_a_batch_of_hubs_alone_is_probed_whole(store: QueryLog) -> None:
    drama = store.named("Drama")
    store.texts.clear()
    steps = store.relation_steps([drama], limit=999)  # another key than the cached one
    assert {(p.value.rsplit("/", 1)[-1], f) for p, f in steps} == {
        ("has_genre", False),
        ("has_tags", True),
    }
    assert sum("EXISTS" in t for t in store.texts) == 1


def test_when_the_others_fill_the_window_too_every_node_is_probed(store: QueryLog) -> None:
    busy = [store.named(f"Busy {b}") for b in range(BUSY)]
    nodes = [store.named("Drama"), *busy]
    store.texts.clear()
    steps = store.relation_steps(nodes)
    assert {(p.value.rsplit("/", 1)[-1], f) for p, f in steps} == {
        ("has_genre", False),
        ("has_tags", True),
        ("starred_actors", True),
    }
    probes = [t for t in store.texts if "EXISTS" in t]
    assert len(probes) == 1
    assert all(node.value in probes[0] for node in nodes)
