"""Caller SPARQL is checked on the text that runs: SERVICE smuggling, crashers, escapes.

A listener on a free port records every connection; each smuggling shape is sent to
a store through ``query()``, to ``kgmw query`` and to the service's ``/sparql``, and
the listener must see none of them (the service's turn is in tests/server).
"""

from __future__ import annotations

import time
from collections.abc import Iterator
from pathlib import Path

import pytest
from pyoxigraph import NamedNode

from middleware.errors import BadRequest, MiddlewareError, PayloadTooLarge, ReadOnlyViolation
from middleware.kg.backends.local import LocalStore
from middleware.kg.sparql_guard import (
    QueryLimits,
    QueryPolicy,
    expand_escapes,
    guard_query,
)
from middleware.testing.service_spellings import Listener
from tests.cli_helpers import run
from tests.waiting import until


@pytest.fixture
def listener() -> Iterator[Listener]:
    trap = Listener()
    yield trap
    trap.socket.close()


# Each shape calls the listener's URL ({url}; {host} and {port} for the pieces).
SMUGGLING = [
    # the reported finding: an escaped line break ends the comment for one parser only
    'SELECT * WHERE {{\n # \\u000a BIND("""\n SERVICE <{url}> {{ ?s ?p ?o }}\n # """ AS ?x)\n}}',
    'SELECT * WHERE {{\n # \\U0000000a BIND("""\n SERVICE <{url}> {{ ?s ?p ?o }}\n # """ AS ?x)\n}}',
    "SELECT * WHERE {{ # \\u000d SERVICE <{url}> {{ ?s ?p ?o }}\n}}",
    # the keyword itself escaped, or in odd case
    "SELECT * WHERE {{ SERV\\u0049CE <{url}> {{ ?s ?p ?o }} }}",
    "SELECT * WHERE {{ \\u0053ERVICE <{url}> {{ ?s ?p ?o }} }}",
    "SELECT * WHERE {{ sErViCe <{url}> {{ ?s ?p ?o }} }}",
    "SELECT * WHERE {{ SERVICE SILENT <{url}> {{ ?s ?p ?o }} }}",
    # escapes in the IRI and in prefixes
    "SELECT * WHERE {{ SERVICE <http://127.0.0.1:\\u0030{port}/sparql> {{ ?s ?p ?o }} }}",
    "SELECT * WHERE {{ SERVICE \\u003c{url}\\u003E {{ ?s ?p ?o }} }}",
    "PREFIX t: <http://{host}/> SELECT * WHERE {{ SERVICE t:sparql {{ ?s ?p ?o }} }}",
    "PREFIX t: \\u003chttp://{host}/> SELECT * WHERE {{ SERVICE t:sparql {{ ?s ?p ?o }} }}",
    "PREFIX : <http://{host}/> SELECT * WHERE {{ ?s ?p ?o SERVICE:sparql {{ ?s ?p ?o }} }}",
    "BASE <http://{host}/> SELECT * WHERE {{ SERVICE <sparql> {{ ?s ?p ?o }} }}",
    # escapes that expand to escapes
    "SELECT * WHERE {{ BIND('\\u005Cu0027' AS ?x) SERVICE <{url}> {{ ?s ?p ?o }} }}",
    "SELECT * WHERE {{ BIND('\\u005C' AS ?x) SERVICE <{url}> {{ ?s ?p ?o }} # ' }}",
    # string and comment boundaries
    "SELECT * WHERE {{ BIND('''x\" ''' AS ?a) SERVICE <{url}> {{ ?s ?p ?o }} }}",
    'SELECT * WHERE {{ BIND("a\\"" AS ?a) SERVICE <{url}> {{ ?s ?p ?o }} }}',
    'SELECT * WHERE {{ ?s ?p ?o FILTER(?s<?p#> """\n}}\nSERVICE <{url}> {{ ?s ?p ?o }}\n# """\n) }}',
    "SELECT * WHERE {{ ?s ?p true.SERVICE <{url}> {{ ?s ?p ?o }} }}",
    "SELECT * WHERE {{ ?s ?p 1.SERVICE <{url}> {{ ?s ?p ?o }} }}",
    "PREFIX e: <http://e/> SELECT * WHERE {{ ?s ?p e:a\\#\nSERVICE <{url}> {{ ?s ?p ?o }} }}",
    # every place a group pattern may hide
    "SELECT * WHERE {{ {{ SELECT ?s WHERE {{ SERVICE <{url}> {{ ?s ?p ?o }} }} }} }}",
    "SELECT * WHERE {{ ?s <http://e/p>/<http://e/q>* ?o . SERVICE <{url}> {{ ?s ?p ?o }} }}",
    "SELECT * WHERE {{ VALUES ?x {{ 1 }} SERVICE <{url}> {{ ?s ?p ?o }} }}",
    "SELECT * WHERE {{ BIND(1 AS ?x) SERVICE <{url}> {{ ?s ?p ?o }} }}",
    "SELECT * WHERE {{ FILTER EXISTS {{ SERVICE <{url}> {{ ?s ?p ?o }} }} }}",
    "SELECT * WHERE {{ FILTER NOT EXISTS {{ SERVICE <{url}> {{ ?s ?p ?o }} }} }}",
    "SELECT * WHERE {{ GRAPH ?g {{ SERVICE <{url}> {{ ?s ?p ?o }} }} }}",
    "SELECT * WHERE {{ OPTIONAL {{ SERVICE <{url}> {{ ?s ?p ?o }} }} }}",
    "SELECT * WHERE {{ {{ }} UNION {{ SERVICE <{url}> {{ ?s ?p ?o }} }} }}",
    "SELECT * WHERE {{ ?s ?p ?o MINUS {{ SERVICE <{url}> {{ ?s ?p ?o }} }} }}",
    "SELECT * WHERE {{ BIND(<{url}> AS ?e) SERVICE ?e {{ ?s ?p ?o }} }}",
    "ASK {{ SERVICE <{url}> {{ ?s ?p ?o }} }}",
    "CONSTRUCT {{ ?s ?p ?o }} WHERE {{ SERVICE <{url}> {{ ?s ?p ?o }} }}",
    "DESCRIBE ?s WHERE {{ SERVICE <{url}> {{ ?s ?p ?o }} }}",
]


