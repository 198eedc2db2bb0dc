"""One graph split in two servers: Freebase's half in Virtuoso, Wikidata's half (linked
to Freebase by P646) in an Oxigraph server, answered from both at once.

The halves share entities only through the links (Cameron's Wikidata label is not his
Freebase name), so the ``same_as`` step is what joins his film (Freebase half) to his
birthplace (Wikidata half). Virtuoso missing: skipped locally, a failure under CI.
"""

from __future__ import annotations

import dataclasses
import re
import subprocess
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from middleware.config.methods import PlanSettings
from middleware.kg.backends.endpoint import SparqlEndpoint
from middleware.kg.profiles import load_profile
from middleware.llm.scripted import ScriptedLLM
from middleware.methods import qsm as qsm_module
from middleware.methods.answer import NOT_FOUND, Answer
from middleware.methods.plan import Plan
from middleware.methods.pseudograph import PseudoGraph
from middleware.methods.qsm import QSM
from middleware.text.embeddings import HashEncoder
from tests.conftest import DATA, free_port, start_oxigraph
from tests.virtuoso_server import VirtuosoServer, start_virtuoso

CROSS = DATA / "cross"
CAMERON_FB = "http://rdf.freebase.com/ns/m.03_gd"
CAMERON_WD = "http://www.wikidata.org/entity/Q42574"
NOLAN_FB = "http://rdf.freebase.com/ns/m.04wqr"
NOLAN_WD = "http://www.wikidata.org/entity/Q25191"


@pytest.fixture(scope="module")
def virtuoso(tmp_path_factory: pytest.TempPathFactory) -> Iterator[VirtuosoServer]:
    folder = tmp_path_factory.mktemp("cross-virtuoso")
    server = start_virtuoso([CROSS / "freebase-half.ttl"], folder, free_port)
    try:
        yield server
    finally:
        server.stop()


@pytest.fixture
def freebase(virtuoso: VirtuosoServer) -> SparqlEndpoint:
    profile = dataclasses.replace(load_profile("freebase"), dialect="virtuoso")
    return SparqlEndpoint(virtuoso.url, profile=profile, name="freebase", timeout=20)


@pytest.fixture
def wikidata_server(tmp_path: Path) -> Iterator[tuple[SparqlEndpoint, subprocess.Popen[bytes]]]:
    url, process = start_oxigraph(CROSS / "wikidata-half.ttl", tmp_path / "wikidata")
    graph = SparqlEndpoint(
        url, profile=str(CROSS / "wikidata-half.yaml"), name="wikidata", timeout=5, retries=0
    )
    try:
        yield graph, process
    finally:
        if process.poll() is None:
            process.terminate()
            process.wait(timeout=10)


def sources_of(answer: Answer) -> set[str | None]:
    return {t.triple.source for t in answer.evidence.triples}


def answer_from(facts: str) -> str:
    found = re.search(r"\| place of birth \| ([^\n]+)", facts)
    return found.group(1).strip() if found else "unknown"


def qsm() -> QSM:
    llm = ScriptedLLM([("Answer:$", lambda p: answer_from(p.rsplit("Facts:", 1)[-1]))])
    return QSM(llm, encoder=HashEncoder())


def test_cross_qsm_joins_the_halves_at_linked_entities(
    freebase: SparqlEndpoint, wikidata_server: tuple[SparqlEndpoint, Any]
) -> None:
    wikidata, _ = wikidata_server
    answer = qsm().run("Where was James Cameron born?", sources=[freebase, wikidata])
    same_as = next(s for s in answer.steps if s.name == "same_as")
    assert same_as.parsed == {"wikidata": {CAMERON_WD: CAMERON_FB}}
    assert sources_of(answer) == {"freebase", "wikidata"}
    texts = {t.text for t in answer.evidence.triples}
    assert "Titanic | directed by | James Cameron" in texts
    assert "J. F. Cameron | place of birth | Kapuskasing" in texts
    assert answer.answer == "Kapuskasing"
    assert [(e.label, e.source) for e in answer.entities] == [("Kapuskasing", "wikidata")]


def test_cross_qsm_without_the_link_misses_the_other_half(
    freebase: SparqlEndpoint, wikidata_server: tuple[SparqlEndpoint, Any]
) -> None:
    wikidata, _ = wikidata_server
    wikidata.profile = dataclasses.replace(wikidata.profile, same_as=None)
    answer = qsm().run("Where was James Cameron born?", sources=[freebase, wikidata])
    assert not any(s.name == "same_as" for s in answer.steps)
    assert sources_of(answer) == {"freebase"}


