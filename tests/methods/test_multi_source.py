"""The pseudo-graph method over two graphs of different schemas, alone and together.

One graph is a local store in Wikidata's shape (wd:/wdt: IRIs, rdfs:label); the other
holds the same films in Freebase's shape (ns:m.* mids, type.object.name) behind a real
Oxigraph server, which the last test stops to see the answer come from the first.
The encoder is the real MiniLM, since the two schemas word their relations differently.
"""

from __future__ import annotations

import re
import subprocess
from collections.abc import Iterator
from pathlib import Path

import pytest

from middleware.config import Settings
from middleware.kg.backends.endpoint import SparqlEndpoint
from middleware.kg.backends.local import LocalStore
from middleware.llm.scripted import ScriptedLLM
from middleware.methods.answer import Answer
from middleware.methods.pseudograph import PseudoGraph
from middleware.text.embeddings.factory import open_encoder
from tests.conftest import DATA, start_oxigraph

MULTI = DATA / "multi"
CAMERON = {
    "wikidata": "http://www.wikidata.org/entity/Q42574",
    "freebase": "http://rdf.freebase.com/ns/m.03_gd",
}
NOLAN = {
    "wikidata": "http://www.wikidata.org/entity/Q25191",
    "freebase": "http://rdf.freebase.com/ns/m.04wqr",
}


@pytest.fixture(scope="module")
def wikidata() -> LocalStore:
    store = LocalStore(profile=str(MULTI / "wikidata-local.yaml"), name="wikidata")
    store.load([MULTI / "wikidata.ttl"])
    return store


@pytest.fixture
def freebase_server(tmp_path: Path) -> Iterator[tuple[SparqlEndpoint, subprocess.Popen[bytes]]]:
    url, process = start_oxigraph(MULTI / "freebase.ttl", tmp_path / "freebase")
    endpoint = SparqlEndpoint(url, profile="freebase", timeout=5, retries=0)
    endpoint.name = "freebase"
    try:
        yield endpoint, process
    finally:
        if process.poll() is None:
            process.terminate()
            process.wait(timeout=10)


# What the model "believes": Titanic's director is wrong, for verification to fix.
BELIEFS = {
    "Titanic": [
        ("DIRECTED_BY", "Steven Spielberg"),
        ("STARRING", "Kate Winslet"),
        ("RELEASED_IN", "1997"),
    ],
    "Inception": [
        ("DIRECTED_BY", "Christopher Nolan"),
        ("STARRING", "Leonardo DiCaprio"),
        ("RELEASED_IN", "2010"),
    ],
}


def film_llm() -> ScriptedLLM:
    """Drafts the director question, keeps the trusted facts about directing, answers."""

    def draft(prompt: str) -> str:
        film = re.findall(r"Question: [Ww]ho directed (\w+)\?", prompt)[-1]
        lines = [f"CREATE (f:Film {{name: '{film}'}})"]
        for relation, value in BELIEFS[film]:
            lines.append(f"CREATE (f)-[:{relation}]->(:Thing {{name: '{value}'}})")
        return "Cypher:\n" + "\n".join(lines)

    def verify(prompt: str) -> str:
        trusted = prompt.rsplit("Trusted facts:", 1)[1].split("Draft:", 1)[0]
        return "\n".join(line for line in trusted.splitlines() if "direct" in line)

    def answer(prompt: str) -> str:
        facts = prompt.rsplit("Facts:", 1)[1]
        found = re.search(r"\| direct\w* (?:by )?\| ([^\n]+)", facts)
        return "{" + (found.group(1) if found else "unknown") + "}"

    return ScriptedLLM([("Plan:$", draft), ("Fixed facts:$", verify), ("Answer:$", answer)])


def pseudo_graph(graph: LocalStore | SparqlEndpoint) -> PseudoGraph:
    settings = Settings.load(config_path=None, overrides={"progress": False})
    return PseudoGraph(film_llm(), graph, encoder=open_encoder(settings))


