"""Caller SPARQL, checked on exactly the text that runs.

A caller's query is rewritten once into a canonical text: ``\\u``/``\\U`` escapes are
expanded (SPARQL 1.1 §19.2), comments are dropped and every string literal is written
again as one double-quoted line. The guard reads the tokens of that text (query form,
``SERVICE`` endpoints, nesting depth, operator count) and the engine is handed the very
same text, so an escape or a comment cannot show the guard one query and the engine
another. Nothing here takes a lock; a 100 kB query is checked in milliseconds.

>>> q = guard_query('SELECT * # a comment\\n WHERE { ?s ?p "it\\'s" }')
>>> q.kind, q.text
('select', 'SELECT * \\n\\n WHERE { ?s ?p "it\\'s" }')
>>> allow = QueryPolicy(services=("http://10.0.0.1/",))
>>> guard_query("SELECT * { SERVICE <http://10.0.0.1/> { ?s ?p ?o } }", allow).services
('http://10.0.0.1/',)
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Literal
from urllib.parse import urljoin

from middleware.errors import BadRequest, PayloadTooLarge, QueryTooComplex, ReadOnlyViolation
from middleware.kg.sparql_lexer import IRIREF, Token, canonical, expand_escapes, iter_tokens

QueryKind = Literal["select", "ask", "construct", "describe"]
_KINDS: dict[str, QueryKind] = {
    "SELECT": "select",
    "ASK": "ask",
    "CONSTRUCT": "construct",
    "DESCRIBE": "describe",
}
_UPDATES = {"INSERT", "DELETE", "LOAD", "CLEAR", "DROP", "CREATE", "ADD", "MOVE", "COPY", "WITH"}
# keywords that add a node to the query's algebra, counted with the operators
_STRUCTURAL = {"OPTIONAL", "UNION", "MINUS", "FILTER", "BIND", "VALUES", "GRAPH", "EXISTS"}
_OPENERS, _CLOSERS = "{([", "})]"

_IRIREF = IRIREF
XSD = "http://www.w3.org/2001/XMLSchema#"


@dataclass(frozen=True)
class QueryLimits:
    """What one caller query may be: size, nesting and operator count (the engine's
    parser and evaluator recurse, and a few kB of nesting crash them)."""

    max_chars: int = 100_000
    max_depth: int = 64
    max_terms: int = 1_000
    max_result_bytes: int = 32 << 20  # what its result may weigh (sparql_max_result_mb)


@dataclass(frozen=True)
class QueryPolicy:
    """The limits, the ``SERVICE`` endpoints a caller's query may call (none by
    default: federation is for operators who list the endpoints they trust) and the
    extension functions a remote engine may run for it."""

    limits: QueryLimits = field(default_factory=QueryLimits)
    services: tuple[str, ...] = ()
    # extension functions a remote engine may run for a caller (IRI prefixes): casts only
    functions: tuple[str, ...] = (XSD,)


@dataclass(frozen=True)
class QueryDataset:
    """The dataset the SPARQL Protocol names (``default-graph-uri``, ``named-graph-uri``);
    it replaces the query's own FROM and FROM NAMED."""

    default_graphs: tuple[str, ...] = ()
    named_graphs: tuple[str, ...] = ()

    def __bool__(self) -> bool:
        return bool(self.default_graphs or self.named_graphs)

    def check(self) -> None:
        """Refuse a graph name that is not an absolute IRI."""
        for iri in (*self.default_graphs, *self.named_graphs):
            if not _IRIREF.fullmatch(f"<{iri}>") or ":" not in iri:
                raise BadRequest(
                    f"graph name {iri[:100]!r} is not an absolute IRI",
                    hint="default-graph-uri and named-graph-uri take IRIs such as http://example.org/g",
                )


