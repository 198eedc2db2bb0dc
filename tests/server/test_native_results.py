"""Query executors write small SELECT results natively, within the same row cap."""

from __future__ import annotations

import json
from dataclasses import astuple

import pyoxigraph as ox
import pytest

from middleware.kg.backends.local import LocalStore
from middleware.serialize.native_results import write_native
from middleware.serialize.sparql_results import write_result
from middleware.serialize.written_results import write_query

EX = "http://ex.org/"


@pytest.fixture
def store() -> LocalStore:
    local = LocalStore(profile="generic")
    oxi = local.oxigraph
    for i in range(5):
        oxi.add(ox.Quad(ox.NamedNode(f"{EX}s"), ox.NamedNode(f"{EX}p"), ox.Literal(f"v{i}")))
    oxi.add(ox.Quad(ox.NamedNode(f"{EX}t"), ox.NamedNode(f"{EX}p"), ox.Literal("<result>")))
    oxi.add(ox.Quad(ox.NamedNode(f"{EX}t"), ox.NamedNode(f"{EX}q"), ox.Literal("x", language="en")))
    return local


def test_a_small_select_is_the_same_result_as_row_by_row(store: LocalStore) -> None:
    query = "SELECT ?p ?o WHERE { ?s ?p ?o } ORDER BY ?o"
    body, kind, truncated = astuple(write_query(store, query, "json", 5.0, 100, None))
    expected = write_result(store._execute(query, 5.0, 100), "json")
    assert (kind, truncated) == ("select", False)
    assert json.loads(body) == json.loads(expected)


def test_a_result_past_the_row_cap_is_cut_and_marked(store: LocalStore) -> None:
    body, kind, truncated = astuple(
        write_query(store, "SELECT ?o { ?s ?p ?o }", "json", 5.0, 3, None)
    )
    assert (kind, truncated) == ("select", True)
    assert len(json.loads(body)["results"]["bindings"]) == 3


def test_empty_rows_count_against_the_cap() -> None:
    # the shortest rows ("{}") are where a byte count could hide a row count
    query = "SELECT ?x { VALUES ?x { UNDEF UNDEF UNDEF UNDEF } }"
    assert write_native(ox.Store().query(query), "json", max_rows=3) is None
    assert write_native(ox.Store().query(query), "json", max_rows=4) is not None


def test_xml_rows_are_counted_even_with_tags_in_values(store: LocalStore) -> None:
    query = f"SELECT ?o {{ <{EX}t> ?p ?o }}"
    assert write_native(store.engine_result(query), "xml", max_rows=1) is None
    body = write_native(store.engine_result(query), "xml", max_rows=2)
    assert body is not None and body.count(b"<result>") == 2


def test_a_result_past_the_byte_cap_is_left_to_the_row_path(store: LocalStore) -> None:
    result = store.engine_result("SELECT ?o { ?s ?p ?o }")
    assert write_native(result, "json", max_rows=None, byte_cap=64) is None
    body, _, truncated = astuple(
        write_query(store, "SELECT ?o { ?s ?p ?o }", "json", 5.0, None, None)
    )
    assert not truncated and len(json.loads(body)["results"]["bindings"]) == 7


@pytest.mark.parametrize(
    ("query", "fmt", "kind"),
    [
        ("ASK { ?s ?p ?o }", "json", "ask"),
        ("CONSTRUCT WHERE { ?s ?p ?o }", "ntriples", "graph"),
        ("SELECT ?o { ?s ?p ?o }", "tsv", "select"),
        ("SELECT ?o { ?s ?p ?o }", "csv", "select"),
    ],
)
def test_other_results_and_formats_take_the_row_path(
    store: LocalStore, query: str, fmt: str, kind: str
) -> None:
    assert write_native(store.engine_result(query), fmt, max_rows=10) is None
    body, got_kind, _ = astuple(write_query(store, query, fmt, 5.0, 10, None))
    assert got_kind == kind
    assert body == write_result(store._execute(query, 5.0, 10), fmt)


def test_a_syntax_error_is_a_bad_request(store: LocalStore) -> None:
    from middleware.errors import BadRequest

    with pytest.raises(BadRequest, match="not a valid SPARQL query"):
        write_query(store, "SELECT ?o {", "json", 5.0, 10, None)
