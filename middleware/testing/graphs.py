"""One behaviour suite for every KnowledgeGraph backend.

A backend's test class inherits ``GraphConformance`` and provides a ``graph`` fixture
holding the films graph (``films_path()``, generic profile)::

    class TestMyBackend(GraphConformance):
        @pytest.fixture(scope="class")
        @classmethod
        def graph(cls) -> MyBackend:
            return MyBackend.from_file(films_path())
"""

from __future__ import annotations

from pathlib import Path

import pytest
from pyoxigraph import Literal, NamedNode

from middleware.errors import BadRequest, NotFound, ReadOnlyViolation
from middleware.kg.base import KnowledgeGraph, Triple
from middleware.planning.path_search import budgeted_select
from middleware.support.resources import data_file
from middleware.text.linking import EntityLinker

EX = "http://example.org/film/"


def films_path() -> Path:
    """The films graph every conformance suite runs on (Turtle, 30-odd triples)."""
    return data_file("films.ttl")


def ex(name: str) -> NamedNode:
    return NamedNode(EX + name)


class GraphConformance:
    """Subclasses provide a ``graph`` fixture holding ``films_path()`` (generic profile)."""

    def test_satisfies_protocol(self, graph: KnowledgeGraph) -> None:
        assert isinstance(graph, KnowledgeGraph)

    # neighbors --------------------------------------------------------------------------
    def test_neighbors_out_skip_labels_and_descriptions(self, graph: KnowledgeGraph) -> None:
        triples = graph.neighbors(ex("Titanic"), direction="out")
        assert {(t.predicate, t.object) for t in triples} == {
            (ex("directedBy"), ex("Cameron")),
            (ex("starring"), ex("DiCaprio")),
            (ex("starring"), ex("Winslet")),
            (
                ex("releaseYear"),
                Literal("1997", datatype=NamedNode("http://www.w3.org/2001/XMLSchema#gYear")),
            ),
        }
        assert all(t.subject == ex("Titanic") and t.source == graph.name for t in triples)

    def test_neighbors_in(self, graph: KnowledgeGraph) -> None:
        triples = graph.neighbors(ex("DiCaprio"), direction="in")
        assert sorted(t.subject.value for t in triples) == [
            EX + "Inception",
            EX + "RevolutionaryRoad",
            EX + "Titanic",
        ]
        assert all(t.object == ex("DiCaprio") for t in triples)

    def test_neighbors_both_outgoing_first_and_limited(self, graph: KnowledgeGraph) -> None:
        both = graph.neighbors(ex("Winslet"), direction="both")
        assert both[0].subject == ex("Winslet") and both[0].predicate == ex("marriedTo")
        assert len(both) == 3
        assert len(graph.neighbors(ex("Winslet"), limit=2)) == 2

    def test_neighbors_are_ordered_the_same_every_time(self, graph: KnowledgeGraph) -> None:
        assert graph.neighbors(ex("Titanic")) == graph.neighbors(ex("Titanic"))

    def test_neighbors_of_unknown_entity_is_empty(self, graph: KnowledgeGraph) -> None:
        assert graph.neighbors(ex("Nobody")) == []

    def test_bad_arguments(self, graph: KnowledgeGraph) -> None:
        with pytest.raises(BadRequest):
            graph.neighbors("not an iri")
        with pytest.raises(BadRequest):
            graph.neighbors(ex("Titanic"), limit=0)
        with pytest.raises(BadRequest):
            graph.neighbors(ex("Titanic"), direction="sideways")  # type: ignore[arg-type]
        with pytest.raises(BadRequest):
            graph.paths(ex("Titanic"), ex("Avatar"), max_hops=4)

    # paths ------------------------------------------------------------------------------
    def test_one_hop_path_keeps_direction(self, graph: KnowledgeGraph) -> None:
        forward = graph.paths(ex("Titanic"), ex("Cameron"), max_hops=1)
        assert [(h.triple.predicate, h.forward) for p in forward for h in p.hops] == [
            (ex("directedBy"), True)
        ]
        backward = graph.paths(ex("Cameron"), ex("Titanic"), max_hops=1)
        assert [h.forward for p in backward for h in p.hops] == [False]
        assert backward[0].nodes == (ex("Cameron"), ex("Titanic"))

    def test_two_hop_path_through_shared_director(self, graph: KnowledgeGraph) -> None:
        found = graph.paths(ex("Titanic"), ex("Avatar"), max_hops=2)
        assert len(found) == 1
        (path,) = found
        assert path.nodes == (ex("Titanic"), ex("Cameron"), ex("Avatar"))
        assert [h.forward for h in path.hops] == [True, False]
        assert path.hops[1].triple.subject == ex("Avatar")

    def test_three_hop_paths_are_simple_and_complete(self, graph: KnowledgeGraph) -> None:
        found = graph.paths(ex("Avatar"), ex("DiCaprio"), max_hops=3)
        assert {tuple(n.value[len(EX) :] for n in p.nodes) for p in found} == {
            ("Avatar", "Cameron", "Titanic", "DiCaprio"),
        }
        winslet = graph.paths(ex("Winslet"), ex("Mendes"), max_hops=3)
        lengths = [len(p) for p in winslet]
        assert lengths == sorted(lengths) and lengths[0] == 1
        for path in winslet:
            assert len(set(path.nodes)) == len(path.nodes)

    def test_paths_respect_limit_and_same_node(self, graph: KnowledgeGraph) -> None:
        assert len(graph.paths(ex("Winslet"), ex("DiCaprio"), max_hops=3, limit=2)) == 2
        assert graph.paths(ex("Titanic"), ex("Titanic")) == []

    # labels, search, degree, describe ----------------------------------------------------
    def test_labels_prefer_profile_language(self, graph: KnowledgeGraph) -> None:
        found = graph.labels([ex("Titanic"), ex("Saldana"), ex("Nobody"), Literal("x")])
        assert found[ex("Titanic")] == "Titanic"
        assert found[ex("Saldana")] == "Zoë Saldaña"
        assert ex("Nobody") not in found
        assert found[Literal("x")] == "x"

    def test_search_finds_labels_and_aliases(self, graph: KnowledgeGraph) -> None:
        assert [e.iri for e in graph.search("cameron")] == [ex("Cameron")]
        assert ex("DiCaprio") in [e.iri for e in graph.search("Leo Di")]
        assert [e.iri for e in graph.search('"hi" }')] == [ex("Quoted")]

    def test_degree(self, graph: KnowledgeGraph) -> None:
        assert graph.degree(ex("DiCaprio")) == 3
        assert graph.degree(ex("Nobody")) == 0

    def test_describe(self, graph: KnowledgeGraph) -> None:
        titanic = graph.describe(ex("Titanic"))
        assert titanic.label == "Titanic"
        assert titanic.description == "1997 film by James Cameron"
        assert graph.describe(ex("DiCaprio")).aliases == ("Leo DiCaprio",)
        with pytest.raises(NotFound):
            graph.describe(ex("Nobody"))

    # raw queries ------------------------------------------------------------------------
    def test_select_ask_construct(self, graph: KnowledgeGraph) -> None:
        rows = graph.query(
            f"SELECT ?f WHERE {{ ?f <{EX}directedBy> <{EX}Cameron> }} ORDER BY ?f"
        ).rows
        assert [r["f"] for r in rows] == [ex("Avatar"), ex("Titanic")]
        assert graph.query(f"ASK {{ <{EX}Winslet> <{EX}marriedTo> ?x }}").boolean is True
        built = graph.query(f"CONSTRUCT {{ ?f <{EX}by> ?d }} WHERE {{ ?f <{EX}directedBy> ?d }}")
        assert built.kind == "graph" and len(built.triples) == 5

    def test_updates_are_refused(self, graph: KnowledgeGraph) -> None:
        for update in (
            f"INSERT DATA {{ <{EX}a> <{EX}b> <{EX}c> }}",
            "DROP ALL",
            f"DELETE WHERE {{ <{EX}Titanic> ?p ?o }}",
            f"LOAD <{EX}data>",
            "CLEAR DEFAULT",
        ):
            with pytest.raises(ReadOnlyViolation):
                graph.query(update)
        assert graph.neighbors(ex("Titanic"))

    def test_invalid_sparql_is_a_bad_request(self, graph: KnowledgeGraph) -> None:
        with pytest.raises(BadRequest):
            graph.query("SELECT WHERE {")

    def test_query_count_is_recorded(self, graph: KnowledgeGraph) -> None:
        before = graph.thread_query_count
        graph.neighbors(ex("Titanic"))
        assert graph.thread_query_count > before

    # capabilities and checks -----------------------------------------------------------
    def test_has_triple_and_has_triples(self, graph: KnowledgeGraph) -> None:
        assert graph.has_triples()
        assert graph.has_triple(Triple(ex("Titanic"), ex("directedBy"), ex("Cameron")))
        assert not graph.has_triple(Triple(ex("Titanic"), ex("directedBy"), ex("Nolan")))

    def test_capabilities_are_declared(self, graph: KnowledgeGraph) -> None:
        capabilities = graph.capabilities
        assert isinstance(capabilities.label_index, bool)
        assert isinstance(capabilities.in_process, bool)
        assert isinstance(capabilities.templates, bool)

    def test_linking_works_as_the_capabilities_say(self, graph: KnowledgeGraph) -> None:
        """A label index (``label_index``) must list its labels; either way, a mention
        links to its entity and a folded one too."""
        linker = EntityLinker(graph)
        assert [e.iri for e in linker.link("Titanic")][:1] == [ex("Titanic")]
        assert ex("Titanic") in [e.iri for e in linker.link("titanic")]

    # relation paths -----------------------------------------------------------------------
    def test_relation_steps_leave_the_given_entities(self, graph: KnowledgeGraph) -> None:
        assert graph.relation_steps([ex("Cameron")]) == [(ex("directedBy"), False)]
        steps = graph.relation_steps([ex("Winslet"), ex("Saldana")])
        assert steps == [(ex("marriedTo"), True), (ex("starring"), False)]
        assert graph.relation_steps([ex("Nobody")]) == []

    def test_step_shares_count_the_entities_that_have_each_step(
        self, graph: KnowledgeGraph
    ) -> None:
        directors = [ex("Cameron"), ex("Nolan"), ex("Mendes")]
        shares = graph.step_shares(directors, [ex("directedBy"), ex("marriedTo")])
        assert shares == {(ex("directedBy"), False): 1.0, (ex("marriedTo"), False): 1 / 3}
        assert graph.step_shares([ex("Cameron"), ex("Nobody")], [ex("directedBy")]) == {
            (ex("directedBy"), False): 0.5
        }
        assert graph.step_shares([], [ex("directedBy")]) == {}

    def test_step_reads_count_and_read_each_relation(self, graph: KnowledgeGraph) -> None:
        """``step_sizes`` and ``step_edges`` (``kg/step_reads.py``): per relation, up
        to a cap; a read of fewer edges gives the first of a larger one's."""
        titanic = ex("Titanic")
        steps = [(ex("starring"), True), (ex("directedBy"), True), (ex("starring"), False)]
        assert graph.step_sizes(titanic, steps, cap=5) == [2, 1, 0]
        assert graph.step_sizes(titanic, steps, cap=1) == [1, 1, 0]
        both = graph.step_edges(titanic, [(steps[0], 2), (steps[1], 1), (steps[2], 3)])
        assert {t.object for t in both[0]} == {ex("DiCaprio"), ex("Winslet")}
        assert both[1] == [Triple(titanic, ex("directedBy"), ex("Cameron"), graph.name)]
        assert both[2] == []
        year = graph.step_edges(titanic, [((ex("releaseYear"), True), 1)])[0]
        assert [t.object.value for t in year] == ["1997"]  # a literal end too
        # SPARQL promises no order without ORDER BY: a store in this process keeps its
        # engine's (tests/kg/test_spread_neighbors.py); here only the counts
        first = graph.step_edges(titanic, [(steps[0], 1)])[0]
        second = graph.step_edges(titanic, [(steps[0], 5)], after=[1])[0]
        assert len(first) == len(second) == 1 and {*first, *second} <= set(both[0])
        films = graph.step_edges(ex("Winslet"), [((ex("starring"), False), 5)])[0]
        assert {t.subject for t in films} == {ex("Titanic"), ex("RevolutionaryRoad")}
        assert all(t.object == ex("Winslet") for t in films)

    def test_mining_counts_the_step_it_would_read(self, graph: KnowledgeGraph) -> None:
        """``mine_step_count.rq`` counts the sample ``mine_step.rq`` reads (less the
        walk's start) and names the wanted entities among it (``planning/reach_count.py``)."""
        if not graph.capabilities.templates:
            return  # mining walks with the graph's own follow()
        nodes, starring = [ex("Titanic"), ex("Avatar"), ex("Inception")], (ex("starring"), True)
        year = (ex("releaseYear"), True)
        for step, start, wanted in [
            (starring, ex("DiCaprio"), [ex("Winslet"), ex("Cameron")]),
            (starring, ex("Cameron"), []),
            (year, ex("Titanic"), [ex("Winslet")]),  # literal ends are counted too
        ]:
            bound = {"nodes": nodes, "step": step, "limit": 100}
            ends = {row["y"] for row in budgeted_select(graph, None, "mine_step", **bound)}
            ends -= {start}
            rows = budgeted_select(
                graph, None, "mine_step_count", start=start, wanted=wanted, **bound
            )
            assert len(rows) == 1 and int(rows[0]["reached"].value) == len(ends) > 0
            hits = rows[0].get("hits")
            found = [iri for iri in hits.value.split(" ") if iri] if hits is not None else []
            assert sorted(found) == sorted(w.value for w in wanted if w in ends)

    def test_follow_walks_a_relation_path_without_coming_back(self, graph: KnowledgeGraph) -> None:
        same_director = ((ex("directedBy"), True), (ex("directedBy"), False))
        walks = graph.follow(ex("Titanic"), same_director)
        assert [p.nodes for p in walks] == [(ex("Titanic"), ex("Cameron"), ex("Avatar"))]
        assert [h.forward for h in walks[0].hops] == [True, False]
        assert walks[0].hops[1].triple == Triple(
            ex("Avatar"), ex("directedBy"), ex("Cameron"), graph.name
        )
        directors = graph.follow(ex("Winslet"), ((ex("starring"), False), (ex("directedBy"), True)))
        assert {p.nodes[-1] for p in directors} == {ex("Cameron"), ex("Mendes")}
        co_star_films = graph.follow(
            ex("Winslet"),
            ((ex("starring"), False), (ex("starring"), True), (ex("starring"), False)),
        )
        ends = {p.nodes[-1] for p in co_star_films}
        assert ends == {ex("Titanic"), ex("RevolutionaryRoad"), ex("Inception")}
        assert all(len(set(p.nodes)) == 4 for p in co_star_films)
        assert len(graph.follow(ex("Winslet"), ((ex("starring"), False),), limit=1)) == 1
        with pytest.raises(BadRequest):
            graph.follow(ex("Titanic"), ())