def with_base(sparql: str, base_iri: str | None) -> str:
    """``sparql`` with a service base IRI in front (a BASE in the query still wins).

    >>> with_base("ASK { <x> ?p ?o }", "http://example.org/sparql")
    'BASE <http://example.org/sparql>\\nASK { <x> ?p ?o }'
    """
    if not base_iri:
        return sparql
    if not _IRIREF.fullmatch(f"<{base_iri}>") or ":" not in base_iri:
        raise BadRequest(
            f"base IRI {base_iri[:100]!r} is not an absolute IRI",
            hint="set sparql_base_iri to an IRI such as http://example.org/sparql",
        )
    return f"BASE <{base_iri}>\n{sparql}"


@dataclass(frozen=True)
class GuardedQuery:
    """A checked query: the canonical ``text`` to run, its form, and what it calls.

    ``services`` names each ``SERVICE`` endpoint, ``None`` for a variable one.
    """

    text: str
    kind: QueryKind
    services: tuple[str | None, ...] = ()
    depth: int = 0
    terms: int = 0


def guard_query(sparql: str, policy: QueryPolicy | None = None) -> GuardedQuery:
    """Check a caller's query under ``policy`` and return the text to run.

    Raises ReadOnlyViolation for an update, PayloadTooLarge past the size limit and
    BadRequest for junk, a limit passed or a ``SERVICE`` off the allowlist.

    >>> guard_query("DROP ALL")
    Traceback (most recent call last):
    ...
    middleware.errors.ReadOnlyViolation: SPARQL updates are not allowed here: this request is DROP (send a SELECT, ASK, CONSTRUCT or DESCRIBE query)
    >>> guard_query("SELECT * { SERVICE <http://10.0.0.1/> { ?s ?p ?o } }", QueryPolicy())
    Traceback (most recent call last):
    ...
    middleware.errors.BadRequest: SERVICE <http://10.0.0.1/> is not allowed here (federated queries may only call: no endpoint (set sparql_service_allowlist))
    """
    policy = policy or QueryPolicy()
    limits = policy.limits
    if len(sparql) > limits.max_chars:
        raise PayloadTooLarge(
            f"the query has {len(sparql)} characters, more than the limit of {limits.max_chars}",
            hint="shorten it, or raise the setting sparql_max_query_chars",
        )
    shape = _Shape(limits)
    tokens = []
    for token in iter_tokens(expand_escapes(sparql)):  # junk stops at its first limit
        tokens.append(token)
        shape.add(token)
    text = canonical(tokens)
    significant = [t for t in tokens if t.kind != "space"]
    depth, terms = shape.deepest, shape.terms
    kind, prefixes, base = _form(significant)
    services = _services(significant, prefixes, base)
    guarded = GuardedQuery(text, kind, services, depth, terms)
    check_services(guarded, policy.services)
    return guarded


def check_services(query: GuardedQuery, allowed: Sequence[str]) -> None:
    """Refuse a query that calls an endpoint off ``allowed`` (or one named by a variable)."""
    listed = ", ".join(allowed) if allowed else "no endpoint (set sparql_service_allowlist)"
    for iri in query.services:
        if iri is None:
            raise BadRequest(
                "SERVICE with a variable endpoint is not allowed here",
                hint="name the endpoint IRI in the query",
            )
        if iri not in allowed:
            raise BadRequest(
                f"SERVICE <{iri}> is not allowed here",
                hint=f"federated queries may only call: {listed}",
            )


class _Shape:
    """Nesting depth and operator count, checked token by token."""

    def __init__(self, limits: QueryLimits) -> None:
        self.limits = limits
        self.depth = self.deepest = self.terms = 0

    def add(self, token: Token) -> None:
        limits = self.limits
        if token.kind == "punct" and token.text in _OPENERS:
            self.depth += 1
            self.deepest = max(self.deepest, self.depth)
            if self.depth > limits.max_depth:
                raise QueryTooComplex(
                    f"the query nests brackets deeper than the limit of {limits.max_depth}",
                    hint="flatten it, or raise the setting sparql_max_depth",
                )
        elif token.kind == "punct" and token.text in _CLOSERS:
            self.depth -= 1
        elif (token.kind == "punct" and token.text not in "{}()[]") or (
            token.kind == "word" and token.text.upper() in _STRUCTURAL
        ):
            self.terms += 1
            if self.terms > limits.max_terms:
                raise QueryTooComplex(
                    f"the query has more operators and patterns than the limit of "
                    f"{limits.max_terms}",
                    hint="split it, use VALUES for long lists, or raise the setting "
                    "sparql_max_terms",
                )


