"""A hub's neighbours spread over its relations (``kg/spread.py``): the rare relation a
question asks about is read even when thousands of edges of another come first."""

from __future__ import annotations

import random
from typing import Any

import pytest
from pyoxigraph import NamedNode

from middleware.kg.backends.local import LocalStore
from middleware.kg.base import SORT_WINDOW, Triple
from middleware.kg.capped import neighbors_capped
from middleware.kg.spread import _taken_in_turn, spread_neighbors
from middleware.methods.collect import neighbourhood
from middleware.methods.ksl.offer import neighbour_options
from middleware.methods.registry import build_method
from middleware.testing.llms import first_option_or
from middleware.testing.methods import quick_settings
from middleware.text.verbalize import Verbalizer

FILMS = SORT_WINDOW + 100


@pytest.fixture(scope="module")
def kg() -> LocalStore:
    lines = [f"Film {i:05d}|has_genre|Drama" for i in range(FILMS)]
    lines += ["Drama|has_tags|genre", "Drama Queen|written_by|Drama"]
    lines += [f"Small|starred_actors|Actor {i}" for i in range(30)] + ["Small|has_genre|Drama"]
    store = LocalStore(profile="metaqa")
    store.load_text("\n".join(lines) + "\n", name="kb.txt")
    return store


def _relations(triples: list) -> set[str]:  # type: ignore[type-arg]
    return {t.predicate.value.rsplit("/", 1)[-1] for t in triples}


def test_a_hubs_spread_neighbours_hold_each_of_its_relations(kg: LocalStore) -> None:
    drama = kg.search("Drama")[0].iri
    sample = neighbors_capped(kg, drama, 10)
    assert "written_by" not in _relations(sample.items)  # 2,100 has_genre sort first
    read = neighbors_capped(kg, drama, 10, spread=True)
    assert read.cut and read.spread and len(read.items) == 10
    assert _relations(read.items) == {"has_genre", "has_tags", "written_by"}
    assert all(kg.has_triple(t) for t in read.items)
    keys = [(t.subject != drama, t.predicate.value) for t in read.items]
    assert keys == sorted(keys)  # relation by relation: outgoing first, then by predicate


@pytest.mark.parametrize("direction", ["in", "out"])
def test_one_direction_reads_as_before(kg: LocalStore, direction: str) -> None:
    """One side of a hub may be whole (Drama's outgoing edges): only both are spread."""
    drama = kg.search("Drama")[0].iri
    plain = neighbors_capped(kg, drama, 5, direction)  # type: ignore[arg-type]
    assert neighbors_capped(kg, drama, 5, direction, spread=True) == plain  # type: ignore[arg-type]


def test_a_hub_of_one_relation_reads_as_before() -> None:
    store = LocalStore(profile="metaqa")
    store.load_text("".join(f"Film {i:05d}|has_genre|Noir\n" for i in range(FILMS)), name="kb.txt")
    noir = store.search("Noir")[0].iri
    assert neighbors_capped(store, noir, 5, spread=True) == neighbors_capped(store, noir, 5)


def test_a_hub_of_more_relations_than_the_cap_reads_the_first_and_says_how_many() -> None:
    lines = [f"Film {i:05d}|has_genre|Noir" for i in range(FILMS)]
    lines += [f"Noir|rel_{c}|Thing {c}" for c in "bcdefg"]
    store = LocalStore(profile="metaqa")
    store.load_text("\n".join(lines) + "\n", name="kb.txt")
    noir = store.search("Noir")[0].iri
    read = neighbors_capped(store, noir, 4, spread=True)
    assert _relations(read.items) == {"rel_b", "rel_c", "rel_d", "rel_e"} and read.spread == 4


def test_a_node_under_the_hub_threshold_reads_as_before(kg: LocalStore) -> None:
    small = kg.search("Small")[0].iri
    assert neighbors_capped(kg, small, 5, spread=True) == neighbors_capped(kg, small, 5)


