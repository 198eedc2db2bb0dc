"""The conformance suites and Virtuoso's habits against a real Virtuoso server
(tests/virtuoso_server.py): its SQL-state errors, its row cap, its ASK answers and
label search through ``bif:contains``."""

from __future__ import annotations

import dataclasses
from pathlib import Path

import pytest

from middleware.errors import BadRequest, ConfigError, EndpointError, EndpointTimeout
from middleware.kg.backends.endpoint import SparqlEndpoint
from middleware.kg.profiles import load_profile
from middleware.testing.graphs import EX, GraphConformance, ex
from middleware.testing.methods import MethodConformance
from tests.cli_helpers import run
from tests.virtuoso_server import HUB, HUB_LINK, ROW_CAP, VirtuosoServer

# The client's timeout: past Virtuoso's own time limit (3 s, tests/virtuoso_server.py),
# whose error the time-limit tests expect, by more than ten times what a limited query
# takes on a busy machine (about 4 s); other queries take milliseconds.
TIMEOUT = 60


def endpoint(
    server: VirtuosoServer, sleeps: list[float] | None = None, **profile: str
) -> SparqlEndpoint:
    chosen = dataclasses.replace(load_profile("generic"), **profile)
    record = sleeps.append if sleeps is not None else (lambda seconds: None)
    return SparqlEndpoint(
        server.url, profile=chosen, name="virtuoso", timeout=TIMEOUT, sleep=record
    )


class TestVirtuosoGraph(GraphConformance):
    @pytest.fixture(scope="class")
    @classmethod
    def graph(cls, virtuoso_server: VirtuosoServer) -> SparqlEndpoint:
        return SparqlEndpoint(
            virtuoso_server.url, profile="generic", name="virtuoso", timeout=TIMEOUT
        )


class TestVirtuosoMethods(MethodConformance):
    @pytest.fixture(scope="class")
    @classmethod
    def graph(cls, virtuoso_server: VirtuosoServer) -> SparqlEndpoint:
        return SparqlEndpoint(virtuoso_server.url, profile="generic", name="films", timeout=TIMEOUT)


# -- errors: text/plain with an SQL state ------------------------------------------------
def test_virtuoso_compiler_error_is_a_clear_bad_request(virtuoso_server: VirtuosoServer) -> None:
    sleeps: list[float] = []
    graph = endpoint(virtuoso_server, sleeps)
    # valid SPARQL 1.1, but Virtuoso needs one end of a transitive path bound
    with pytest.raises(BadRequest) as caught:
        graph.query(f"SELECT * WHERE {{ ?s (<{EX}starring>|^<{EX}starring>)* ?o }} LIMIT 5")
    assert "Virtuoso 37000" in caught.value.message
    assert "transitive start not given" in caught.value.message
    assert caught.value.hint and "Virtuoso" in caught.value.hint
    assert sleeps == []  # answered under HTTP 500, yet nothing is retried


def test_virtuoso_evaluation_error_under_http_500_is_not_retried(
    virtuoso_server: VirtuosoServer,
) -> None:
    sleeps: list[float] = []
    with pytest.raises(BadRequest) as caught:
        endpoint(virtuoso_server, sleeps).query("SELECT (1/0 AS ?x) WHERE {}")
    assert "22012 SR084: Division by 0." in caught.value.message
    assert sleeps == []


# -- ASK answered as a one-column SELECT ----------------------------------------------------
def test_virtuoso_ask_becomes_a_boolean(virtuoso_server: VirtuosoServer) -> None:
    graph = endpoint(virtuoso_server)
    assert graph.query(f"ASK {{ <{EX}Winslet> <{EX}marriedTo> ?x }}").boolean is True
    missing = graph.query(f"ASK {{ <{EX}Winslet> <{EX}marriedTo> <{EX}Nolan> }}")
    assert missing.kind == "ask" and missing.boolean is False


# -- the row cap (ResultSetMaxRows) ---------------------------------------------------------
def test_virtuoso_row_cap_marks_the_result_truncated(virtuoso_server: VirtuosoServer) -> None:
    graph = endpoint(virtuoso_server)
    capped = graph.query("SELECT * WHERE { ?s ?p ?o }")
    assert len(capped.rows) == ROW_CAP and capped.truncated
    assert graph.server_row_cap == ROW_CAP
    small = graph.query("SELECT * WHERE { ?s ?p ?o } LIMIT 5")
    assert len(small.rows) == 5 and not small.truncated


def test_virtuoso_construct_at_the_known_cap_is_truncated(virtuoso_server: VirtuosoServer) -> None:
    graph = endpoint(virtuoso_server)
    graph.query("SELECT * WHERE { ?s ?p ?o }")  # the cap is announced on SELECT answers only
    built = graph.query("CONSTRUCT { ?s ?p ?o } WHERE { ?s ?p ?o }")
    assert built.kind == "graph" and built.truncated
    assert not graph.query(
        f"CONSTRUCT {{ ?f <{EX}by> ?d }} WHERE {{ ?f <{EX}directedBy> ?d }}"
    ).truncated


