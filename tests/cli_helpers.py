"""What the CLI tests share: running `kgmw` in-process, and a scripted LLM for RoK."""

from __future__ import annotations

import pytest

from middleware.cli import main
from middleware.llm.scripted import Reply, ScriptedLLM


def run(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, str, str]:
    """Exit status, stdout and stderr of one `kgmw` command."""
    code = main(list(args))
    out, err = capsys.readouterr()
    return code, out, err


def rok_script(answer: Reply = "James Cameron", choice: str = "James Cameron") -> ScriptedLLM:
    """Replies for RoK's four calls (and the baselines') about Titanic in the sample graph."""
    return ScriptedLLM(
        [
            ("Key entities:$", "Titanic; Kate Winslet; James Cameron"),
            ("Useful facts:$", "1"),
            ("Answer:$", answer),
            ("Choice:$", choice),
        ],
        default="Titanic was directed by James Cameron.",
    )
