"""Time and memory caps hold for caller SPARQL by every way in, rows or no rows: the
executor that runs the query is stopped, and the caller's process goes on."""

from __future__ import annotations

import time

import pytest

from middleware.config import Settings
from middleware.errors import ConfigError, EndpointTimeout, PayloadTooLarge
from middleware.integrations.langchain_tools import kg_tools
from middleware.kg.backends.endpoint import SparqlEndpoint
from middleware.kg.backends.local import LocalStore
from middleware.kg.executors.limits import ExecutorLimits
from middleware.kg.sample import sample_store
from middleware.kg.sparql_guard import QueryLimits, QueryPolicy
from middleware.llm.scripted import ScriptedLLM
from tests.cli_helpers import run

PAIRS = "SELECT (COUNT(*) AS ?n) WHERE { ?a ?b ?c . ?d ?e ?f }"  # no row until it is done
CUBE = "SELECT * WHERE { ?a ?b ?c . ?d ?e ?f . ?g ?h ?i } ORDER BY ?a ?d ?g"  # memory


@pytest.fixture(scope="module")
def sample(tmp_path_factory: pytest.TempPathFactory) -> LocalStore:
    return sample_store(cache_dir=str(tmp_path_factory.getbasetemp() / "kgmw-cache"))


def test_a_query_that_yields_no_row_still_stops_at_its_timeout(sample: LocalStore) -> None:
    began = time.monotonic()
    with pytest.raises(EndpointTimeout, match="2 s timeout"):
        sample.query(PAIRS, timeout=2)
    assert time.monotonic() - began < 60  # generous: it used to run for minutes
    assert sample.query("ASK { ?s ?p ?o }").boolean is True  # a fresh executor took over


def test_kgmw_query_keeps_its_timeout(
    sample: LocalStore, capsys: pytest.CaptureFixture[str]
) -> None:
    """On the sample graph (the session's cache, where ``sample`` put it)."""
    code, _, err = run(capsys, "query", "--timeout", "2", PAIRS)
    assert code != 0 and "timeout" in err, err


def test_kg_sparql_keeps_its_memory_cap_and_the_process_lives_on(sample: LocalStore) -> None:
    settings = Settings.load(
        config_path=None, env={}, overrides={"timeout": 30.0, "sparql_executor_memory": 1024}
    )
    tool = kg_tools(graph=sample, settings=settings, llm=ScriptedLLM(default="x"))[1]
    said = tool.run(CUBE)  # the tool hands errors back to the agent as text
    assert "sparql_executor" in str(said) or "timeout" in str(said), said  # a memory cap
    assert '"boolean": true' in str(tool.run("ASK { ?s ?p ?o }"))


def test_an_in_memory_store_runs_caller_queries_in_executors_too() -> None:
    store = LocalStore()
    store.load_text(
        "".join(f"<http://e/a{i}> <http://e/p> <http://e/b{i}> .\n" for i in range(400)),
        name="a.nt",
    )
    with pytest.raises(EndpointTimeout):
        store.query(PAIRS.replace("}", ". ?g ?h ?i }"), timeout=1)
    store.load_text("<http://e/x> <http://e/p> <http://e/y> .\n", name="b.nt")
    count = store.query("SELECT (COUNT(*) AS ?n) WHERE { ?s ?p ?o }").rows[0]["n"]
    assert count.value == "401"  # the executors see the new content
    store.close()


def test_no_executors_means_no_caller_sparql() -> None:
    store = LocalStore(executors=ExecutorLimits(workers=0))
    with pytest.raises(ConfigError, match="sparql_executors is 0"):
        store.query("ASK {}")


def doubled(times: int) -> str:
    """A one-row SELECT whose one value is 100 characters doubled ``times`` times."""
    binds = " ".join(f"BIND(CONCAT(?v{n}, ?v{n}) AS ?v{n + 1})" for n in range(times))
    return f'SELECT ?v{times} WHERE {{ BIND("{"x" * 100}" AS ?v0) {binds} }}'


ONE_MB = QueryPolicy(QueryLimits(max_result_bytes=1 << 20))


def test_a_result_past_its_size_cap_is_refused_however_few_its_rows() -> None:
    store = LocalStore()
    store.load_text("<http://e/a> <http://e/p> <http://e/b> .\n", name="a.nt")
    small = store.query(doubled(12), policy=ONE_MB)
    assert len(small.rows[0]["v12"].value) == 100 << 12  # 400 kB: fine
    with pytest.raises(PayloadTooLarge, match="sparql_max_result_mb"):
        store.query(doubled(14), policy=ONE_MB)  # 1.6 MB in one row
    # a long datatype IRI counts, and so do the bytes of characters beyond ASCII
    long_iri = 'BIND(STRDT("x", IRI(CONCAT("http://e/", ?v14))) AS ?d) }'
    datatype = doubled(14).replace("SELECT ?v14", "SELECT ?d").removesuffix("}") + long_iri
    with pytest.raises(PayloadTooLarge):
        store.query(datatype, policy=ONE_MB)
    wide = doubled(12).replace('"' + "x" * 100 + '"', '"' + "\U0001f600" * 100 + '"')
    with pytest.raises(PayloadTooLarge):  # 409,600 characters of 4 bytes each
        store.query(wide, policy=ONE_MB)
    store.close()


def test_an_endpoints_result_past_its_size_cap_is_refused(oxigraph_server: str) -> None:
    remote = SparqlEndpoint(oxigraph_server, profile="generic", timeout=30)
    with pytest.raises(PayloadTooLarge, match="sparql_max_result_mb"):
        remote.query(doubled(14), policy=ONE_MB)
    assert len(remote.query(doubled(12), policy=ONE_MB).rows) == 1


def test_the_service_refuses_a_result_past_its_size_cap(sample: LocalStore) -> None:
    from middleware.server import create_app

    app = create_app(
        Settings.load(config_path=None, env={}, overrides={"sparql_max_result_mb": 1}),
        graphs={"sample": sample},
    )
    client = app.test_client()
    refused = client.post("/sparql", data={"query": doubled(14)})
    assert refused.status_code == 413 and "sparql_max_result_mb" in refused.get_json()["hint"]
    assert client.post("/sparql", data={"query": doubled(12)}).status_code == 200
