"""``kgmw ask`` shows its steps on standard error when that is a terminal."""

from __future__ import annotations

import io
import os
import pty

import pytest

from middleware import workspace as workspace_module
from middleware.cli.progress import StepPrinter, step_printer
from middleware.llm.scripted import ScriptedLLM
from middleware.methods.progress import StepEvent
from tests.cli_helpers import rok_script, run


@pytest.fixture
def scripted(monkeypatch: pytest.MonkeyPatch) -> ScriptedLLM:
    llm = rok_script()
    monkeypatch.setattr(workspace_module, "open_llm", lambda settings: llm)
    return llm


def test_forced_progress_lists_the_steps_and_llm_calls(
    capsys: pytest.CaptureFixture[str], scripted: ScriptedLLM
) -> None:
    code, out, err = run(capsys, "ask", "Who directed Titanic?", "--progress", "--max-calls", "6")
    assert code == 0 and out.splitlines()[0] == "James Cameron"
    lines = [line for line in err.splitlines() if line.startswith("kgmw: ")]
    assert lines[0] == "kgmw: expand ..."  # RoK's first step
    calls = [line for line in lines if ": LLM call " in line]
    assert [line.rsplit(": ", 1)[1] for line in calls] == [
        f"LLM call {n} of at most 6" for n in range(1, 5)
    ]
    assert any(" done (" in line for line in lines)


def test_quiet_when_standard_error_is_not_a_terminal(
    capsys: pytest.CaptureFixture[str], scripted: ScriptedLLM
) -> None:
    code, _, err = run(capsys, "ask", "Who directed Titanic?")
    assert code == 0 and "kgmw: " not in err
    _, _, silenced = run(capsys, "ask", "Who directed Titanic?", "--no-progress")
    assert "kgmw: " not in silenced


def test_a_terminal_gets_the_printer_and_a_pipe_does_not() -> None:
    leader, follower = pty.openpty()
    with os.fdopen(follower, "w") as terminal:
        printer = step_printer(None, terminal)
        assert isinstance(printer, StepPrinter)
        printer(StepEvent("start", "link"))
        assert os.read(leader, 100).decode().replace("\r", "") == "kgmw: link ...\n"
    os.close(leader)
    assert step_printer(None, io.StringIO()) is None
    assert step_printer(False, io.StringIO()) is None
    assert isinstance(step_printer(True, io.StringIO()), StepPrinter)