def shapes(listener: Listener) -> list[str]:
    host = f"127.0.0.1:{listener.port}"
    return [s.format(url=listener.url, host=host, port=listener.port) for s in SMUGGLING]


def settle(listener: Listener) -> int:
    """The listener's connections a moment after the last call: for checking that none
    came (a connection made just before the call returned is counted too). A test that
    expects one waits for it with ``tests.waiting.until`` instead."""
    time.sleep(0.3)
    return listener.connections


@pytest.fixture
def store() -> LocalStore:
    graph = LocalStore()
    graph.load_text("<http://e/a> <http://e/p> <http://e/b> .\n", name="a.nt")
    return graph


def test_the_listener_sees_an_allowed_service(store: LocalStore, listener: Listener) -> None:
    """The control: with the listener on the allowlist, a SERVICE call reaches it."""
    query = f"SELECT * WHERE {{ SERVICE <{listener.url}> {{ ?s ?p ?o }} }}"
    with pytest.raises(MiddlewareError):
        store.query(query, policy=QueryPolicy(services=(listener.url,)))
    assert until(lambda: listener.connections >= 1)


def test_no_smuggled_service_reaches_the_network_from_a_store(
    store: LocalStore, listener: Listener
) -> None:
    refused = 0
    for query in shapes(listener):
        try:  # refused, or run as the canonical text reads it: without a SERVICE
            store.query(query)
        except BadRequest:
            refused += 1
    assert settle(listener) == 0
    assert refused >= len(SMUGGLING) - 3  # the escaped-comment shapes are plain strings


def test_no_smuggled_service_reaches_the_network_from_kgmw_query(
    capsys: pytest.CaptureFixture[str], listener: Listener, tmp_path: Path
) -> None:
    data = tmp_path / "a.nt"
    data.write_text("<http://e/a> <http://e/p> <http://e/b> .\n", encoding="utf-8")
    code, _, err = run(capsys, "load", str(data), "--store", str(tmp_path / "store"))
    assert code == 0, err
    for query in shapes(listener):
        _, _, err = run(capsys, "query", query, "--store", str(tmp_path / "store"))
        assert "Traceback" not in err
    assert settle(listener) == 0


def test_what_runs_is_the_canonical_text() -> None:
    guarded = guard_query("SELECT ('a\\'b' AS ?x) # note \n WHERE { }")
    assert guarded.text == 'SELECT ("a\'b" AS ?x) \n\n WHERE { }'
    long = guard_query('SELECT ("""two\nlines "quoted" \\\\""" AS ?x) {}')
    assert long.text == 'SELECT ("two\\nlines \\"quoted\\" \\\\" AS ?x) {}'
    assert expand_escapes("\\u00e9t\\U0001F600") == "ét😀"


def test_strings_keep_their_value_when_run(store: LocalStore) -> None:
    query = "SELECT ?x WHERE { BIND('''it's \"x\" \\t # not a comment\n''' AS ?x) }"
    row = store.query(query).rows[0]
    assert row["x"].value == 'it\'s "x" \t # not a comment\n'


