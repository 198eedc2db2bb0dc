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
    kg = QueryLog.loaded(tmp_path_factory.mktemp("hubsteps") / "store", lines, name="h")
    return kg


def test_only_the_hub_is_probed_and_the_steps_are_each_nodes_own(store: QueryLog) -> None:
    drama, one, two = store.named("Drama"), store.named("Small One"), store.named("Small Two")
    store.texts.clear()
    together = store.relation_steps([drama, one, two])
    probes = [t for t in store.texts if "EXISTS" in t]
    assert len(probes) <= 1  # none when another test had the hub probed already
    assert all(one.value not in t and two.value not in t for t in probes)
    each = set()
    for node in (drama, one, two):
        each |= set(store.relation_steps([node]))
    assert set(together) == each
    assert {(p.value.rsplit("/", 1)[-1], f) for p, f in together} == {
        ("has_genre", False),
        ("has_tags", True),
        ("directed_by", True),
        ("written_by", True),
        ("in_language", True),
    }


def test_when_the_others_fill_the_window_too_they_are_probed(store: QueryLog) -> None:
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
    assert any(all(node.value in t for node in busy) for t in probes)


def test_a_probed_hub_is_kept_until_the_data_changes(tmp_path) -> None:  # type: ignore[no-untyped-def]
    lines = [f"Film {i:05d}|has_genre|Drama" for i in range(FILMS)]
    lines += ["Small One|directed_by|Ann Hui", "Small Two|written_by|Bo Yang"]
    kg = QueryLog.loaded(tmp_path / "store", lines, name="k")
    drama, one, two = kg.named("Drama"), kg.named("Small One"), kg.named("Small Two")
    kg.relation_steps([drama, one])
    kg.texts.clear()
    steps = kg.relation_steps([drama, two])  # another batch with the same hub
    assert not [t for t in kg.texts if "EXISTS" in t], "the hub's steps were kept"
    assert {(p.value.rsplit("/", 1)[-1], f) for p, f in steps} == {
        ("has_genre", False),
        ("written_by", True),
    }
    kg.load_text("Drama|has_tags|genre\n", name="more.txt")
    kg.texts.clear()
    steps = kg.relation_steps([drama, two])
    assert sum("EXISTS" in t for t in kg.texts) == 1, "a load makes the hub probed again"
    assert ("has_tags", True) in {(p.value.rsplit("/", 1)[-1], f) for p, f in steps}


def test_a_users_store_keeps_no_hub_it_cannot_see_change(tmp_path) -> None:  # type: ignore[no-untyped-def]
    import pyoxigraph

    from middleware.kg.backends.local import LocalStore

    theirs = pyoxigraph.Store()
    kg = LocalStore(store=theirs, profile="metaqa", name="theirs")
    lines = [f"Film {i:05d}|has_genre|Drama" for i in range(FILMS)]
    kg.load_text("\n".join(lines) + "\nSmall One|directed_by|Ann Hui\n", name="kb.txt")
    drama = next(e.iri for e in kg.search("Drama") if e.label == "Drama")
    one = next(e.iri for e in kg.search("Small One") if e.label == "Small One")
    kg.relation_steps([drama, one])
    assert not kg.versions_every_change
    assert kg._kept_hubs([drama]) == {}


def test_the_hubs_of_a_filled_window_are_counted_without_reading_it_again(
    store: QueryLog,
) -> None:
    """The batch's edges just filled the steps window, so a window of its degrees would
    fill too: each node is counted up to the hub threshold on its own."""
    nodes = [store.named("Drama"), store.named("Small One"), store.named("Busy 0")]
    store.texts.clear()
    assert store._hubs(nodes) == [store.named("Drama")]
    assert [t for t in store.texts if "COUNT(*)" in t and "GROUP BY ?e" in t] == []


def test_a_few_nodes_read_a_window_of_a_hubs_size_before_probing(tmp_path) -> None:  # type: ignore[no-untyped-def]
    """Nodes under the hub threshold cannot fill ``SORT_WINDOW`` edges each, so a batch
    of n reads at most n x SORT_WINDOW edges before it knows a hub is among them: a hub
    costs a hub's window, not ``STEPS_WINDOW``."""
    lines = [f"Film {i:05d}|has_genre|Drama" for i in range(FILMS)]
    lines += ["Small One|directed_by|Ann Hui"]
    kg = QueryLog.loaded(tmp_path / "store", lines, name="w")
    drama, one = kg.named("Drama"), kg.named("Small One")

    def windows(nodes: list) -> list[str]:  # type: ignore[type-arg]
        kg.texts.clear()
        found = kg.relation_steps(nodes)
        assert set(found) == {s for n in nodes for s in kg.relation_steps([n])}
        return [t for t in kg.texts if "COUNT(*)" in t]

    assert all(f"LIMIT {SORT_WINDOW} " in t for t in windows([one]))
    first, *_ = windows([drama, one])
    assert f"LIMIT {2 * SORT_WINDOW} " in first
    assert any("EXISTS" in t and drama.value in t for t in kg.texts), "the hub was probed"


def test_steps_cut_at_a_limit_are_the_first_in_the_order_returned(
    tmp_path, monkeypatch: pytest.MonkeyPatch
) -> None:  # type: ignore[no-untyped-def]
    """Where the predicates are too many to probe, a hub's steps come from the plain
    query, cut at the limit in the engine: it must cut in the order the steps are
    returned (by predicate, forward first), or the kept step is another one."""
    from middleware.kg import walks

    monkeypatch.setattr(walks, "MAX_PREDICATES", 0)  # no vocabulary: the plain query
    lines = [f"Film {i:05d}|has_genre|Drama" for i in range(SORT_WINDOW)]
    lines += [f"Drama|has_genre|Style {i}" for i in range(SORT_WINDOW)]
    kg = QueryLog.loaded(tmp_path / "store", lines, name="cut")
    drama = kg.named("Drama")
    both = kg.relation_steps([drama])
    assert [f for _, f in both] == [True, False]
    assert kg.relation_steps([drama], limit=1) == both[:1]


def test_a_users_store_reads_a_hub_of_a_few_thousand_edges_from_its_window(tmp_path) -> None:  # type: ignore[no-untyped-def]
    """A store the middleware does not own may change without a new version, so its
    steps are not probed against a predicate list read earlier: a predicate added
    behind its back at a hub under STEPS_WINDOW edges is still found."""
    import pyoxigraph

    from middleware.kg.backends.local import LocalStore

    theirs = pyoxigraph.Store()
    kg = LocalStore(store=theirs, profile="metaqa", name="theirs")
    lines = [f"Film {i:05d}|has_genre|Drama" for i in range(SORT_WINDOW)]
    lines += [f"Film {i:05d}|has_genre|Comedy" for i in range(SORT_WINDOW)]
    kg.load_text("\n".join(lines) + "\n", name="kb.txt")
    drama = next(e.iri for e in kg.search("Drama") if e.label == "Drama")
    comedy = next(e.iri for e in kg.search("Comedy") if e.label == "Comedy")
    kg.relation_steps([comedy])
    added = pyoxigraph.NamedNode("http://example.org/new_relation")
    theirs.add(pyoxigraph.Quad(drama, added, pyoxigraph.Literal("x")))
    assert (added, True) in kg.relation_steps([drama])
