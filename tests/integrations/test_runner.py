"""What the integrations share: which methods collect evidence, counts, lazy opening."""

from __future__ import annotations

import asyncio
import subprocess
import sys

import pytest

from middleware import workspace as workspace_module
from middleware.errors import BadRequest
from middleware.integrations import runner as runner_module
from middleware.integrations.runner import MethodRunner, check_k, evidence_methods
from middleware.methods.registry import SPECS
from tests.integrations.offline import QUESTION, offline_params


@pytest.mark.parametrize("name", [s.name for s in SPECS if not s.collects_evidence])
def test_methods_registered_without_evidence_answer_without_it(name: str) -> None:
    assert MethodRunner(name, **offline_params()).answer(QUESTION).grounding == "not-applicable"


def test_the_evidence_methods_are_the_graph_methods() -> None:
    assert {"plan", "qsm", "rok", "pg", "ksl"} <= set(evidence_methods())
    assert not {"io", "cot", "sc"} & set(evidence_methods())


@pytest.mark.parametrize("k", [0, -1, 2.5, "3", True, None])
def test_a_count_that_is_not_a_whole_positive_number_is_refused(k: object) -> None:
    with pytest.raises(BadRequest, match=f"k must be a whole number of at least 1, not {k!r}"):
        check_k(k)


def test_no_llm_is_opened_before_a_method_is_built(monkeypatch: pytest.MonkeyPatch) -> None:
    opened: list[object] = []
    monkeypatch.setattr(workspace_module, "open_llm", lambda settings: opened.append(settings))
    params = offline_params()
    runner = MethodRunner("plan", graph=params["graph"], settings=params["settings"])
    assert runner.graph is params["graph"] and not opened
    runner.method()
    assert opened == [params["settings"]]


@pytest.mark.parametrize(
    ("module", "framework", "extra"),
    [
        ("langchain", "langchain_core", "langchain"),
        ("langchain_tools", "langchain_core", "langchain"),
        ("llamaindex", "llama_index", "llamaindex"),
    ],
)
def test_an_integration_without_its_extra_says_what_to_install(
    module: str, framework: str, extra: str
) -> None:
    code = f"import sys\nsys.modules[{framework!r}] = None\nimport middleware.integrations.{module}"
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert done.returncode != 0
    last = done.stderr.strip().splitlines()[-1]
    assert last == (
        f"ModuleNotFoundError: this integration needs {framework}, which is not installed: "
        f"pip install 'kg-middleware[{extra}]'"
    )


def test_awaited_records_go_through_the_async_api(monkeypatch: pytest.MonkeyPatch) -> None:
    """The async retrievers await ``aask``: a cancelled await reaches the method."""
    awaited: list[str] = []
    real = runner_module.aask

    async def spy(method: object, question: str, **kwargs: object) -> object:
        awaited.append(question)
        return await real(method, question)  # type: ignore[arg-type]

    monkeypatch.setattr(runner_module, "aask", spy)
    runner = MethodRunner("plan", **offline_params())
    got = asyncio.run(runner.arecords(QUESTION, 3))
    assert awaited == [QUESTION]
    assert [r.key for r in got] == [r.key for r in runner.records(QUESTION, 3)]