def test_virtuoso_construct_at_the_profile_cap_is_truncated_at_once(
    virtuoso_server: VirtuosoServer,
) -> None:
    graph = SparqlEndpoint(
        virtuoso_server.url,
        profile=dataclasses.replace(load_profile("generic"), row_cap=ROW_CAP),
        timeout=TIMEOUT,
    )
    assert graph.query("CONSTRUCT { ?s ?p ?o } WHERE { ?s ?p ?o }").truncated


def test_virtuoso_capped_operation_is_an_error_not_a_short_answer(
    virtuoso_server: VirtuosoServer,
) -> None:
    graph = endpoint(virtuoso_server)
    # Virtuoso announces its cap whenever a result reaches it, so a LIMIT of exactly the
    # cap counts as cut too; one row less is whole
    assert len(graph.neighbors(HUB, direction="out", limit=ROW_CAP - 1)) == ROW_CAP - 1
    with pytest.raises(EndpointError) as caught:
        graph.neighbors(HUB, direction="out", limit=ROW_CAP + 200)
    assert "neighbors_out" in caught.value.message and "ResultSetMaxRows" in str(caught.value.hint)


# -- the time limit (MaxQueryExecutionTime) ------------------------------------------------
SPOKES = f"?a <{HUB_LINK}> ?b . ?c <{HUB_LINK}> ?d . ?e <{HUB_LINK}> ?f"  # 3.4e9 rows


def test_virtuoso_time_limit_error_is_a_timeout(virtuoso_server: VirtuosoServer) -> None:
    sleeps: list[float] = []
    with pytest.raises(EndpointTimeout) as caught:
        endpoint(virtuoso_server, sleeps).query(f"SELECT (COUNT(*) AS ?n) WHERE {{ {SPOKES} }}")
    assert "S1T00" in caught.value.message and "MaxQueryExecutionTime" in str(caught.value.hint)
    assert sleeps == []


def test_virtuoso_incomplete_anytime_answer_is_a_timeout(virtuoso_server: VirtuosoServer) -> None:
    # Virtuoso's own timeout parameter makes it an "anytime" query: HTTP 200 with an empty
    # count and X-SQL-State: S1TAT. The parameter rides in the URL of a POST (a query this
    # long is posted), the way a server-side default would apply.
    anytime = SparqlEndpoint(
        virtuoso_server.url + "?timeout=300", profile="generic", timeout=TIMEOUT
    )
    padding = ", ".join(f"<urn:kgmw:pad{i}>" for i in range(60))
    query = f"SELECT (COUNT(*) AS ?n) WHERE {{ {SPOKES} FILTER(?a NOT IN ({padding})) }}"
    with pytest.raises(EndpointTimeout) as caught:
        anytime.query(query)
    assert "S1TAT" in caught.value.message and "incomplete" in caught.value.message


# -- label search through bif:contains -------------------------------------------------------
def test_virtuoso_dialect_searches_labels_with_bif_contains(
    virtuoso_server: VirtuosoServer,
) -> None:
    graph = endpoint(virtuoso_server, dialect="virtuoso")
    assert "bif:contains" in graph.templates.text("search")
    assert [e.iri for e in graph.search("cameron")] == [ex("Cameron")]
    assert ex("DiCaprio") in [e.iri for e in graph.search("Leo DiCaprio")]
    assert [e.iri for e in graph.search('"hi" }')] == [ex("Quoted")]
    assert graph.search("zqxjv") == []


def test_virtuoso_bif_search_matches_words_not_substrings(
    virtuoso_server: VirtuosoServer,
) -> None:
    words = endpoint(virtuoso_server, dialect="virtuoso")
    plain = endpoint(virtuoso_server)
    assert ex("Cameron") in [e.iri for e in plain.search("camer")]
    assert words.search("camer") == []  # the full-text index finds whole words


def test_virtuoso_profile_dialect_is_read_and_checked(tmp_path: Path) -> None:
    assert load_profile("generic").dialect == "sparql11"
    good = tmp_path / "good.yaml"
    good.write_text("name: good\ndialect: virtuoso\nrow_cap: 10000\n", encoding="utf-8")
    assert (load_profile(str(good)).dialect, load_profile(str(good)).row_cap) == ("virtuoso", 10000)
    for name, line, problem in (
        ("dialect", "dialect: virtuosso", "dialect must be one of sparql11, virtuoso"),
        ("cap", "row_cap: lots", "row_cap must be a positive integer"),
    ):
        bad = tmp_path / f"bad-{name}.yaml"
        bad.write_text(f"name: bad\n{line}\n", encoding="utf-8")
        with pytest.raises(ConfigError, match=problem):
            load_profile(str(bad))


def test_virtuoso_cli_query_warns_of_the_row_cap(
    virtuoso_server: VirtuosoServer, capsys: pytest.CaptureFixture[str]
) -> None:
    url = virtuoso_server.url
    code, out, err = run(capsys, "query", "SELECT * WHERE { ?s ?p ?o }", "--endpoint", url)
    assert code == 0 and f"({ROW_CAP} rows)" in out
    assert f"cut the result at {ROW_CAP:,} rows" in err and "ResultSetMaxRows" in err
    code, out, err = run(capsys, "query", "SELECT * WHERE { ?s ?p ?o } LIMIT 3", "--endpoint", url)
    assert code == 0 and "(3 rows)" in out and "warning" not in err
