"""The walks of a relation path and a node's neighbours, ordered here instead of in the
engine (``ordered_rows.py``).

A store in this process reads the window of walks (or neighbours) unsorted and sorts them when every
end is an IRI; a literal or blank node among them sends the query back to the engine
wrapped in the ``ORDER BY``; an endpoint always gets that query. Each way, the walks
are those the engine's ``ORDER BY`` gives.
"""

from __future__ import annotations

import random
from typing import Any

import pytest
from pyoxigraph import Literal, NamedNode

from middleware.errors import BadRequest, ConfigError
from middleware.kg import ordered_rows
from middleware.kg.backends.endpoint import SparqlEndpoint
from middleware.kg.backends.local import LocalStore
from middleware.kg.ordered_rows import Ordering
from middleware.kg.sparql_templates import Rendered, TemplateSet
from middleware.kg.walks import MIDDLE_WINDOW
from middleware.testing.graphs import films_path

EX = "http://example.org/"
P, Q = NamedNode(EX + "p"), NamedNode(EX + "q")


def iri(name: str) -> NamedNode:
    return NamedNode(EX + name)


@pytest.fixture(scope="module")
def store() -> LocalStore:
    """Random edges between 60 nodes (IRIs in no particular order), and a node whose
    ends are a mix of IRIs, literals and a blank node."""
    rng = random.Random(5)
    names = [f"n{rng.randrange(10**6)}" for _ in range(60)]
    lines = [
        f"<{EX}{rng.choice(names)}> <{rng.choice([P, Q]).value}> <{EX}{rng.choice(names)}> ."
        for _ in range(900)
    ]
    lines += [f"<{EX}start> <{P.value}> <{EX}{name}> ." for name in names]
    lines += [
        f'<{EX}mixed> <{P.value}> "b" .',
        f'<{EX}mixed> <{P.value}> "10"^^<http://www.w3.org/2001/XMLSchema#integer> .',
        f'<{EX}mixed> <{P.value}> "9"^^<http://www.w3.org/2001/XMLSchema#integer> .',
        f"<{EX}mixed> <{P.value}> <{EX}z> .",
        f"<{EX}mixed> <{P.value}> _:b1 .",
    ]
    kg = LocalStore(profile="generic")
    kg.load_text("\n".join(lines) + "\n", name="edges.nt")
    return kg


def engine_sorted(kg: LocalStore, steps: tuple[tuple[NamedNode, bool], ...], limit: int) -> list:  # type: ignore[type-arg]
    """What the engine's own ORDER BY gives for the same window (run as the templates
    are: a caller's query may take another path through the engine, and sample
    another window)."""
    bindings: dict[str, object] = {f"step{i}": step for i, step in enumerate(steps, start=1)}
    if len(steps) == 3:
        bindings["middle"] = MIDDLE_WINDOW
    text = kg.templates.render(f"follow_{len(steps)}", start=iri("start"), window=2000, **bindings)
    keys = tuple(f"n{i}" for i in range(len(steps), 0, -1))
    wrapped = kg.templates.render("ordered", query=text, keys=keys, limit=limit)
    rows = kg._select_text(f"follow_{len(steps)}", wrapped)
    return [tuple(row[f"n{i}"] for i in range(1, len(steps) + 1)) for row in rows]


@pytest.mark.parametrize("hops", [1, 2, 3])
@pytest.mark.parametrize("limit", [7, 1000])
def test_walks_sorted_here_are_the_engines(store: LocalStore, hops: int, limit: int) -> None:
    steps = ((P, True), (Q, False), (P, True))[:hops]
    before = store.query_count
    walks = store.follow(iri("start"), steps, limit=limit)
    assert store.query_count - before == 1  # every end an IRI: sorted here
    found = [tuple(walk.nodes[1:]) for walk in walks]
    assert found and found == engine_sorted(store, steps, limit)


def test_a_literal_among_the_ends_leaves_the_order_to_the_engine(store: LocalStore) -> None:
    before = store.query_count
    walks = store.follow(iri("mixed"), ((P, True),), limit=10)
    assert store.query_count - before == 2  # read unsorted, then sorted by the engine
    ends = [walk.nodes[-1] for walk in walks]
    text = f"SELECT ?n1 WHERE {{ <{EX}mixed> <{P.value}> ?n1 }} ORDER BY ?n1 LIMIT 10"
    expected = [row["n1"] for row in store._select_text("follow_1", text)]
    assert len(ends) == 5 and [str(e) for e in ends] == [str(e) for e in expected]


def engine_neighbours(kg: LocalStore, node: NamedNode, limit: int) -> list[tuple[str, str]]:
    """The neighbours the engine's own ORDER BY gives (out, then in), as the templates
    read them before the sort moved here."""
    found = []
    for side, keys in (("out", ("p", "o")), ("in", ("p", "s"))):
        text = kg.templates.render(
            f"neighbors_{side}", entity=node, window=2000, **kg._common_bindings()
        )
        wrapped = kg.templates.render("ordered", query=text, keys=keys, limit=limit)
        rows = kg._select_text(f"neighbors_{side}", wrapped)
        found += [(str(row["p"]), str(row[keys[1]])) for row in rows]
    return found[:limit]