def _form(tokens: list[Token]) -> tuple[QueryKind, dict[str, str], str | None]:
    """The query form after the prologue, with the prologue's prefixes and base."""
    prefixes: dict[str, str] = {}
    base: str | None = None
    i = 0
    while i < len(tokens) and tokens[i].kind == "word":
        word = tokens[i].text.upper()
        if word == "BASE" and i + 1 < len(tokens) and tokens[i + 1].kind == "iri":
            base = _resolve(tokens[i + 1].text[1:-1], base)
            i += 2
        elif (
            word == "PREFIX"
            and i + 2 < len(tokens)
            and tokens[i + 1].kind == "pname"
            and tokens[i + 1].text.endswith(":")
            and tokens[i + 2].kind == "iri"
        ):
            prefixes[tokens[i + 1].text[:-1]] = _resolve(tokens[i + 2].text[1:-1], base)
            i += 3
        else:
            break
    first = tokens[i] if i < len(tokens) else None
    word = first.text.upper() if first is not None and first.kind == "word" else ""
    if word in _KINDS:
        return _KINDS[word], prefixes, base
    if word in _UPDATES:
        follow = tokens[i + 1].text.upper() if i + 1 < len(tokens) else ""
        name = f"{word} {follow}" if follow in ("DATA", "WHERE") else word
        raise ReadOnlyViolation(
            f"SPARQL updates are not allowed here: this request is {name}",
            hint="send a SELECT, ASK, CONSTRUCT or DESCRIBE query",
        )
    shown = first.text[:40] if first is not None else "nothing"
    raise BadRequest(
        f"not a valid SPARQL query: after the prologue comes {shown!r}",
        hint="a query starts with SELECT, ASK, CONSTRUCT or DESCRIBE (after BASE and PREFIX)",
    )


def _services(
    tokens: list[Token], prefixes: dict[str, str], base: str | None
) -> tuple[str | None, ...]:
    found: list[str | None] = []
    for i, token in enumerate(tokens):
        if token.kind == "pname" and token.text.split(":", 1)[0].casefold() == "service":
            raise BadRequest(
                f"the prefixed name {token.text!r} reads as the SERVICE keyword here",
                hint="rename the prefix 'service:'",
            )
        if token.kind in ("word", "pname") and _glued(token.text, "service"):
            raise BadRequest(
                f"{token.text[:60]!r} reads as the SERVICE keyword glued to other text",
                hint="put a space after SERVICE, or rename the prefix or word",
            )
        if token.kind != "word" or token.text.casefold() != "service":
            continue
        j = i + 1
        if j < len(tokens) and tokens[j].text.upper() == "SILENT":
            j += 1
        target = tokens[j] if j < len(tokens) else None
        if (
            target is not None
            and target.kind in ("word", "pname")
            and _glued(target.text, "silent")
        ):
            raise BadRequest(
                f"SERVICE {target.text[:60]!r} may read as SILENT glued to a name",
                hint="put a space after SILENT, or rename the prefix",
            )
        if target is not None and target.kind == "iri":
            found.append(_resolve(target.text[1:-1], base))
        elif target is not None and target.kind == "pname":
            prefix, _, local = target.text.partition(":")
            if prefix not in prefixes:
                raise BadRequest(f"SERVICE names {target.text} with an undeclared prefix")
            found.append(prefixes[prefix] + local)
        else:
            found.append(None)
    return tuple(found)


def _glued(text: str, keyword: str) -> bool:
    """Whether ``text`` starts with ``keyword`` but is more than that keyword: the
    engine matches a keyword without a word boundary after it (``SERVICESILENT``,
    ``SERVICEex:c``, ``SILENTx:``)."""
    folded = text.casefold()
    return folded.startswith(keyword) and folded != keyword


def _resolve(iri: str, base: str | None) -> str:
    return urljoin(base, iri) if base else iri
