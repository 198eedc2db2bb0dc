"""Progress bars: live on a terminal, one final line anywhere else."""

from __future__ import annotations

import io
from pathlib import Path

import pytest

from middleware.support.progress_bar import progress_bar
from tests.cli_helpers import run
from tests.conftest import FILMS


class Terminal(io.StringIO):
    def isatty(self) -> bool:
        return True


def test_a_file_gets_one_final_line_and_no_carriage_returns() -> None:
    out = io.StringIO()
    with progress_bar(total=100, unit="q", file=out, mininterval=0) as bar:
        for _ in range(100):
            bar.update(1)
    assert "\r" not in out.getvalue()
    assert out.getvalue().count("\n") == 1 and "100/100" in out.getvalue()


def test_an_idle_or_disabled_bar_writes_nothing_to_a_file() -> None:
    for options in ({}, {"disable": True}):
        out = io.StringIO()
        with progress_bar(total=5, file=out, **options):
            pass
        assert out.getvalue() == ""


def test_a_terminal_gets_the_live_bar() -> None:
    out = Terminal()
    with progress_bar(total=3, file=out, mininterval=0) as bar:
        bar.update(3)
    assert "\r" in out.getvalue()


def test_kgmw_load_writes_one_progress_line_off_a_terminal(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    code, _, err = run(capsys, "load", str(FILMS), "--store", str(tmp_path / "s"), "--progress")
    assert code == 0
    assert "\r" not in err and err.count("triples [") == 1
