"""The wikidata profile and the endpoint against a WDQS replay server
(tests/wdqs_replay.py): the User-Agent policy, throttling with Retry-After, the time
limit, malformed queries, the label service, labels/aliases/descriptions, truthy edges
and statements with ranks and qualifiers."""

from __future__ import annotations

import re

import pytest
from pyoxigraph import NamedNode

from middleware.config import Settings
from middleware.errors import BadRequest, EndpointError, EndpointTimeout, QueryRejected
from middleware.kg.backends.endpoint import TIME_LIMIT_GRACE, SparqlEndpoint
from middleware.kg.base import QueryResult
from middleware.kg.open import open_graph
from middleware.kg.profiles import load_profile
from middleware.kg.relations import load_relations
from middleware.kg.sparql_guard import QueryPolicy
from middleware.kg.statements import statements
from middleware.support.version import package_version
from middleware.testing.graphs import GraphConformance
from middleware.testing.methods import MethodConformance
from tests.wdqs_replay import WdqsReplay

WD = "http://www.wikidata.org/entity/"
WDT = "http://www.wikidata.org/prop/direct/"
PREFIXES = (
    "PREFIX wd: <http://www.wikidata.org/entity/> "
    "PREFIX wdt: <http://www.wikidata.org/prop/direct/> "
    "PREFIX wikibase: <http://wikiba.se/ontology#> PREFIX bd: <http://www.bigdata.com/rdf#> "
)


def wd(name: str) -> NamedNode:
    return NamedNode(WD + name)


def wdt(name: str) -> NamedNode:
    return NamedNode(WDT + name)


def endpoint(
    replay: WdqsReplay, sleeps: list[float] | None = None, **options: object
) -> SparqlEndpoint:
    record = sleeps.append if sleeps is not None else (lambda seconds: None)
    return SparqlEndpoint(
        replay.url,
        profile="wikidata",
        name="wikidata",
        sleep=record,
        **options,  # type: ignore[arg-type]
    )


class TestWdqsReplayGraph(GraphConformance):
    """The replay server is a conformant SPARQL endpoint (films graph, generic profile)."""

    @pytest.fixture(scope="class")
    @classmethod
    def graph(cls, wdqs_films: str) -> SparqlEndpoint:
        return SparqlEndpoint(wdqs_films, profile="generic", name="wdqs-films", timeout=20)


class TestWdqsReplayMethods(MethodConformance):
    @pytest.fixture(scope="class")
    @classmethod
    def graph(cls, wdqs_films: str) -> SparqlEndpoint:
        return SparqlEndpoint(wdqs_films, profile="generic", name="films", timeout=20)


# -- User-Agent policy ----------------------------------------------------------------------
def test_wdqs_every_request_carries_a_policy_conformant_user_agent(wdqs: WdqsReplay) -> None:
    graph = open_graph(Settings(endpoint=wdqs.url, profile="wikidata"))
    graph.neighbors(wd("Q42"), direction="out")
    graph.labels([wd("Q42")])
    assert len(wdqs.agents) >= 2
    for agent in wdqs.agents:
        # tool/version (contact): what Wikimedia's User-Agent policy asks
        assert re.fullmatch(r"kg-middleware/\S+ \(\+https://kgmw\.dev\)", agent)
        assert f"/{package_version()} " in agent


def test_wdqs_refuses_a_generic_user_agent_with_a_clear_error(wdqs: WdqsReplay) -> None:
    graph = endpoint(wdqs, user_agent="Python-urllib/3.12")
    with pytest.raises(EndpointError) as caught:
        graph.neighbors(wd("Q42"))
    assert "HTTP 403" in caught.value.message
    assert "User-Agent_policy" in caught.value.message  # the server's own words
    assert caught.value.hint and "user_agent" in caught.value.hint
    assert "Python-urllib/3.12" in caught.value.hint


def test_wdqs_an_empty_user_agent_is_refused_before_sending(wdqs: WdqsReplay) -> None:
    with pytest.raises(BadRequest, match="user_agent must not be empty"):
        endpoint(wdqs, user_agent="  ")
    assert wdqs.requests == 0