def test_the_neighbourhood_note_says_the_hub_was_spread(kg: LocalStore) -> None:
    drama = kg.search("Drama")[0].iri
    cuts: list[str] = []
    triples = neighbourhood(kg, [drama], per_entity=6, cuts=cuts, spread=True)
    assert _relations([b.triple for b in triples]) == {"has_genre", "has_tags", "written_by"}
    assert cuts and "read from 3 of its relations in turn" in cuts[0]


def _first(
    graph: LocalStore, entity: NamedNode, step: tuple[NamedNode, bool], n: int
) -> list[Triple]:
    """The first ``n`` edges of one relation, read alone (a query of one branch)."""
    return graph.step_edges(entity, [(step, n)])[0]


def _one_pass(graph: LocalStore, entity: NamedNode, cap: int) -> list[Triple]:
    """The reference: every relation read up to the cap, then taken one at a time from
    each in turn (the spread read takes fewer of some, and reads on past them: the
    same edges only because a read of fewer edges gives the first of a larger one's,
    and a read past them the next, as ``test_a_read_of_fewer_edges_*`` checks)."""
    steps = sorted(graph.relation_steps([entity]), key=lambda s: (not s[1], s[0].value))
    per_step = [_first(graph, entity, s, cap) for s in steps[:cap]]
    counts, taken = [0] * len(per_step), 0
    for depth in range(cap):
        for i, triples in enumerate(per_step):
            if depth < len(triples) and taken < cap:
                counts[i] += 1
                taken += 1
    return [t for triples, n in zip(per_step, counts, strict=True) for t in triples[:n]]


@pytest.fixture(scope="module")
def uneven() -> LocalStore:
    """A hub whose relations range from one edge to thousands."""
    sizes = {"has_genre": FILMS, "written_by": 700, "directed_by": 90, "has_tags": 7}
    sizes |= {
        f"rel_{c}": k
        for c, k in zip("abcdefghij", (1, 2, 3, 5, 8, 13, 21, 34, 55, 120), strict=True)
    }
    lines = [f"Thing {p} {i:05d}|{p}|Hub" for p, k in sizes.items() for i in range(k)]
    lines += [
        f"Hub|out_{c}|Other {c} {i}"
        for c, k in zip("xyz", (4, 150, 2), strict=True)
        for i in range(k)
    ]
    store = LocalStore(profile="metaqa")
    store.load_text("\n".join(lines) + "\n", name="kb.txt")
    return store


@pytest.mark.parametrize("cap", [1, 2, 5, 13, 17, 40, 64, 99, 100, 101, 500, 2_000, 5_000])
def test_the_read_equals_reading_every_relation_up_to_the_cap_then_taking_in_turn(
    uneven: LocalStore, cap: int
) -> None:
    hub = uneven.search("Hub")[0].iri
    triples, relations = spread_neighbors(uneven, hub, cap)
    assert triples == _one_pass(uneven, hub, cap)
    assert len(triples) == min(cap, FILMS + 700 + 90 + 7 + 262 + 156)  # every edge of the hub
    assert relations == len({(t.predicate, t.subject == hub) for t in triples})


def _reads(
    graph: LocalStore, hub: NamedNode, cap: int, monkeypatch: pytest.MonkeyPatch
) -> tuple[int, int, list[Triple]]:
    """The queries and the rows of edges the spread read took (its relations known
    already: a hub's probed steps are kept), and its triples."""
    graph.relation_steps([hub])
    rows: list[int] = []
    step_edges = LocalStore.step_edges

    def counted(self: LocalStore, *args: Any, **kwargs: Any) -> list[list[Triple]]:
        read = step_edges(self, *args, **kwargs)
        rows.append(sum(len(triples) for triples in read))
        return read

    monkeypatch.setattr(LocalStore, "step_edges", counted)
    before = graph.query_count
    triples, _ = spread_neighbors(graph, hub, cap)
    monkeypatch.undo()
    return graph.query_count - before, sum(rows), triples


