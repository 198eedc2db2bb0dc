"""``kgmw ask``: scripted for the plumbing, the embedded model for the real thing."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
import rdflib

from middleware import workspace as workspace_module
from middleware.cli import main
from middleware.config import Settings
from middleware.kg.sample import sample_store
from middleware.llm.scripted import ScriptedLLM
from middleware.testing.llms import first_option_or
from tests.cli_helpers import rok_script, run
from tests.conftest import FILMS


@pytest.fixture
def scripted(monkeypatch: pytest.MonkeyPatch) -> ScriptedLLM:
    llm = rok_script()
    monkeypatch.setattr(workspace_module, "open_llm", lambda settings: llm)
    return llm


def test_human_output(capsys: pytest.CaptureFixture[str], scripted: ScriptedLLM) -> None:
    code, out, err = run(capsys, "ask", "Who directed Titanic, with Kate Winslet?")
    assert code == 0, err
    lines = out.splitlines()
    assert lines[0] == "James Cameron"
    assert "Evidence paths (sample):" in lines
    assert "  Titanic —directed by→ James Cameron" in lines
    assert any(
        line.startswith("Answer entities: James Cameron <https://kgmw.dev/") for line in lines
    )
    assert lines[-1].startswith("usage: rok · 4 LLM calls · ")
    assert "SPARQL queries" in lines[-1]


def test_supported_and_withheld_answers_in_text(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    code, out, err = run(capsys, "ask", "Who directed Titanic, with Kate Winslet?")
    lines = out.splitlines()
    assert code == 0 and lines[1].startswith("confidence ") and "Supported by:" in lines, err
    # an answer the evidence mentions nowhere near the question's entities is withheld
    llm = rok_script(answer="Ridley Scott")
    monkeypatch.setattr(workspace_module, "open_llm", lambda settings: llm)
    code, out, _ = run(capsys, "ask", "Who directed Titanic, with Kate Winslet?")
    lines = out.splitlines()
    assert code == 0 and lines[0] == "The graph does not hold the answer."
    assert "Ridley Scott" not in lines[1] and "--guess" in lines[1]
    code, out, _ = run(capsys, "ask", "Who directed Titanic, with Kate Winslet?", "--guess")
    assert out.splitlines()[1].startswith("Best guess: Ridley Scott (confidence 0.")
    code, out, _ = run(capsys, "ask", "Who directed Titanic, with Kate Winslet?", "--json")
    data = json.loads(out)
    assert data["answer"] is None and data["found"] is False
    assert data["guess"]["answer"] == "Ridley Scott"


def test_baseline_and_json(capsys: pytest.CaptureFixture[str], scripted: ScriptedLLM) -> None:
    code, out, _ = run(capsys, "ask", "Who directed Titanic?", "--method", "io", "--json")
    data = json.loads(out)
    assert code == 0 and data["method"] == "io" and data["usage"]["llm_calls"] == 1


def test_rdf_output(capsys: pytest.CaptureFixture[str], scripted: ScriptedLLM) -> None:
    code, out, _ = run(capsys, "ask", "Who directed Titanic?", "--rdf")
    graph = rdflib.Graph().parse(data=out, format="turtle")
    assert code == 0 and len(graph) > 20


def test_choices_and_budget(capsys: pytest.CaptureFixture[str], scripted: ScriptedLLM) -> None:
    code, out, _ = run(
        capsys,
        "ask",
        "Who directed Titanic?",
        "--choice",
        "Sam Mendes",
        "--choice",
        "James Cameron",
        "--json",
    )
    assert code == 0 and json.loads(out)["choices"] == ["Sam Mendes", "James Cameron"]
    code, _, err = run(capsys, "ask", "Who directed Titanic?", "--max-calls", "2")
    assert code == 2
    assert err.startswith("kgmw: error: step 'filter' would be LLM call 3") or "LLM call 3" in err


def test_bad_flag_mixes(
    capsys: pytest.CaptureFixture[str], scripted: ScriptedLLM, tmp_path: Path
) -> None:
    code, _, err = run(capsys, "ask", "Q?", "--json", "--rdf")
    assert code == 2 and "not both" in err
    store = str(tmp_path / "store")
    code, _, err = run(capsys, "ask", "Q?", "--source", "sample", "--store", store)
    assert code == 2 and "not both" in err
    code, _, err = run(capsys, "ask", "Q?", "--source", "nowhere")
    assert code == 1 and "no source named 'nowhere'" in err and "sample" in err
    code, _, err = run(capsys, "ask", "   ")
    assert code == 2 and "question is empty" in err


def test_named_source_from_config(
    capsys: pytest.CaptureFixture[str], scripted: ScriptedLLM, tmp_path: Path
) -> None:
    store = tmp_path / "films"
    assert main(["load", str(FILMS), "--store", str(store), "--no-progress"]) == 0
    capsys.readouterr()
    config = tmp_path / "kgmw.toml"
    config.write_text(f'[kgmw]\nmax_calls = 6\n\n[sources.films]\nstore = "{store}"\n')
    code, out, err = run(
        capsys,
        "--config",
        str(config),
        "ask",
        "Who directed Titanic?",
        "--source",
        "films",
        "--json",
    )
    assert code == 0, err
    data = json.loads(out)
    assert data["sources"] == ["films"]
    assert data["entities"][0]["iri"] == "http://example.org/film/Cameron"


def test_settings_for_source(tmp_path: Path) -> None:
    config = tmp_path / "kgmw.toml"
    config.write_text(
        'timeout = 5\n[sources.wiki]\nendpoint = "http://localhost:1/sparql"\nprofile = "wikidata"\n'
    )
    settings = Settings.load(config_path=config, env={})
    assert settings.source_names == ["wiki"]
    wiki = settings.for_source("wiki")
    assert (wiki.endpoint, wiki.profile, wiki.timeout) == (
        "http://localhost:1/sparql",
        "wikidata",
        5.0,
    )
    assert wiki.source_of("endpoint") == "source wiki"
    assert settings.for_source("sample").endpoint is None
    config.write_text("[sources.bad]\nnot_a_setting = 1\n")
    with pytest.raises(Exception, match="unknown setting 'not_a_setting'"):
        Settings.load(config_path=config, env={})


def _holds(graph: object, triple: dict[str, dict[str, str]]) -> bool:
    def term(t: dict[str, str]) -> str:
        if t["type"] == "uri":
            return f"<{t['value']}>"
        value = json.dumps(t["value"])
        if "xml:lang" in t:
            return f"{value}@{t['xml:lang']}"
        return f"{value}^^<{t['datatype']}>" if "datatype" in t else value

    query = (
        f"ASK {{ {term(triple['subject'])} {term(triple['predicate'])} {term(triple['object'])} }}"
    )
    return bool(graph.query(query).boolean)  # type: ignore[attr-defined]


def test_ask_with_the_embedded_model(capsys: pytest.CaptureFixture[str]) -> None:
    """The main job: `kgmw ask --json` over the sample graph with the real embedded model."""
    code, out, err = run(capsys, "ask", "Who directed the film Titanic?", "--json")
    assert code == 0, err
    data = json.loads(out)
    assert data["method"] == "rok" and data["sources"] == ["sample"]
    assert isinstance(data["answer"], str)
    assert 3 <= data["usage"]["llm_calls"] <= 4
    assert data["usage"]["prompt_tokens"] > 0 and data["usage"]["completion_tokens"] > 0
    names = [s["name"] for s in data["steps"]]
    assert names[:3] == ["expand", "extract", "link"] and "answer" in names
    assert all(s["prompt"] for s in data["steps"] if s["llm_calls"])
    linked = data["steps"][2]["parsed"]["linked"]
    assert any(k["label"] == "Titanic" for k in linked)
    graph = sample_store()
    evidence = [h["triple"] for p in data["evidence"]["paths"] for h in p["hops"]]
    evidence += data["evidence"]["triples"]
    assert evidence, "the sample graph holds Titanic, so there must be evidence"
    for triple in evidence:
        assert triple["source"] == "sample"
        assert _holds(graph, triple), triple
    for entity in data["entities"]:
        assert entity["iri"].startswith("https://kgmw.dev/metaqa/entity/")


@pytest.mark.slow
@pytest.mark.parametrize("method", ["pg", "qsm"])
def test_pseudo_graph_and_qsm_with_the_embedded_model(
    capsys: pytest.CaptureFixture[str], method: str
) -> None:
    """`kgmw ask --method pg|qsm` over the sample graph: the real model and the real encoder."""
    code, out, err = run(
        capsys, "ask", "Who directed the film Titanic?", "--method", method, "--json"
    )
    assert code == 0, err
    data = json.loads(out)
    assert data["method"] == method and isinstance(data["answer"], str)
    names = [s["name"] for s in data["steps"]]
    if method == "pg":
        assert names[:6] == ["draft", "link", "base_graph", "encode", "match", "prune"]
        assert 2 <= data["usage"]["llm_calls"] <= 3  # no verification when nothing is grounded
        linked = data["steps"][1]["parsed"]["sample"]["linked"]
        assert any(n["label"] == "Titanic" for n in linked)
        assert data["steps"][2]["parsed"]["sample"] > 0  # a base graph was fetched
    else:
        assert data["usage"]["llm_calls"] == 1
        assert data["evidence"]["triples"], "Titanic's neighbourhood gives QSM its triples"
    graph = sample_store()
    for triple in data["evidence"]["triples"]:
        assert triple["source"] == "sample" and _holds(graph, triple), triple


def _retrieval(data: dict[str, Any]) -> tuple[list[Any], list[Any], list[Any]]:
    """What a run took from the graph, source names left out: linked entities, base
    graph sizes, evidence triples."""
    steps = {s["name"]: s["parsed"] for s in data["steps"]}
    linked = [
        sorted(e["iri"] for e in share["linked"]) for share in (steps.get("link") or {}).values()
    ]
    base = list((steps.get("base_graph") or {}).values())
    triples = [
        (t["subject"]["value"], t["predicate"]["value"], t["object"]["value"], t["text"])
        for t in data["evidence"]["triples"]
    ]
    return linked, base, triples


@pytest.mark.parametrize("method", ["qsm", "pg"])
def test_an_endpoint_links_and_retrieves_like_the_store(
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
    sample_server: str,
    method: str,
) -> None:
    """The sample graph in the store and behind an Oxigraph server: same links, same evidence."""
    monkeypatch.setattr(workspace_module, "open_llm", lambda settings: first_option_or("Avatar"))
    question = ["ask", "Which films did James Cameron direct?", "--method", method, "--json"]
    code, on_store, err = run(capsys, *question)
    assert code == 0, err
    code, on_endpoint, err = run(
        capsys, *question, "--endpoint", sample_server, "--profile", "metaqa"
    )
    assert code == 0, err
    store, endpoint = json.loads(on_store), json.loads(on_endpoint)
    assert _retrieval(store) == _retrieval(endpoint)
    linked, base, triples = _retrieval(endpoint)
    assert linked == [["https://kgmw.dev/metaqa/entity/James%20Cameron"]] and base[0] > 0
    if method == "qsm":
        assert any("James%20Cameron" in t[0] or "James%20Cameron" in t[2] for t in triples)
