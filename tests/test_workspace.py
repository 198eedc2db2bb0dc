"""One assembly for every front end: the same linking everywhere, one encoder."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from middleware import workspace as workspace_module
from middleware.config import Settings
from middleware.errors import ConfigError
from middleware.integrations.mcp_tools import GraphTools
from middleware.kg.base import KnowledgeGraph
from middleware.kg.sample import sample_store
from middleware.methods import registry
from middleware.methods.method import MethodBase
from middleware.methods.registry import METHODS
from middleware.server import create_app
from middleware.server.state import ServiceState
from middleware.text import linking
from middleware.text.embeddings.encoders import Encoder, HashEncoder
from middleware.workspace import Workspace
from tests.cli_helpers import run

QUESTION = "Who directed Titanic?"
# Linking settings of the endpoint source, all off their defaults (5, 85, 8)
LIMIT, CUTOFF, MAX_QUERIES = 2, 70.0, 3


def scripted() -> Any:
    from middleware.llm.scripted import ScriptedLLM

    return ScriptedLLM(default="James Cameron")


@pytest.fixture
def config(tmp_path: Path, oxigraph_server: str) -> Path:
    path = tmp_path / "kgmw.toml"
    path.write_text(
        'encoder = "hash"\n\n'
        f'[sources.remote]\nendpoint = "{oxigraph_server}"\nlink_limit = {LIMIT}\n'
        f"fuzzy_cutoff = {CUTOFF}\nlink_max_queries = {MAX_QUERIES}\n"
    )
    return path


@pytest.fixture
def linkers(monkeypatch: pytest.MonkeyPatch) -> list[tuple[str, int, float, int]]:
    """Every linker built from now on: its graph's name and its three settings."""
    built: list[tuple[str, int, float, int]] = []
    real = linking.EntityLinker.__init__

    def spy(self: linking.EntityLinker, graph: KnowledgeGraph, **options: Any) -> None:
        real(self, graph, **options)
        built.append((graph.name, self.limit, self.fuzzy_cutoff, self.max_queries))

    monkeypatch.setattr(linking.EntityLinker, "__init__", spy)
    return built


def linked_in(answer: dict[str, Any]) -> list[str]:
    """The entities QSM's link step found, in order."""
    step = next(s for s in answer["steps"] if s["name"] == "link")
    return [n["iri"] for names in step["parsed"].values() for n in names["linked"]]


def test_every_front_end_links_with_the_sources_settings(
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
    config: Path,
    linkers: list[tuple[str, int, float, int]],
) -> None:
    monkeypatch.setattr(workspace_module, "open_llm", lambda settings: scripted())
    settings = Settings.load(config_path=str(config), env={})

    code, out, err = run(
        capsys, "--config", str(config), "link", "Jim Cameron", "--source", "remote", "--json"
    )
    assert code == 0, err
    by_cli = [(e["iri"], e["score"]) for e in json.loads(out)]
    tools = GraphTools(ServiceState(settings, llm=scripted()))
    by_mcp = [
        (e["iri"], e["score"]) for e in tools.link("Jim Cameron", source="remote")["entities"]
    ]
    assert by_cli == by_mcp and len(by_cli) <= LIMIT

    code, out, err = run(
        capsys, "--config", str(config), "ask", QUESTION, "--source", "remote",
        "--method", "qsm", "--json", "--no-progress",
    )  # fmt: skip
    assert code == 0, err
    asked = linked_in(json.loads(out))
    app = create_app(settings, llm=scripted())
    served = app.test_client().post(
        "/v1/answer", json={"question": QUESTION, "method": "qsm", "sources": ["remote"]}
    )
    assert served.status_code == 200, served.get_data(as_text=True)
    assert asked == linked_in(served.get_json()) and asked

    # each of the four built its linkers with the source's settings, none with defaults
    assert linkers and {(limit, cutoff, most) for _, limit, cutoff, most in linkers} == {
        (LIMIT, CUTOFF, MAX_QUERIES)
    }


def test_one_encoder_for_every_method_and_the_service(monkeypatch: pytest.MonkeyPatch) -> None:
    opened: list[Encoder] = []

    def counting(settings: Settings) -> Encoder:
        opened.append(HashEncoder(dim=64))
        return opened[-1]

    monkeypatch.setattr(registry, "open_encoder", counting)
    settings = Settings.build({"encoder": "hash"})
    work = Workspace(settings, llm=scripted(), graphs={"films": sample_store()})
    for name in METHODS:
        work.method(name)
    assert work.encoder is opened[0]
    assert len(opened) == 1

    opened.clear()
    app = create_app(settings, llm=scripted(), graphs={"films": sample_store()})
    client = app.test_client()
    for name in ("qsm", "pg", "plan", "ksl+plan", "qsm+plan"):
        reply = client.post("/v1/answer", json={"question": QUESTION, "method": name})
        assert reply.status_code == 200, reply.get_data(as_text=True)
    assert len(opened) == 1


def test_a_question_over_several_sources_links_each_with_its_own_settings(
    config: Path, linkers: list[tuple[str, int, float, int]]
) -> None:
    """A method built over one source links another source's graph with that source's
    settings, not its own (a question may name several sources)."""
    settings = Settings.load(config_path=str(config), env={})
    work = Workspace(settings, llm=scripted(), default="sample")
    for name in ("qsm", "qsm+plan", "ksl+plan", "pg"):
        method = work.method(name, "sample")
        assert isinstance(method, MethodBase)
        linker = method.linker(work.graph("remote"))
        assert (linker.limit, linker.fuzzy_cutoff, linker.max_queries) == (
            LIMIT,
            CUTOFF,
            MAX_QUERIES,
        )
        own = method.linker(work.graph("sample"))
        assert (own.limit, own.max_queries) == (5, 8)  # the sample's: the defaults


def test_a_named_default_source_keeps_its_table_and_flags_win(config: Path) -> None:
    settings = Settings.load(config_path=str(config), env={})
    work = Workspace(settings, default="remote", overrides={"timeout": 7.0})
    assert work.source_names() == ["remote"]
    assert work.source_settings().link_limit == LIMIT
    assert work.source_settings().timeout == 7.0
    assert work.graph().name == "remote"
    with pytest.raises(ConfigError, match="no source named 'nowhere'"):
        Workspace(settings, default="nowhere")