# -- throttling -----------------------------------------------------------------------------
def test_wdqs_429_with_retry_after_waits_and_retries(wdqs: WdqsReplay) -> None:
    sleeps: list[float] = []
    graph = endpoint(wdqs, sleeps, retries=3)
    wdqs.throttle(allowed=0, refused=2, retry_after=2)
    assert graph.labels([wd("Q42")]) == {wd("Q42"): "Douglas Adams"}
    assert sleeps == [2.0, 2.0]  # what Retry-After asked, not the backoff
    assert wdqs.requests == 3


def test_wdqs_429_past_the_retries_is_an_endpoint_error(wdqs: WdqsReplay) -> None:
    sleeps: list[float] = []
    graph = endpoint(wdqs, sleeps, retries=1)
    wdqs.throttle(allowed=0, refused=5, retry_after=1)
    with pytest.raises(EndpointError, match="failed after 2 attempts: HTTP 429"):
        graph.labels([wd("Q42")])
    assert sleeps == [1.0]


def test_wdqs_retry_after_beyond_the_cap_fails_at_once(wdqs: WdqsReplay) -> None:
    sleeps: list[float] = []
    graph = endpoint(wdqs, sleeps, max_retry_wait=10)
    wdqs.throttle(allowed=0, refused=1, retry_after=120)
    with pytest.raises(EndpointError, match="asked to retry after 120 s") as caught:
        graph.labels([wd("Q42")])
    assert caught.value.hint and "max_retry_wait" in caught.value.hint
    assert sleeps == []


# -- time limit and malformed queries ---------------------------------------------------------
def test_wdqs_timeout_is_an_endpoint_timeout_not_retried(wdqs: WdqsReplay) -> None:
    sleeps: list[float] = []
    graph = endpoint(wdqs, sleeps)
    wdqs.time_limit = 0  # every query runs past it
    with pytest.raises(EndpointTimeout) as caught:
        graph.neighbors(wd("Q42"))
    assert "time limit (60 s)" in caught.value.message
    assert caught.value.hint and "60 s" in caught.value.hint
    assert sleeps == [] and wdqs.requests == 1