def film_llm() -> ScriptedLLM:
    def verify(prompt: str) -> str:
        trusted = prompt.rsplit("Trusted facts:", 1)[1].split("Draft:", 1)[0]
        return "\n".join(line for line in trusted.splitlines() if "|" in line)

    def answer(prompt: str) -> str:
        facts = prompt.rsplit("Facts:", 1)[1]
        found = re.search(r"\| directed by \| ([^\n]+)", facts)
        return "{" + (found.group(1).strip() if found else "unknown") + "}"

    draft = (
        "Cypher:\nCREATE (f:Film {name: 'Inception'})"
        "-[:DIRECTED_BY]->(d:Person {name: 'Christopher Nolan'})\n"
        "CREATE (d)-[:BORN_IN]->(:City {name: 'London'})"
    )
    return ScriptedLLM([("Plan:$", draft), ("Fixed facts:$", verify), ("Answer:$", answer)])


def test_cross_pg_names_a_shared_entity_once(
    freebase: SparqlEndpoint, wikidata_server: tuple[SparqlEndpoint, Any]
) -> None:
    wikidata, _ = wikidata_server
    method = PseudoGraph(film_llm(), encoder=HashEncoder())
    answer = method.run(
        "Who directed Inception, and where was the director born?", sources=[freebase, wikidata]
    )
    assert sources_of(answer) == {"freebase", "wikidata"}
    assert answer.answer == "Christopher Nolan"
    # grounded in both halves, named once (the source listed first keeps it)
    assert [(e.iri, e.source) for e in answer.entities] == [(NOLAN_FB, "freebase")]


def test_cross_multi_source_one_half_failing_mid_run_leaves_the_other(
    freebase: SparqlEndpoint,
    wikidata_server: tuple[SparqlEndpoint, subprocess.Popen[bytes]],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    wikidata, process = wikidata_server
    joined = qsm_module.cross_link

    def join_then_stop(*args: Any) -> Any:
        extra = joined(*args)
        process.terminate()  # the Wikidata half goes down between linking and fetching
        process.wait(timeout=10)
        return extra

    monkeypatch.setattr(qsm_module, "cross_link", join_then_stop)
    answer = qsm().run("Where was James Cameron born?", sources=[freebase, wikidata])
    assert next(s for s in answer.steps if s.name == "same_as").parsed["wikidata"]
    assert sources_of(answer) == {"freebase"}
    base = next(s for s in answer.steps if s.name == "base_graph")
    assert base.parsed == {"freebase": 1}  # Titanic | directed by | James Cameron
    assert any("source 'wikidata' failed (EndpointError)" in n for n in base.notes)
    assert any("source 'wikidata' failed" in w for w in answer.warnings)
    # the birthplace lived in the half that failed: the model's "unknown" is withheld
    assert answer.answer == NOT_FOUND and answer.guess and answer.guess.answer == "unknown"


def plan_method(min_confidence: float = 1.0) -> Plan:
    llm = ScriptedLLM([("Answer:$", lambda p: answer_from(p.rsplit("Facts:", 1)[-1]))])
    config = PlanSettings(min_confidence=min_confidence)
    return Plan(llm, encoder=HashEncoder(), config=config)


def test_cross_plan_plans_each_half_and_answers_from_both(
    freebase: SparqlEndpoint, wikidata_server: tuple[SparqlEndpoint, Any]
) -> None:
    wikidata, _ = wikidata_server
    answer = plan_method().run("Where was Christopher Nolan born?", sources=[freebase, wikidata])
    plan = next(s for s in answer.steps if s.name == "plan")
    assert set(plan.parsed) == {"freebase", "wikidata"}
    walked = {hop.triple.source for p in answer.evidence.paths for hop in p.path.hops}
    assert walked == {"freebase", "wikidata"}
    assert answer.answer == "London"
    assert [(e.label, e.source) for e in answer.entities] == [("London", "wikidata")]


def test_cross_multi_source_plan_with_one_half_down_answers_from_the_other(
    freebase: SparqlEndpoint, wikidata_server: tuple[SparqlEndpoint, subprocess.Popen[bytes]]
) -> None:
    wikidata, process = wikidata_server
    process.terminate()
    process.wait(timeout=10)
    answer = plan_method(0.0).run(
        "Which film did Christopher Nolan direct?", sources=[freebase, wikidata]
    )
    plan = next(s for s in answer.steps if s.name == "plan")
    assert set(plan.parsed) == {"freebase"}
    assert any("source 'wikidata' failed" in n for n in plan.notes)
    assert answer.answer == "Inception" and answer.usage["llm_calls"] == 0
    assert {e.source for e in answer.entities} == {"freebase"}