def iris(answer: Answer) -> set[str]:
    return {e.iri for e in answer.entities}


def sources_of(answer: Answer) -> set[str | None]:
    return {t.triple.source for t in answer.evidence.triples}


@pytest.mark.parametrize(
    ("question", "expected", "iri"),
    [
        ("Who directed Titanic?", "James Cameron", CAMERON),
        ("Who directed Inception?", "Christopher Nolan", NOLAN),
    ],
)
def test_same_questions_from_each_source_alone_and_from_both(
    wikidata: LocalStore,
    freebase_server: tuple[SparqlEndpoint, subprocess.Popen[bytes]],
    question: str,
    expected: str,
    iri: dict[str, str],
) -> None:
    freebase, _ = freebase_server
    alone_wd = pseudo_graph(wikidata).run(question)
    alone_fb = pseudo_graph(freebase).run(question)
    both = pseudo_graph(wikidata).run(question, sources=[wikidata, freebase])
    for answer in (alone_wd, alone_fb, both):
        assert answer.answer == expected, answer.warnings
        assert answer.grounding == "neighbourhood"
        assert answer.usage["llm_calls"] == 3
    assert iris(alone_wd) == {iri["wikidata"]} and sources_of(alone_wd) == {"wikidata"}
    assert iris(alone_fb) == {iri["freebase"]} and sources_of(alone_fb) == {"freebase"}
    assert iris(both) == {iri["wikidata"], iri["freebase"]}
    assert sources_of(both) == {"wikidata", "freebase"}
    assert both.sources == ["wikidata", "freebase"]
    wording = {t.text for t in both.evidence.triples}
    assert any("| director |" in t for t in wording)  # Wikidata's relation label
    assert any("| directed by |" in t for t in wording)  # Freebase's


def test_the_popular_titanic_wins_over_its_namesake(wikidata: LocalStore) -> None:
    answer = pseudo_graph(wikidata).run("Who directed Titanic?")
    prune = next(s for s in answer.steps if s.name == "prune").parsed
    kept = prune["sources"]["wikidata"]["kept"]
    assert [g["iri"] for g in kept] == ["http://www.wikidata.org/entity/Q44578"]
    assert "Jean Negulesco" not in answer.answer
    # the draft's wrong director is replaced by the graph's during verification
    draft = next(s for s in answer.steps if s.name == "draft").parsed
    assert "Titanic | directed by | Steven Spielberg" in draft["triples"]
    verify = next(s for s in answer.steps if s.name == "verify").parsed
    assert verify["fixed"] == ["Titanic | director | James Cameron"]
    assert answer.answer == "James Cameron"


def test_a_source_stopped_mid_test_leaves_the_other(
    wikidata: LocalStore, freebase_server: tuple[SparqlEndpoint, subprocess.Popen[bytes]]
) -> None:
    freebase, process = freebase_server
    method = pseudo_graph(wikidata)
    before = method.run("Who directed Titanic?", sources=[wikidata, freebase])
    assert sources_of(before) == {"wikidata", "freebase"}
    process.terminate()
    process.wait(timeout=10)
    after = method.run("Who directed Titanic?", sources=[wikidata, freebase])
    assert after.answer == "James Cameron"
    assert iris(after) == {CAMERON["wikidata"]} and sources_of(after) == {"wikidata"}
    failures = [w for w in after.warnings if "source 'freebase' failed" in w]
    assert failures and "EndpointError" in failures[0]
    link = next(s for s in after.steps if s.name == "link")
    assert any("source 'freebase' failed" in note for note in link.notes)
    assert "freebase" not in link.parsed


def test_every_source_failing_raises_the_error(
    freebase_server: tuple[SparqlEndpoint, subprocess.Popen[bytes]],
) -> None:
    from middleware.errors import EndpointError

    freebase, process = freebase_server
    process.terminate()
    process.wait(timeout=10)
    with pytest.raises(EndpointError):
        pseudo_graph(freebase).run("Who directed Titanic?")