@pytest.mark.parametrize("name", ["start", "mixed", "n_random"])
@pytest.mark.parametrize("limit", [3, 100])
def test_neighbours_sorted_here_are_the_engines(store: LocalStore, name: str, limit: int) -> None:
    node = iri(name) if name != "n_random" else next(iter(store.neighbors(iri("start")))).object
    assert isinstance(node, NamedNode)
    texts: list[str] = []
    select_text = store._select_text

    def recorded(template: str, text: str) -> list[dict[str, Any]]:
        texts.append(text)
        return select_text(template, text)

    setattr(store, "_select_text", recorded)  # noqa: B010 (this instance only)
    try:
        triples = store.neighbors(node, direction="out", limit=limit)
    finally:
        delattr(store, "_select_text")
    # every end an IRI: sorted here; a literal or blank node: by the engine
    ordered = [t for t in texts if "ORDER BY" in t]
    assert bool(ordered) == (name == "mixed"), texts
    both = store.neighbors(node, limit=limit)
    found = [(str(t.predicate), str(t.object if t.subject == node else t.subject)) for t in both]
    assert found and found == engine_neighbours(store, node, limit)
    assert [t.object for t in triples] == [t.object for t in both if t.subject == node][:limit]


@pytest.mark.parametrize("hops", [1, 2, 3])
@pytest.mark.parametrize("limit", [4, 1000])
def test_paths_sorted_here_are_the_engines(
    store: LocalStore, hops: int, limit: int, monkeypatch: pytest.MonkeyPatch
) -> None:
    rng = random.Random(hops * 100 + limit)
    nodes = sorted({t.object.value for t in store.neighbors(iri("start"), limit=100)})
    pairs = [(iri("start"), NamedNode(rng.choice(nodes))) for _ in range(3)]
    pairs += [(NamedNode(rng.choice(nodes)), NamedNode(rng.choice(nodes))) for _ in range(5)]
    here = [store.paths(a, b, max_hops=hops, limit=limit) for a, b in pairs]
    assert any(len(found) > (1 if hops > 1 else 0) for found in here)
    monkeypatch.setattr(ordered_rows.Ordering, "sorted", lambda self, rows: None)
    before = store.query_count
    engine = [store.paths(a, b, max_hops=hops, limit=limit) for a, b in pairs]
    assert store.query_count > before
    assert here == engine


def test_a_descending_boolean_key_sorts_as_the_engine() -> None:
    true, false = Literal(True), Literal(False)
    rows = [
        {"d": false, "p": iri("a")},
        {"d": true, "p": iri("b")},
        {"d": true, "p": iri("a")},
        {"d": false, "p": iri("c")},
    ]
    order = Ordering(("-d", "p"), limit=3)
    assert [(r["d"], r["p"]) for r in order.sorted(rows) or []] == [
        (true, iri("a")),
        (true, iri("b")),
        (false, iri("a")),
    ]
    assert Ordering(("d",), 9).sorted([{"d": true}, {"d": Literal("x")}]) is None


def test_an_endpoint_sorts_in_the_engine_and_agrees(oxigraph_server: str) -> None:
    endpoint = SparqlEndpoint(oxigraph_server, profile="generic", name="films", timeout=20)
    local = LocalStore(profile="generic")
    local.load([films_path()])
    directed = (NamedNode("http://example.org/film/directedBy"), False)
    start = NamedNode("http://example.org/film/Cameron")
    starring = (NamedNode("http://example.org/film/starring"), True)
    for steps in [(directed,), (directed, starring)]:
        remote = [walk.nodes for walk in endpoint.follow(start, steps, limit=3)]
        assert remote and remote == [walk.nodes for walk in local.follow(start, steps, limit=3)]


def test_a_negative_walk_limit_is_refused(store: LocalStore) -> None:
    with pytest.raises(BadRequest, match="at least 0"):
        store.follow(iri("start"), ((P, True),), limit=-1)
    assert store.follow(iri("start"), ((P, True),), limit=0) == []


def test_the_ordering_template_takes_only_rendered_templates_without_a_prologue() -> None:
    templates = TemplateSet()
    with pytest.raises(ConfigError, match="rendered template"):
        templates.render("ordered", query="SELECT ?n1 WHERE { ?n1 ?p ?o }", keys=("n1",), limit=1)
    with pytest.raises(ConfigError, match="PREFIX"):
        text = Rendered("PREFIX ex: <http://e/>\nSELECT ?n1 WHERE { ?n1 ex:p ?o }")
        templates.render("ordered", query=text, keys=("n1",), limit=1)
    with pytest.raises(ConfigError, match="names"):
        text = Rendered("SELECT ?n1 WHERE { ?n1 ?p ?o }")
        templates.render("ordered", query=text, keys=("n1 } #",), limit=1)


def test_a_boolean_of_another_lexical_form_leaves_the_order_to_the_engine() -> None:
    boolean = NamedNode("http://www.w3.org/2001/XMLSchema#boolean")
    rows = [{"d": Literal("false", datatype=boolean)}, {"d": Literal("TRUE", datatype=boolean)}]
    assert Ordering(("d",), 2).sorted(rows) is None
    store = LocalStore(profile="generic")
    store.load_text(
        f'<urn:a> <urn:flag> "TRUE"^^<{boolean.value}> .\n'
        f'<urn:a> <urn:flag> "false"^^<{boolean.value}> .\n',
        name="flags.nt",
    )
    engine = "SELECT ?o WHERE { <urn:a> <urn:flag> ?o } ORDER BY ?o LIMIT 1"
    expected = [str(row["o"]) for row in store._select_text("follow_1", engine)]
    found = store.neighbors(NamedNode("urn:a"), direction="out", limit=1)
    assert [str(t.object) for t in found] == expected