def test_wikidata_profile_caps_the_wait_at_its_time_limit(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    profile = load_profile("wikidata")
    assert profile.time_limit == 60
    graph = SparqlEndpoint("http://127.0.0.1:9/sparql", profile=profile, timeout=600)
    waits: list[float] = []

    def attempt(sparql: str, timeout: float, dataset: object = None) -> QueryResult:
        waits.append(timeout)
        return QueryResult("ask", boolean=True)

    monkeypatch.setattr(graph, "_attempt", attempt)
    graph.has_triples()
    graph.has_triples(timeout=10)
    assert waits == [60 + TIME_LIMIT_GRACE, 10]


def test_wdqs_malformed_query_is_rejected_with_the_servers_words(wdqs: WdqsReplay) -> None:
    sleeps: list[float] = []
    graph = endpoint(wdqs, sleeps)
    with pytest.raises(QueryRejected) as caught:
        graph._run("SELECT ?x WHERE { ?x ?y }")  # the middleware's own parse would stop it
    assert "MalformedQueryException" not in caught.value.message
    assert "rejected the query" in caught.value.message
    assert sleeps == []


# -- labels, aliases, descriptions ----------------------------------------------------------
def test_wikidata_describe_reads_label_aliases_and_description(wdqs: WdqsReplay) -> None:
    entity = endpoint(wdqs).describe(wd("Q42"))
    assert entity.label == "Douglas Adams"
    assert set(entity.aliases) == {"Douglas Noël Adams", "Douglas Noel Adams", "DNA"}
    assert entity.description == "English writer and humorist"


def test_wikidata_labels_in_the_profile_language(wdqs: WdqsReplay) -> None:
    graph = endpoint(wdqs)
    assert graph.labels([wd("Q30"), wd("Q11696")]) == {
        wd("Q30"): "United States of America",
        wd("Q11696"): "President of the United States",
    }


def test_wdqs_label_service_in_the_asked_language_with_fallback_to_the_id(
    wdqs: WdqsReplay,
) -> None:
    query = (
        PREFIXES + "SELECT ?o ?oLabel ?oDescription ?oAltLabel WHERE {{ wd:Q76 wdt:P39 ?o . "
        'SERVICE wikibase:label {{ bd:serviceParam wikibase:language "{langs}" . }} }}'
    )
    graph = endpoint(wdqs)
    policy = QueryPolicy(services=("http://wikiba.se/ontology#label",))
    rows = graph.query(query.format(langs="[AUTO_LANGUAGE],en"), policy=policy).rows
    by_iri = {row["o"].value: row for row in rows}
    potus = by_iri[WD + "Q11696"]
    assert potus["oLabel"].value == "President of the United States"
    assert potus["oAltLabel"].value == "POTUS"
    assert potus["oDescription"].value.startswith("head of state")
    senator = by_iri[WD + "Q4416090"]
    assert senator["oLabel"].value == "Q4416090"  # no English label: the id, as WDQS does
    assert "oDescription" not in senator
    german = graph.query(query.format(langs="de,en"), policy=policy).rows
    assert {row["oLabel"].value for row in german} == {
        "Präsident der Vereinigten Staaten",
        "Senator der Vereinigten Staaten",
    }


# -- truthy edges and statements ------------------------------------------------------------
def test_wikidata_neighbors_follow_truthy_edges_only(wdqs: WdqsReplay) -> None:
    graph = endpoint(wdqs)
    out = graph.neighbors(wd("Q30"), direction="out")
    assert {(t.predicate, t.object) for t in out} == {
        (wdt("P31"), wd("Q6256")),
        (wdt("P6"), wd("Q6279")),  # only the preferred head of government is truthy
    }
    incoming = graph.neighbors(wd("Q76"), direction="in")
    assert incoming == []  # Q30's p:P6 statement about Q76 is not a wdt: edge
    birth = graph.neighbors(wd("Q42"), direction="out")
    assert (wdt("P19"), wd("Q84")) not in {(t.predicate, t.object) for t in birth}


def test_wikidata_paths_never_pass_through_statement_nodes(wdqs: WdqsReplay) -> None:
    graph = endpoint(wdqs)
    found = graph.paths(wd("Q76"), wd("Q6279"), max_hops=2)
    assert found  # Q76 -P27-> Q30 -P6-> Q6279 (truthy)
    for path in found:
        for hop in path.hops:
            assert hop.triple.predicate.value.startswith(WDT)
            assert "/statement/" not in hop.triple.subject.value
            assert "/statement/" not in hop.triple.object.value
    # Q42's deprecated London birthplace is a statement only: no truthy path
    assert graph.paths(wd("Q42"), wd("Q84"), max_hops=1) == []


def test_wikidata_statements_carry_ranks_and_qualifiers(wdqs: WdqsReplay) -> None:
    graph = endpoint(wdqs)
    heads = statements(graph, wd("Q30"), "P6")
    by_value = {s.value: s for s in heads}
    assert set(by_value) == {wd("Q76"), wd("Q22686"), wd("Q6279")}
    assert by_value[wd("Q6279")].rank == "preferred"
    obama = by_value[wd("Q76")]
    assert obama.rank == "normal" and obama.node.value.startswith(WD + "statement/")
    assert obama.text("United States of America") == (
        "United States of America | head of government | Barack Obama "
        "(start time 2009-01-20, end time 2017-01-20)"
    )
    offices = {s.value_label: s for s in statements(graph, wd("Q76"), wd("P39"))}
    assert set(offices) == {"President of the United States", "Q4416090"}
    replaces = [
        q for q in offices["President of the United States"].qualifiers if q.label == "replaces"
    ]
    assert [q.value_label for q in replaces] == ["George W. Bush"]


def test_wikidata_deprecated_statement_is_not_truthy(wdqs: WdqsReplay) -> None:
    graph = endpoint(wdqs)
    births = {s.value: s for s in statements(graph, wd("Q42"), "P19")}
    assert births[wd("Q84")].rank == "deprecated"
    assert births[wd("Q84")].text("Douglas Adams") == (
        "Douglas Adams | place of birth | London (deprecated, reason for deprecated rank "
        "incorrect value)"
    )
    truthy = {t.object for t in graph.neighbors(wd("Q42"), direction="out")}
    assert wd("Q350") in truthy and wd("Q84") not in truthy


def test_wikidata_statements_need_a_property_id(wdqs: WdqsReplay) -> None:
    with pytest.raises(BadRequest, match="P and a number"):
        statements(endpoint(wdqs), wd("Q42"), "place of birth")


def test_wikidata_relations_read_time_varying_properties() -> None:
    catalog = load_relations(load_profile("wikidata").relations)
    assert catalog.get(WDT + "P39").reading(True) == "position held"
    assert catalog.get(WDT + "P6").reading(False) == "head of government of"
