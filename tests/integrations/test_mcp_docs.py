"""The MCP section of docs/integrations.md: its client example runs as written."""

from __future__ import annotations

import os
import re
import sys
from pathlib import Path

import pytest

DOCS = Path(__file__).resolve().parents[2] / "docs"


def mcp_snippet() -> str:
    section = (DOCS / "integrations.md").read_text().split("## MCP", 1)[1].split("\n## ", 1)[0]
    (snippet,) = re.findall(r"```python\n(.*?)```", section, flags=re.DOTALL)
    return snippet


@pytest.mark.timeout(120)
def test_the_client_example_runs(
    capfd: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    bin_dir = str(Path(sys.executable).parent)  # where `kgmw` is, as on an activated venv
    monkeypatch.setenv("PATH", bin_dir + os.pathsep + os.environ.get("PATH", ""))
    exec(compile(mcp_snippet(), "integrations.md", "exec"), {"__name__": "__main__"})
    out = capfd.readouterr().out.splitlines()
    assert out[0] == "['ask', 'sparql', 'neighbors', 'paths', 'link']"
    assert "Titanic | starring | Kate Winslet" in out[1]
    assert out[2].startswith("True ") and "ReadOnlyViolation" in out[2]
