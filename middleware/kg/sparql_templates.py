"""SPARQL templates from ``sparql/*.rq`` with safely bound placeholders.

A placeholder is ``{{name}}`` (a term, an int, or a list joined by spaces for
``VALUES``), ``{{name|csv}}`` (a list joined by commas for ``IN (...)``) or
``{{name|alt}}`` (IRIs as a property-path alternative, ``(<a>|<b>)``) or
``{{name|step}}`` (an ``(IRI, forward)`` pair as ``<p>`` or its inverse ``^<p>``) or
``{{name|rows}}`` (tuples of terms as ``(<a> <b>) ...``, for ``VALUES (?x ?y)``) or
``{{name|variables}}`` (names as ``?a ?b``; ``-a`` as ``DESC(?a)``) or
``{{name|subquery}}`` (another template, as ``TemplateSet.render`` gave it, with no
prologue). Values are rendered from real
RDF terms, checked names and the project's own templates, so no caller text can change
the query's shape.

>>> from pyoxigraph import Literal, NamedNode
>>> render_template("SELECT * { ?s ?p {{o}} } LIMIT {{n}}", {"o": Literal('a"} #'), "n": 5})
'SELECT * { ?s ?p "a\\\\"} #" } LIMIT 5'
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from pathlib import Path

from pyoxigraph import BlankNode, Literal, NamedNode

from middleware.errors import ConfigError
from middleware.support.resources import resource_dir

PLACEHOLDER = re.compile(
    r"\{\{\s*([A-Za-z_][A-Za-z0-9_]*)\s*(?:\|\s*(csv|alt|step|rows|variables|subquery)\s*)?\}\}"
)
_VARIABLE = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
_PROLOGUE = re.compile(r"^\s*(?:PREFIX|BASE)\b", re.IGNORECASE | re.MULTILINE)


class Rendered(str):
    """A template rendered by ``TemplateSet.render``: text a ``subquery`` may hold."""


def _render_term(name: str, value: object) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int):
        return str(value)
    if isinstance(value, NamedNode | Literal):
        return str(value)
    if isinstance(value, BlankNode):
        raise ConfigError(f"placeholder {name!r}: blank nodes cannot be bound into a query")
    raise ConfigError(
        f"placeholder {name!r}: cannot bind a {type(value).__name__}; use an RDF term"
    )


def render_template(text: str, bindings: Mapping[str, object]) -> str:
    """Replace every placeholder in ``text``; a missing binding is a ConfigError."""

    def replace(match: re.Match[str]) -> str:
        name, joiner = match.group(1), match.group(2)
        if name not in bindings:
            raise ConfigError(f"template needs a value for {{{{{name}}}}}")
        value = bindings[name]
        if joiner == "step":
            if not (
                isinstance(value, tuple)
                and len(value) == 2
                and isinstance(value[0], NamedNode)
                and isinstance(value[1], bool)
            ):
                raise ConfigError(f"placeholder {name!r}|step needs (IRI, forward)")
            return ("" if value[1] else "^") + _render_term(name, value[0])
        if joiner == "rows":  # tuples of terms, for VALUES (?a ?b) { ... }
            if not isinstance(value, list | tuple) or not all(
                isinstance(row, tuple) for row in value
            ):
                raise ConfigError(f"placeholder {name!r}|rows needs a list of term tuples")
            return " ".join(
                "(" + " ".join(_render_term(name, term) for term in row) + ")" for row in value
            )
        if joiner == "variables":
            if not isinstance(value, tuple) or not all(
                isinstance(v, str) and _VARIABLE.fullmatch(v.removeprefix("-")) for v in value
            ):
                raise ConfigError(f"placeholder {name!r}|variables needs a tuple of names")
            # a name after "-" is ordered descending
            return " ".join(f"DESC(?{v[1:]})" if v.startswith("-") else f"?{v}" for v in value)
        if joiner == "subquery":
            if not isinstance(value, Rendered):
                raise ConfigError(f"placeholder {name!r}|subquery needs a rendered template")
            if _PROLOGUE.search(value):
                raise ConfigError(
                    f"placeholder {name!r}|subquery: a template ordered by its caller "
                    "cannot declare PREFIX or BASE; write its IRIs in full"
                )
            return str(value)
        if joiner == "alt":
            items = list(value) if isinstance(value, list | tuple) else [value]
            if not items or not all(isinstance(item, NamedNode) for item in items):
                raise ConfigError(f"placeholder {name!r}|alt needs one or more IRIs")
            return "(" + "|".join(_render_term(name, item) for item in items) + ")"
        if isinstance(value, list | tuple):
            parts = [_render_term(name, item) for item in value]
            return (", " if joiner == "csv" else " ").join(parts)
        return _render_term(name, value)

    return PLACEHOLDER.sub(replace, text)


class TemplateSet:
    """Named templates from the sparql/ folder; a profile may point a name elsewhere, and
    a dialect (a subfolder, e.g. ``virtuoso``) replaces the templates it holds."""

    def __init__(
        self,
        overrides: Mapping[str, str] | None = None,
        root: Path | None = None,
        dialect: str | None = None,
    ) -> None:
        self.root = root or resource_dir("sparql")
        self.overrides = dict(overrides or {})
        self.dialect = dialect if dialect and dialect != "sparql11" else None
        self._cache: dict[str, str] = {}

    def path(self, name: str) -> Path:
        if name in self.overrides:
            return self.root / self.overrides[name]
        if self.dialect and (self.root / self.dialect / f"{name}.rq").is_file():
            return self.root / self.dialect / f"{name}.rq"
        return self.root / f"{name}.rq"

    def text(self, name: str) -> str:
        if name not in self._cache:
            path = self.path(name)
            try:
                self._cache[name] = path.read_text(encoding="utf-8")
            except OSError as err:
                raise ConfigError(f"SPARQL template {name!r} not found at {path}") from err
        return self._cache[name]

    def render(self, name: str, **bindings: object) -> Rendered:
        return Rendered(render_template(self.text(name), bindings))
