"""`inspect`: what an unknown graph looks like, and the profile it suggests."""

from __future__ import annotations

from pyoxigraph import NamedNode

from middleware.kg.backends.endpoint import SparqlEndpoint
from middleware.kg.backends.local import LocalStore
from middleware.kg.inspect import inspect_graph
from middleware.kg.profiles import load_profile

RDF_TYPE = "http://www.w3.org/1999/02/22-rdf-syntax-ns#type"
RDFS_LABEL = "http://www.w3.org/2000/01/rdf-schema#label"
FOAF_NAME = "http://xmlns.com/foaf/0.1/name"

PEOPLE = """\
@prefix foaf: <http://xmlns.com/foaf/0.1/> .
@prefix ex: <http://e.org/> .
ex:alice a foaf:Person ; foaf:name "Alice"@en , "Alicia"@es ; ex:knows ex:bob ; ex:age 31 .
ex:bob a foaf:Person ; foaf:name "Bob"@en ; ex:knows ex:carol ; ex:age 40 .
ex:carol a foaf:Person ; foaf:name "Carol"@en ; ex:worksAt ex:acme ; ex:age 25 .
ex:dave a foaf:Person ; foaf:name "Dave"@en ; ex:worksAt ex:acme .
ex:acme a ex:Company ; foaf:name "Acme"@en .
"""


def _store(text: str, name: str = "g.ttl") -> LocalStore:
    store = LocalStore()
    store.load_text(text, name=name)
    return store


def test_tiny_graph_suggests_rdfs_label() -> None:
    store = _store(
        '<urn:x:a> <http://www.w3.org/2000/01/rdf-schema#label> "Alpha" .\n'
        "<urn:x:a> <urn:x:knows> <urn:x:b> .\n"
        '<urn:x:b> <http://www.w3.org/2000/01/rdf-schema#label> "Beta" .\n',
        name="tiny.nt",
    )
    report = inspect_graph(store)
    assert report.sizes == {"triples": 3, "subjects": 2, "predicates": 2, "capped": False}
    assert report.suggested["label_predicates"] == [RDFS_LABEL]
    assert [r["predicate"] for r in report.relations] == ["urn:x:knows"]


def test_people_graph_names_types_hubs_and_languages() -> None:
    report = inspect_graph(_store(PEOPLE))
    assert report.suggested["label_predicates"] == [FOAF_NAME]
    assert report.suggested["type_predicates"] == [RDF_TYPE]
    assert report.suggested["language"] == "en"
    assert report.languages[0] == {"language": "en", "count": 5}
    assert {"language": "es", "count": 1} in report.languages
    top = report.hubs[0]
    assert (top["predicate"], top["object"], top["count"]) == (
        RDF_TYPE,
        "http://xmlns.com/foaf/0.1/Person",
        4,
    )
    numeric = [c for c in report.label_candidates if c["predicate"] == "http://e.org/age"]
    assert numeric and not numeric[0]["suggested"]  # numbers are not names


def test_sample_bounds_the_work() -> None:
    report = inspect_graph(_store(PEOPLE), sample=5)
    assert report.sizes["triples"] == 5 and report.sizes["capped"] is True


def test_inspect_an_endpoint(oxigraph_server: str) -> None:
    report = inspect_graph(SparqlEndpoint(oxigraph_server))
    assert report.suggested["label_predicates"][0] == RDFS_LABEL
    assert report.suggested["language"] == "en"
    assert "http://example.org/film/starring" in [r["predicate"] for r in report.relations]


def test_generic_profile_types_are_not_hops_and_names_are_labels() -> None:
    generic = load_profile("generic")
    assert NamedNode(RDF_TYPE) in generic.type_predicates
    assert NamedNode(RDF_TYPE) in generic.skipped_predicates
    labels = {p.value for p in generic.label_predicates}
    assert {
        FOAF_NAME,
        "http://schema.org/name",
        "http://www.w3.org/2004/02/skos/core#prefLabel",
    } <= labels
    store = _store(PEOPLE)
    alice, dave = NamedNode("http://e.org/alice"), NamedNode("http://e.org/dave")
    assert store.labels([dave]) == {dave: "Dave"}
    assert all(t.predicate.value != RDF_TYPE for t in store.neighbors(alice))
    # alice and dave share only the class foaf:Person: no path through the class hub
    assert store.paths(alice, dave, max_hops=2) == []
