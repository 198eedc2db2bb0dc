"""The W3C SPARQL 1.1 query evaluation suites through /sparql (middleware/testing/).

The full suites run when ``KGMW_RDF_TESTS`` names a checkout of w3c/rdf-tests (the
figures are in benchmarks/README.md): every test the engine passes must pass through
the proxy too, in every result format. A small suite written here runs always, so the
runner and its comparisons are checked without the checkout.
"""

from __future__ import annotations

import os
from pathlib import Path

import pyoxigraph as ox
import pytest

from middleware.testing import w3c_results
from middleware.testing.w3c_manifest import query_cases
from middleware.testing.w3c_queries import run_suites
from middleware.testing.w3c_results import Outcome, same

RDF_TESTS = os.environ.get("KGMW_RDF_TESTS")
EX = "http://example.org/"
MANIFEST = """\
@prefix : <#> .
@prefix rdf: <http://www.w3.org/1999/02/22-rdf-syntax-ns#> .
@prefix mf: <http://www.w3.org/2001/sw/DataAccess/tests/test-manifest#> .
@prefix qt: <http://www.w3.org/2001/sw/DataAccess/tests/test-query#> .
<> a mf:Manifest ; mf:entries ( :select :ask :askrs :construct :graphs :csv :wrong :service ) .
:select a mf:QueryEvaluationTest ;
    mf:action [ qt:query <select.rq> ; qt:data <data.ttl> ] ; mf:result <select.srx> .
:ask a mf:QueryEvaluationTest ;
    mf:action [ qt:query <ask.rq> ; qt:data <data.ttl> ] ; mf:result <ask.srj> .
:askrs a mf:QueryEvaluationTest ;
    mf:action [ qt:query <ask.rq> ; qt:data <data.ttl> ] ; mf:result <ask.ttl> .
:construct a mf:QueryEvaluationTest ;
    mf:action [ qt:query <construct.rq> ; qt:data <data.ttl> ] ; mf:result <construct.ttl> .
:graphs a mf:QueryEvaluationTest ;
    mf:action [ qt:query <graphs.rq> ; qt:graphData <data.ttl> ] ; mf:result <graphs.ttl> .
:csv a mf:CSVResultFormatTest ;
    mf:action [ qt:query <select.rq> ; qt:data <data.ttl> ] ; mf:result <select.csv> .
:wrong a mf:QueryEvaluationTest ;
    mf:action [ qt:query <ask.rq> ] ; mf:result <ask.srj> .
:service a mf:QueryEvaluationTest ;
    mf:action [ qt:query <service.rq> ] ; mf:result <ask.srj> .
"""
FILES = {
    "data.ttl": f'<{EX}a> <{EX}p> "1.0"^^<http://www.w3.org/2001/XMLSchema#decimal>, _:x .\n',
    "select.rq": f"SELECT ?o WHERE {{ <{EX}a> <{EX}p> ?o }}",
    "select.srx": """<?xml version="1.0"?>
<sparql xmlns="http://www.w3.org/2005/sparql-results#"><head><variable name="o"/></head>
<results>
<result><binding name="o"><bnode>r1</bnode></binding></result>
<result><binding name="o">
<literal datatype="http://www.w3.org/2001/XMLSchema#decimal">1.00</literal></binding></result>
</results></sparql>""",
    "select.csv": "o\r\n1\r\n_:b7\r\n",  # CSV keeps no type: the engine's spelling
    "ask.rq": f"ASK {{ <{EX}a> <{EX}p> ?o }}",
    "ask.srj": '{"head": {}, "boolean": true}',
    "ask.ttl": "[] a <http://www.w3.org/2001/sw/DataAccess/tests/result-set#ResultSet> ;\n"
    "   <http://www.w3.org/2001/sw/DataAccess/tests/result-set#boolean> true .\n",
    "construct.rq": f"CONSTRUCT {{ <{EX}a> <{EX}q> ?o }} WHERE {{ <{EX}a> <{EX}p> ?o }}",
    "construct.ttl": f"<{EX}a> <{EX}q> 1.0, _:y .\n",
    "graphs.rq": "SELECT ?g (COUNT(*) AS ?n) WHERE { GRAPH ?g { ?s ?p ?o } } GROUP BY ?g",
    "graphs.ttl": """@prefix rs: <http://www.w3.org/2001/sw/DataAccess/tests/result-set#> .
[] a rs:ResultSet ; rs:resultVariable "g", "n" ;
   rs:solution [ rs:binding [ rs:variable "g" ; rs:value <data.ttl> ] ,
                            [ rs:variable "n" ; rs:value 2 ] ] .
""",
    "service.rq": "ASK { SERVICE <http://example.org/sparql> { ?s ?p ?o } }",
}