def test_a_large_cap_reads_about_the_cap_not_every_relation_up_to_it(
    uneven: LocalStore, monkeypatch: pytest.MonkeyPatch
) -> None:
    """17 relations, 4 of them longer than their share of 2,000: read for the share,
    counted, read again."""
    hub = uneven.search("Hub")[0].iri
    queries, rows, triples = _reads(uneven, hub, 2_000, monkeypatch)
    assert len(triples) == 2_000 and len({(t.predicate, t.subject == hub) for t in triples}) == 17
    assert queries == 17 + 4 + 4 and rows <= 2 * 2_000, (queries, rows)


def test_a_small_cap_filled_by_the_shares_reads_each_relation_once(
    uneven: LocalStore, monkeypatch: pytest.MonkeyPatch
) -> None:
    hub = uneven.search("Hub")[0].iri
    queries, rows, triples = _reads(uneven, hub, 17, monkeypatch)
    assert (queries, rows, len(triples)) == (17, 17, 17)


def test_a_staircase_of_relation_sizes_is_read_whole_to_the_cap(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Relations of 1, 2, 3, ... 120 edges (7,260 in all): rounds that raise a level
    can end short of the cap on such sizes; counted, each relation's share is known."""
    lines = [f"Thing {k} {i}|rel_{k:03d}|Hub" for k in range(1, 121) for i in range(k)]
    store = LocalStore(profile="metaqa")
    store.load_text("\n".join(lines) + "\n", name="kb.txt")
    hub = store.search("Hub")[0].iri
    queries, rows, triples = _reads(store, hub, 2_000, monkeypatch)
    assert len(triples) == 2_000 and triples == _one_pass(store, hub, 2_000)
    assert queries <= 3 * 120 and rows <= 2 * 2_000, (queries, rows)


@pytest.mark.parametrize("seed", range(20))
def test_taking_in_turn_counts_as_one_at_a_time_would(seed: int) -> None:
    rng = random.Random(seed)
    sizes = [rng.choice([0, 1, 2, 5, 40, 300]) for _ in range(rng.randint(1, 12))]
    cap = rng.randint(1, 400)
    counts, taken = [0] * len(sizes), 0
    while taken < cap and any(c < s for c, s in zip(counts, sizes, strict=True)):
        for i, size in enumerate(sizes):
            if counts[i] < size and taken < cap:
                counts[i] += 1
                taken += 1
    assert _taken_in_turn(sizes, cap) == counts


def test_ksl_offers_each_of_a_hubs_relations_and_says_it_spread_the_read(kg: LocalStore) -> None:
    drama = kg.search("Drama")[0].iri
    read = neighbour_options(kg, drama, Verbalizer(kg), visited=set(), limit=10, spread=True)
    assert read.spread == 3 and {o.steps[0][0].value.rsplit("/", 1)[-1] for o in read.items} == {
        "has_genre",
        "has_tags",
        "written_by",
    }
    settings = quick_settings().replace(ksl_neighbor_limit=10)
    method = build_method("ksl", settings, first_option_or("Drama Queen"), kg)
    result = method.run("Which film was written by Drama?")
    notes = [n for step in result.steps for n in step.notes]
    assert any(
        "Drama: read 10 neighbour triples" in n and "3 of its relations" in n for n in notes
    ), notes
    plain = build_method("ksl", settings.replace(ksl_spread_hubs=False), first_option_or("x"), kg)
    notes = [n for step in plain.run("Which film was written by Drama?").steps for n in step.notes]
    assert not any("of its relations" in n for n in notes), notes


def test_a_hubs_spread_read_skips_the_plain_sample_it_would_throw_away(
    kg: LocalStore, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A hub is known from a capped count before any read: its plain read (a window of
    2,000 edges sorted) would only be thrown away for the spread one."""
    drama = kg.search("Drama")[0].iri
    expected = neighbors_capped(kg, drama, 10, spread=True)
    plain_reads: list[object] = []
    neighbors = LocalStore.neighbors

    def counted(self: LocalStore, *args: Any, **kwargs: Any) -> list[Triple]:
        plain_reads.append(args)
        return neighbors(self, *args, **kwargs)

    monkeypatch.setattr(LocalStore, "neighbors", counted)
    assert neighbors_capped(kg, drama, 10, spread=True) == expected
    assert plain_reads == []
    small = kg.search("Small")[0].iri
    assert neighbors_capped(kg, small, 5, spread=True) == neighbors_capped(kg, small, 5)
    assert plain_reads


E = "http://ex.org/"


def _raw(graph: LocalStore, pattern: str) -> list[Any]:
    """Every ``?x`` of ``pattern`` in the engine's order (no LIMIT), straight from it."""
    return [row["x"] for row in graph.oxigraph.query(f"SELECT ?x WHERE {{ {pattern} }}")]


def test_a_read_of_fewer_edges_gives_the_first_of_all_and_a_read_after_them_the_next(
    uneven: LocalStore,
) -> None:
    """``step_edges`` against the engine's own unlimited read of each relation."""
    hub = uneven.search("Hub")[0].iri
    for predicate, forward in uneven.relation_steps([hub]):
        p, h = f"<{predicate.value}>", f"<{hub.value}>"
        everything = _raw(uneven, f"{h} {p} ?x" if forward else f"?x {p} {h}")
        ends = [
            t.object if forward else t.subject
            for t in _first(uneven, hub, (predicate, forward), 9_999)
        ]
        assert ends == everything
        for n, after in ((1, 0), (7, 0), (7, 5), (60, 33), (5_000, 100)):
            read = uneven.step_edges(hub, [((predicate, forward), n)], after=[after])[0]
            assert read == _first(uneven, hub, (predicate, forward), 9_999)[after : after + n]
        assert uneven.step_sizes(hub, [(predicate, forward)], cap=50) == [min(50, len(everything))]


def test_a_load_between_the_reads_repeats_no_edge(monkeypatch: pytest.MonkeyPatch) -> None:
    """The read is several queries: a load that lands between them moves the edges
    after the first ones, so those are read again from the start."""
    hub = NamedNode(E + "Hub")
    store = LocalStore(profile="metaqa")
    edges = "".join(f"<{E}Hub> <{E}p> <{E}o{i}> .\n" for i in range(10))
    store.load_text(edges + f"<{E}Hub> <{E}q> <{E}x> .\n", name="a.nt")
    sizes = LocalStore.step_sizes
    loads = iter(range(100))

    def then_a_load(self: LocalStore, *args: Any, **kwargs: Any) -> list[int]:
        self.load_text(f"<{E}Hub> <{E}p> <{E}new{next(loads)}> .\n", name="b.nt")
        return sizes(self, *args, **kwargs)

    monkeypatch.setattr(LocalStore, "step_sizes", then_a_load)
    for _ in range(20):
        triples, _ = spread_neighbors(store, hub, 8)
        assert len(set(triples)) == len(triples) == 8
        assert all(store.has_triple(t) for t in triples)


def test_a_triple_term_is_neither_counted_nor_read() -> None:
    """RDF 1.2 triple terms load, but no neighbour is one: counted as edges but not
    read, they took a relation's share and left its real edges unread."""
    hub, h = NamedNode(E + "Hub"), f"<{E}Hub>"
    lines = [f"{h} <{E}p> <{E}x{i}> ." for i in range(3)]
    lines += [f"{h} <{E}p> <<( <{E}s{i}> <{E}q> <{E}o{i}> )>> ." for i in range(10)]
    lines += [f"{h} <{E}q> <{E}y{i}> ." for i in range(10)] + [f"{h} <{E}r> <{E}z> ."]
    store = LocalStore(profile="metaqa")
    store.load_text("\n".join(lines) + "\n", name="a.nt")
    triples, relations = spread_neighbors(store, hub, 9)
    assert relations == 3 and len(triples) == 9
    assert {t.predicate.value[-1] for t in triples} == {"p", "q", "r"}
