"""Every setting, CLI command and option, and error class is documented."""

from __future__ import annotations

import re
from pathlib import Path

import click
import pytest

from middleware import errors
from middleware.cli import cli
from middleware.config import REGISTRY
from middleware.config.docs import settings_markdown

DOCS = Path(__file__).resolve().parent.parent / "docs"


def test_settings_reference_is_current() -> None:
    assert (DOCS / "settings.md").read_text() == settings_markdown(), (
        "docs/settings.md is stale: kgmw settings --markdown > docs/settings.md"
    )


def test_every_setting_documented() -> None:
    text = (DOCS / "settings.md").read_text()
    for setting in REGISTRY.values():
        assert f"`{setting.name}`" in text, setting.name
        assert f"`{setting.env_var}`" in text, setting.env_var


def _commands() -> list[tuple[str, click.Command]]:
    assert isinstance(cli, click.Group)
    return sorted(cli.commands.items())


@pytest.mark.parametrize(("name", "command"), _commands())
def test_every_cli_command_and_option_documented(name: str, command: click.Command) -> None:
    text = (DOCS / "cli.md").read_text()
    assert f"## `kgmw {name}" in text, name
    section = text.split(f"## `kgmw {name}", 1)[1].split("\n## ", 1)[0]
    for param in command.params:
        if isinstance(param, click.Option):
            for flag in param.opts + param.secondary_opts:
                if flag.startswith("--") and flag != "--help":
                    assert f"`{flag}" in section, f"kgmw {name} {flag}"


def test_global_options_documented() -> None:
    text = (DOCS / "cli.md").read_text()
    for param in cli.params:
        for flag in param.opts:
            assert f"`{flag}" in text


def test_every_error_documented() -> None:
    text = (DOCS / "errors.md").read_text()
    for value in vars(errors).values():
        if isinstance(value, type) and issubclass(value, errors.MiddlewareError):
            assert f"`{value.__name__}`" in text, value.__name__
            assert str(value.status) in text


def _readme_snippets() -> list[str]:
    text = (DOCS.parent / "README.md").read_text()
    return re.findall(r"```python\n(.*?)```", text, flags=re.DOTALL)


@pytest.mark.slow
def test_readme_python_snippets_run(capsys: pytest.CaptureFixture[str]) -> None:
    """README's snippets, in order, in one namespace, with the embedded LLM and encoder."""
    snippets = _readme_snippets()
    assert len(snippets) >= 2
    namespace: dict[str, object] = {}
    for snippet in snippets:
        exec(compile(snippet, "README.md", "exec"), namespace)
    out = capsys.readouterr().out
    assert "Heat —starring→ Val Kilmer" in out
    assert '"evidence"' in out and '"usage"' in out
