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


# A fenced block is ```python (run) or ```python no-run (needs a service: compiled only).
_BLOCK = re.compile(r"^```python( no-run)?\n(.*?)^```", flags=re.DOTALL | re.MULTILINE)
INTEGRATION_SECTIONS = {
    "LangChain": ["James Cameron | directed | ", "SPARQL updates are not allowed here"],
    "LlamaIndex": ["James Cameron | directed | "],
}
# sections whose examples another test runs: the MCP client needs a server process
CHECKED_ELSEWHERE = {"MCP": "tests/integrations/test_mcp_docs.py"}


def python_blocks(markdown: str) -> list[tuple[str, str, bool]]:
    """(the ``## `` section it is in, its code, whether it runs) of each Python block."""
    blocks = []
    for part in re.split(r"^## ", markdown, flags=re.MULTILINE)[1:]:
        heading = part.split("\n", 1)[0].strip()
        blocks += [(heading, m.group(2), not m.group(1)) for m in _BLOCK.finditer(part)]
    return blocks


def test_every_integration_example_is_in_a_checked_section() -> None:
    blocks = python_blocks((DOCS / "integrations.md").read_text())
    assert {section for section, _, _ in blocks} == {*INTEGRATION_SECTIONS, *CHECKED_ELSEWHERE}
    assert any(not runs for _, _, runs in blocks), "the ChatOpenAI example is shown, not run"
    for section, code, _ in blocks:
        compile(code, f"docs/integrations.md ({section})", "exec")


@pytest.mark.slow
@pytest.mark.parametrize("section", sorted(INTEGRATION_SECTIONS))
def test_integration_examples_run(section: str, capsys: pytest.CaptureFixture[str]) -> None:
    """A section's runnable blocks, in order, in one namespace, offline on the sample."""
    namespace: dict[str, object] = {}
    for heading, code, runs in python_blocks((DOCS / "integrations.md").read_text()):
        if heading == section and runs:
            exec(compile(code, f"docs/integrations.md ({section})", "exec"), namespace)
    out = capsys.readouterr().out
    for expected in INTEGRATION_SECTIONS[section]:
        assert expected in out, out


def test_architecture_draws_every_layer_in_order() -> None:
    """docs/architecture.md's layer list names each layer of ``LAYERS``, in that order,
    each with a line that says what it holds."""
    from tests.test_architecture import LAYERS

    page = (DOCS / "architecture.md").read_text(encoding="utf-8")
    drawn = page.split("## Layers", 1)[1].split("```")[1]
    entries = [
        (m.group(1).rstrip("/").removesuffix(".py"), m.group(2).strip())
        for m in re.finditer(r"^(\S+)\s+(.*)$", drawn, re.MULTILINE)
    ]
    assert [name for name, _ in entries] == list(LAYERS)
    assert all(len(purpose.split()) >= 3 for _, purpose in entries)


def test_method_lists_in_the_docs_name_every_registered_method() -> None:
    """The method lists of cli.md (``--method``) and server.md (``/v1/models``) hold
    every method of the registry, in its order."""
    from middleware.methods.registry import METHODS

    cli = (DOCS / "cli.md").read_text(encoding="utf-8")
    flag = re.search(r"`--method ([a-z+|]+)`", cli)
    assert flag is not None
    assert set(flag.group(1).split("|")) == set(METHODS)
    server = (DOCS / "server.md").read_text(encoding="utf-8")
    models = re.search(
        r"\| `GET /v1/models` \| the models: `kgmw` \(default method\), (.*) \|", server
    )
    assert models is not None
    assert re.findall(r"`kgmw-([a-z+]+)`", models.group(1)) == list(METHODS)


GRAPH_COMMANDS = ("neighbors", "paths", "link", "query", "describe")


def test_readme_graph_commands_on_the_sample_run(capsys: pytest.CaptureFixture[str]) -> None:
    """The README's first command-line block runs on the bundled sample: its graph
    commands (the ones needing no model) answer, each with some output."""
    import shlex

    from middleware.cli import main

    readme = (DOCS.parent / "README.md").read_text(encoding="utf-8")
    block = readme.split("## On the command line", 1)[1].split("```")[1]
    lines = [shlex.split(line, comments=True) for line in block.strip().splitlines()]
    graph = [words[1:] for words in lines if words[0] == "kgmw" and words[1] in GRAPH_COMMANDS]
    assert len(graph) >= 4
    for args in graph:
        code = main(args)
        out, err = capsys.readouterr()
        assert code == 0 and out.strip(), (args, err)
