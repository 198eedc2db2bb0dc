"""Relation steps in a local store: read from a window of edges, or probed predicate by
predicate when a hub fills the window; the same steps either way as reading every edge."""

from __future__ import annotations

import pytest
from pyoxigraph import NamedNode

from middleware.kg import walks
from middleware.kg.backends.local import LocalStore
from middleware.testing.graphs import ex, films_path
from middleware.testing.observed import ObservedStore

NODES = ["Titanic", "Cameron", "Winslet", "DiCaprio", "Nolan", "Inception", "Avatar"]


class TemplateLog(ObservedStore):
    """A store that keeps the first comment line of each query it runs."""

    seen: list[str]

    def before(self, sparql: str) -> None:
        self.seen.append(sparql.splitlines()[0])


@pytest.fixture
def films() -> TemplateLog:
    store = TemplateLog(profile="generic")
    store.load([films_path()])
    store.seen = []
    return store


def every_edge(store: LocalStore, nodes: list[NamedNode]) -> set[tuple[NamedNode, bool]]:
    skipped = list(store.profile.skipped_predicates)
    rows = store.run_template("relation_steps", nodes=nodes, limit=1000, skipped=skipped)
    return {(r["p"], r["forward"].value == "true") for r in rows}  # type: ignore[misc, union-attr]


@pytest.mark.parametrize("window", [20_000, 3])
def test_the_steps_are_those_of_every_edge(
    films: TemplateLog, window: int, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(walks, "STEPS_WINDOW", window)
    for name in NODES:
        found = films.relation_steps([ex(name)])
        assert set(found) == every_edge(films, [ex(name)]), name
    together = [ex(n) for n in NODES]
    assert set(films.relation_steps(together)) == every_edge(films, together)
    probed = any("probing each predicate" in line for line in films.seen)
    assert probed == (window == 3)  # a filled window, and only then, sends it to the probes


def test_the_predicates_are_read_once_per_version(
    films: TemplateLog, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(walks, "STEPS_WINDOW", 1)
    films.relation_steps([ex("Titanic")])
    films.relation_steps([ex("Cameron")])
    assert sum("The predicates of the graph" in line for line in films.seen) == 1
    films.load_text(
        "<http://example.org/film/X> <http://example.org/film/newRel> <http://example.org/film/Titanic> .\n",
        name="x.nt",
    )
    assert (NamedNode("http://example.org/film/newRel"), False) in films.relation_steps(
        [ex("Titanic")]
    )
