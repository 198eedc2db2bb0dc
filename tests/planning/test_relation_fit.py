"""The relation gap: how much better a relation the graph holds reads as the question
than the relations of the evidence. It must not depend on what was asked before."""

from __future__ import annotations

from pathlib import Path

import pytest
from pyoxigraph import NamedNode

from middleware.kg.backends.endpoint import SparqlEndpoint
from middleware.kg.backends.local import LocalStore
from middleware.planning.relation_fit import RelationFit, graph_relations
from middleware.text.embeddings import SentenceEncoder
from middleware.text.verbalize import Verbalizer

EX = "http://example.org/"
FILMS = (
    "@prefix ex: <http://example.org/> .\n"
    "@prefix rdfs: <http://www.w3.org/2000/01/rdf-schema#> .\n"
    'ex:heat ex:directedBy ex:mann ; ex:genre ex:crime ; rdfs:label "Heat" .\n'
    'ex:alien ex:directedBy ex:scott ; ex:genre ex:horror ; rdfs:label "Alien" .\n'
)


@pytest.fixture(scope="module")
def minilm() -> SentenceEncoder:
    return SentenceEncoder()


def films(tmp_path: Path) -> LocalStore:
    store = LocalStore(tmp_path / "films", profile="generic")  # a profile with no relations
    store.load_text(FILMS, name="films.ttl")
    return store


def test_the_gap_reads_the_graphs_relations_on_the_first_question(
    tmp_path: Path, minilm: SentenceEncoder
) -> None:
    fit = RelationFit(lambda: minilm, Verbalizer(films(tmp_path)))
    assert not fit.given  # nothing from the profile: the graph's own relations decide
    gap = fit.gap("Who directed Heat?", "Heat", {EX + "genre"})
    assert gap > 0.05  # "directed by" reads far better than "genre"
    assert fit.gap("Who directed Heat?", "Heat", {EX + "directedBy"}) == 0.0


def test_the_gap_does_not_depend_on_earlier_questions(
    tmp_path: Path, minilm: SentenceEncoder
) -> None:
    store = films(tmp_path)
    fresh = RelationFit(lambda: minilm, Verbalizer(store))
    used = RelationFit(lambda: minilm, Verbalizer(store))
    # an earlier answer's evidence held a relation the graph does not (another source's)
    used.gap("Who made Heat?", "Heat", {EX + "director"})
    question = ("What genre is Alien?", "Alien", {EX + "directedBy"})
    assert used.gap(*question) == fresh.gap(*question)
    assert used.ranking("What genre is Alien?", "Alien") == fresh.ranking(
        "What genre is Alien?", "Alien"
    )


def test_a_load_adds_its_relations(tmp_path: Path, minilm: SentenceEncoder) -> None:
    store = films(tmp_path)
    fit = RelationFit(lambda: minilm, Verbalizer(store))
    before = [iri for iri, _ in fit.ranking("Who composed the music of Heat?", "Heat")]
    assert EX + "composer" not in before
    store.load_text(
        "@prefix ex: <http://example.org/> .\nex:heat ex:composer ex:goldenthal .\n",
        name="more.ttl",
    )
    after = [iri for iri, _ in fit.ranking("Who composed the music of Heat?", "Heat")]
    assert after[0] == EX + "composer"


def test_an_endpoint_is_not_asked_for_its_predicates(
    oxigraph_server: str, minilm: SentenceEncoder
) -> None:
    endpoint = SparqlEndpoint(oxigraph_server, profile="generic")
    scans: list[str] = []

    def vocabulary() -> list[NamedNode]:
        scans.append("scan")  # a large endpoint's scan may run to its timeout
        return []

    endpoint.relation_vocabulary = vocabulary  # type: ignore[method-assign]
    fit = RelationFit(lambda: minilm, Verbalizer(endpoint))
    assert graph_relations(endpoint) == set()
    # read on the evidence's relations alone: the same gap however often it is asked
    held = {EX + "genre"}
    assert fit.gap("Who directed Heat?", "Heat", held) == fit.gap(
        "Who directed Heat?", "Heat", held
    )
    assert scans == []