@pytest.mark.parametrize(
    "query, error",
    [
        ("SELECT * WHERE { BIND('\\q' AS ?x) }", "is not a string escape"),
        ("SELECT * WHERE { BIND('open AS ?x) }", "is not closed"),
        ("SELECT * WHERE { BIND('a\nb' AS ?x) }", "line break inside the string"),
        ("SELECT * WHERE { ?s \\ ?o }", "backslash outside a string"),
        ("SELECT * WHERE { BIND('\\uD800' AS ?x) }", "not a Unicode character"),
        ("SELECT * WHERE { BIND('\ud800' AS ?x) }", "not valid Unicode"),
        ("SELEC * { }", "not a valid SPARQL query"),
        ("PREFIX service: <http://e/> SELECT * { ?s ?p service:x }", "rename the prefix"),
    ],
)
def test_junk_gets_a_clear_400(query: str, error: str) -> None:
    with pytest.raises(BadRequest) as caught:
        guard_query(query)
    assert error in caught.value.message + (caught.value.hint or "")


def test_updates_are_named() -> None:
    with pytest.raises(ReadOnlyViolation, match="INSERT DATA"):
        guard_query("PREFIX e: <http://e/> INSERT DATA { e:a e:p e:b }")


# Each of these crashed the engine (SIGSEGV) or held a core for minutes on main.
CRASHERS = {
    "nested braces": "SELECT * WHERE " + "{" * 5000 + "}" * 5000,
    "nested brackets": "SELECT * WHERE { FILTER(" + "(" * 5000 + "1" + ")" * 5000 + ") }",
    "path alternatives": "SELECT * WHERE { ?s " + "|".join(["<http://e/p>"] * 16000) + " ?o }",
    "path sequence": "SELECT * WHERE { ?s " + "/".join(["<http://e/p>"] * 3000) + " ?o }",
    "plus chain": "SELECT (" + "+".join(["1"] * 10000) + " AS ?x) {}",
    "unions": "SELECT * WHERE { " + " UNION ".join(["{?s ?p ?o}"] * 10000) + " }",
    "optionals": "SELECT * WHERE { ?s ?p ?o "
    + " ".join(f"OPTIONAL {{ ?s ?p ?o{i} }}" for i in range(2000))
    + " }",
}


@pytest.mark.parametrize("name", list(CRASHERS))
def test_crashers_are_refused_before_they_run(name: str, store: LocalStore) -> None:
    with pytest.raises(BadRequest) as caught:
        store.query(CRASHERS[name])
    assert "sparql_max_" in (caught.value.hint or "")


def test_limits_come_from_the_policy() -> None:
    policy = QueryPolicy(QueryLimits(max_chars=55, max_depth=2, max_terms=3))
    with pytest.raises(PayloadTooLarge, match="limit of 55"):
        guard_query("SELECT * WHERE { " + "?s ?p ?o . " * 10 + "}", policy)
    with pytest.raises(BadRequest, match="deeper than the limit of 2"):
        guard_query("SELECT * { { { } } }", policy)
    with pytest.raises(BadRequest, match="limit of 3"):
        guard_query("SELECT * { ?a ?b ?c . ?a ?b ?c . ?a ?b ?c . ?a ?b ?c }", policy)
    assert guard_query("SELECT * { { } }", policy).depth == 2


def test_usual_queries_pass_untouched(store: LocalStore) -> None:
    queries = [
        "PREFIX e: <http://e/> SELECT ?o WHERE { e:a e:p ?o FILTER(?o != e:c && 1 < 2) }",
        "SELECT * WHERE { ?s <http://e/p>+ ?o . ?o ^<http://e/p> ?s } ORDER BY ?s LIMIT 5",
        "SELECT (COUNT(*) AS ?n) WHERE { ?s ?p ?o } GROUP BY ?s HAVING (COUNT(*) >= 1)",
        'SELECT * WHERE { ?s ?p ?o FILTER(LANG("x"@en-GB) = "en-gb" || "1"^^<http://e/t> = 1) }',
        "PREFIX dbr: <http://e/> SELECT * WHERE { VALUES ?s { dbr:St._Louis dbr:a } ?s ?p ?o }",
        "SELECT * WHERE { ?s ?p ?o FILTER(?o != -1.5e3 && ?o != .5) }",
    ]
    for query in queries:
        guarded = guard_query(query)
        assert guarded.text == query
        store.query(query)
    assert store.query(queries[0]).rows[0]["o"] == NamedNode("http://e/b")
