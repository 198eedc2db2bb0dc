"""Property-based: hostile labels and IRIs never break or reshape a query."""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from pyoxigraph import Literal, NamedNode, Quad
from rdflib.plugins.sparql import prepareQuery

from middleware.errors import BadRequest, NotFound
from middleware.kg.backends.endpoint import SparqlEndpoint
from middleware.kg.backends.local import LocalStore
from middleware.kg.sparql_templates import TemplateSet
from middleware.text.linking import EntityLinker

RDFS_LABEL = NamedNode("http://www.w3.org/2000/01/rdf-schema#label")
P = NamedNode("http://e.org/p")
NASTY = "\"'\\\n\r\t}{#><|^`?$.;,()[] é中文😀\u0000\u200b"
PAYLOADS = [
    '"} ; DROP ALL ; {"',
    '" . ?s ?p ?o . FILTER("',
    '\\" } UNION { ?s ?p ?o } #',
    "'''",
    '"""',
    "> <http://evil.org/x",
]
texts = st.one_of(
    st.text(
        alphabet=st.sampled_from(NASTY) | st.characters(codec="utf-8"), min_size=1, max_size=60
    ),
    st.sampled_from(PAYLOADS),
    st.text(alphabet=NASTY, min_size=2000, max_size=3000),
)
iri_tails = st.one_of(
    st.text(alphabet=st.sampled_from(NASTY + "abc/%:@!$&*+=~-_"), min_size=0, max_size=40),
    st.sampled_from(PAYLOADS),
    st.text(alphabet="ab%/", min_size=3000, max_size=5000),
)
FAST = settings(
    max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)


def triple_patterns(query: str) -> int:
    """Number of triple patterns in a parsed query (an injected pattern would add one)."""
    count = 0

    def walk(node: Any) -> None:
        nonlocal count
        if isinstance(node, dict):
            if node.get("triples") is not None and getattr(node, "name", "") == "BGP":
                count += len(node["triples"])
            for value in node.values():
                walk(value)
        elif isinstance(node, list | tuple):
            for value in node:
                walk(value)

    walk(prepareQuery(query).algebra)
    return count


def store_with_label(label: str) -> LocalStore:
    store = LocalStore(profile="generic")
    target, decoy = NamedNode("http://e.org/target"), NamedNode("http://e.org/decoy")
    store._store.add(Quad(target, RDFS_LABEL, Literal(label)))
    store._store.add(Quad(decoy, RDFS_LABEL, Literal("decoy")))
    store._store.add(Quad(target, P, decoy))
    return store


@FAST
@given(label=texts)
def test_hostile_labels_through_every_label_operation(label: str) -> None:
    store = store_with_label(label)
    target = NamedNode("http://e.org/target")
    assert store.labels([target]) == {target: label}
    assert store.describe(target).label == label
    if label.strip():
        found = store.search(label, limit=5)
        assert found[0].iri == target
        assert all(label.strip().lower() in (e.label or "").lower() for e in found)
        if "\x00" not in label and len(label.strip()) <= 500:
            linked = EntityLinker(store).link(label)
            assert linked and linked[0].iri == target
    else:
        with pytest.raises(BadRequest):
            store.search(label)


@FAST
@given(text=texts)
def test_hostile_text_keeps_the_query_shape(text: str) -> None:
    templates = TemplateSet()
    names = [RDFS_LABEL]
    baseline = templates.render(
        "search",
        text=Literal("x"),
        limit=5,
        names=names,
        language=Literal("en"),
        phrase=Literal('"x"'),
    )
    rendered = templates.render(
        "search",
        text=Literal(text),
        limit=5,
        names=names,
        language=Literal("en"),
        phrase=Literal(f'"{text}"'),
    )
    assert triple_patterns(rendered) == triple_patterns(baseline)


@FAST
@given(tail=iri_tails)
def test_hostile_iris_are_bound_safely_or_refused(tail: str) -> None:
    store = store_with_label("x")
    text = "http://e.org/" + tail
    try:
        node = NamedNode(text.strip())  # to_iri strips surrounding whitespace, as users expect
    except ValueError:
        node = None
    operations = [
        lambda: store.neighbors(text),
        lambda: store.paths(text, "http://e.org/target", max_hops=3),
        lambda: store.degree(text),
        lambda: store.labels([NamedNode(text)]) if node else store.neighbors(text),
    ]
    if node is None or len(text) > 4096:
        for operation in operations:
            with pytest.raises(BadRequest):
                operation()
        return
    assert store.neighbors(text) == []
    assert store.paths(text, "http://e.org/target", max_hops=3) == []
    assert store.degree(text) == 0
    with pytest.raises(NotFound):
        store.describe(text)
    rendered = store.templates.render(
        "neighbors_out", entity=node, limit=5, window=5, skipped=[RDFS_LABEL]
    )
    baseline = store.templates.render(
        "neighbors_out", entity=NamedNode("http://e.org/x"), limit=5, window=5, skipped=[RDFS_LABEL]
    )
    assert triple_patterns(rendered) == triple_patterns(baseline)


@settings(
    max_examples=25, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(text=texts)
def test_hostile_text_against_a_real_endpoint(oxigraph_server: str, text: str) -> None:
    endpoint = SparqlEndpoint(oxigraph_server, timeout=10)
    if text.strip():
        found = endpoint.search(text, limit=3)
        assert all(text.strip().lower() in (e.label or "").lower() for e in found)
    hostile_iri = "http://e.org/" + "".join(c for c in text if c.isalnum())[:50]
    assert endpoint.neighbors(hostile_iri) == []