@pytest.fixture(scope="module")
def small_suite(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("rdf-tests")
    folder = root / "sparql/sparql11/demo"
    folder.mkdir(parents=True)
    (folder / "manifest.ttl").write_text(MANIFEST, encoding="utf-8")
    for name, text in FILES.items():
        (folder / name).write_text(text, encoding="utf-8")
    return root


def test_the_manifest_is_read(small_suite: Path) -> None:
    cases = {case.id: case for case in query_cases(small_suite)}
    names = MANIFEST.split("( ")[1].split(" )")[0].replace(":", "").split()
    assert list(cases) == [f"demo/{name}" for name in names]
    assert cases["demo/csv"].kind == "csv"
    assert cases["demo/service"].skip == "needs SERVICE endpoints"
    (graph,) = cases["demo/graphs"].graphs
    assert graph[2] == "https://w3c.github.io/rdf-tests/sparql/sparql11/demo/data.ttl"


@pytest.mark.parametrize("on_disk", [False, True], ids=["in memory", "in an executor"])
def test_a_small_suite_on_the_engine_and_through_the_proxy(
    small_suite: Path, on_disk: bool
) -> None:
    report = run_suites(small_suite, on_disk=on_disk)
    verdicts = {v.case.id: v for v in report.verdicts}
    assert [case.id for case in report.skipped] == ["demo/service"]
    wrong = verdicts.pop("demo/wrong")  # no data: the expected "true" is wrong
    assert wrong.engine.startswith("different") and wrong.proxy.startswith("as application/")
    assert {name: (v.engine, v.proxy) for name, v in verdicts.items()} == {
        name: ("pass", "pass") for name in verdicts
    }
    assert report.regressions == []
    assert all(v.identical for v in report.verdicts)


def solutions(*rows: dict[str, ox.NamedNode | ox.BlankNode | ox.Literal]) -> Outcome:
    return Outcome("solutions", rows=tuple(rows))


def test_solutions_are_compared_as_a_multiset_up_to_blank_node_names() -> None:
    a, b = ox.NamedNode(f"{EX}a"), ox.NamedNode(f"{EX}b")
    x, y = ox.BlankNode("x"), ox.BlankNode("y")
    assert same(solutions({"v": a}, {"v": b}), solutions({"v": b}, {"v": a}))
    assert not same(solutions({"v": a}, {"v": a}), solutions({"v": a}))
    assert not same(solutions({"v": a}, {"v": a}), solutions({"v": a}, {"v": b}))
    assert same(solutions({"v": x, "w": x}), solutions({"v": y, "w": y}))
    assert not same(solutions({"v": x, "w": x}), solutions({"v": x, "w": y}))
    assert not same(solutions({"v": a}), solutions({"w": a}))


def test_numbers_compare_by_value_unless_strict() -> None:
    decimal = ox.NamedNode("http://www.w3.org/2001/XMLSchema#decimal")
    one, one_point_oh = ox.Literal("1", datatype=decimal), ox.Literal("1.0", datatype=decimal)
    assert same(solutions({"v": one}), solutions({"v": one_point_oh}))
    assert not same(solutions({"v": one}), solutions({"v": one_point_oh}), strict=True)
    assert not same(solutions({"v": ox.Literal("1")}), solutions({"v": one}))
    text = ox.Literal("01", datatype=ox.NamedNode("http://example.org/type"))
    assert not same(
        solutions({"v": text}), solutions({"v": ox.Literal("1", datatype=text.datatype)})
    )


def test_a_response_is_read_by_its_media_type() -> None:
    body = b'{"head": {"vars": ["v"]}, "results": {"bindings": [{"v": {"type": "bnode", "value": "q"}}]}}'
    outcome = w3c_results.response(body, "application/sparql-results+json; charset=utf-8")
    assert same(outcome, solutions({"v": ox.BlankNode("z")}))
    graph = w3c_results.response(b"<http://e/a> <http://e/p> _:b .\n", "application/n-triples")
    assert graph.kind == "graph" and len(graph.triples) == 1


@pytest.mark.skipif(not RDF_TESTS, reason="set KGMW_RDF_TESTS to a checkout of w3c/rdf-tests")
@pytest.mark.slow
def test_the_w3c_suites_pass_through_the_proxy_wherever_the_engine_passes() -> None:
    report = run_suites(Path(RDF_TESTS or "."))
    assert len(report.verdicts) > 250
    assert {v.case.id: v.proxy for v in report.regressions} == {}
    assert [v.case.id for v in report.verdicts if not v.identical] == []
