"""Every `--flag` an error message or hint names exists on some kgmw command."""

from __future__ import annotations

import ast
import re
from pathlib import Path

import click

from middleware.cli import cli

PACKAGE = Path(__file__).resolve().parents[2] / "middleware"
FLAG = re.compile(r"(?<![\w-])--[a-z][a-z0-9-]*")


def _known_flags() -> set[str]:
    flags: set[str] = set()
    assert isinstance(cli, click.Group)
    commands: list[click.Command] = [cli]
    while commands:  # groups' subcommands too (`kgmw datasets fetch --unverified`)
        command = commands.pop()
        for param in command.params:
            flags.update(param.opts + param.secondary_opts)
        if isinstance(command, click.Group):
            commands += list(command.commands.values())
    return flags


def _texts(node: ast.AST) -> list[str]:
    """The literal text of a string, f-string or concatenation of them."""
    if isinstance(node, ast.Constant) and isinstance(node.value, str):
        return [node.value]
    if isinstance(node, ast.JoinedStr):
        return [t for value in node.values for t in _texts(value)]
    if isinstance(node, ast.BinOp):
        return _texts(node.left) + _texts(node.right)
    return []


def _error_texts() -> list[tuple[str, str]]:
    """(where, text) for every hint= and every message given to an *Error/BadRequest/NotFound."""
    found = []
    for path in sorted(PACKAGE.rglob("*.py")):
        tree = ast.parse(path.read_text(encoding="utf-8"))
        for node in ast.walk(tree):
            if not isinstance(node, ast.Call):
                continue
            parts = [k.value for k in node.keywords if k.arg == "hint"]
            name = node.func.id if isinstance(node.func, ast.Name) else ""
            if name.endswith(("Error", "BadRequest", "NotFound", "Timeout")) and node.args:
                parts.append(node.args[0])
            for part in parts:
                where = f"{path.relative_to(PACKAGE.parent)}:{node.lineno}"
                found.extend((where, text) for text in _texts(part))
    return found


def test_hints_name_only_flags_that_exist() -> None:
    known = _known_flags()
    texts = _error_texts()
    assert len(texts) > 100  # the scan reads the package's errors
    unknown = [
        f"{where}: {flag}"
        for where, text in texts
        for flag in FLAG.findall(text)
        if flag not in known
    ]
    assert not unknown, unknown


def test_the_scan_catches_a_made_up_flag() -> None:
    tree = ast.parse('raise BadRequest("x", hint="raise --no-such-flag")')
    call = next(n for n in ast.walk(tree) if isinstance(n, ast.Call))
    hint = next(k.value for k in call.keywords if k.arg == "hint")
    assert FLAG.findall(_texts(hint)[0]) == ["--no-such-flag"]
    assert "--no-such-flag" not in _known_flags()
