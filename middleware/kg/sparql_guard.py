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

import re
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Literal
from urllib.parse import urljoin

from middleware.errors import BadRequest, PayloadTooLarge, ReadOnlyViolation

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

_ESCAPE = re.compile(r"\\u([0-9A-Fa-f]{4})|\\U([0-9A-Fa-f]{8})")
_IRIREF = re.compile(r"<[^<>\"{}|^`\\\x00-\x20]*>")
_BASE_CHARS = (
    "A-Za-z\u00c0-\u00d6\u00d8-\u00f6\u00f8-\u02ff\u0370-\u037d\u037f-\u1fff\u200c-\u200d"
    "\u2070-\u218f\u2c00-\u2fef\u3001-\ud7ff\uf900-\ufdcf\ufdf0-\ufffd\U00010000-\U000effff"
)
_NAME_CHARS = _BASE_CHARS + "_0-9\u00b7\u0300-\u036f\u203f-\u2040-"
_NAME_START = re.compile(f"[{_BASE_CHARS}_:]")
_PREFIX_PART = re.compile(f"[{_NAME_CHARS}]*")
_LOCAL_PART = re.compile(f"(?:[{_NAME_CHARS}.:]|%[0-9A-Fa-f]{{2}}|\\\\[_~.!$&'()*+,;=/?#@%-])*")
_VARNAME = re.compile(f"[{_NAME_CHARS}]+")
_NUMBER = re.compile(
    r"[0-9]+\.?[0-9]*[eE][+-]?[0-9]+|\.[0-9]+(?:[eE][+-]?[0-9]+)?|[0-9]+(?:\.[0-9]+)?"
)
_LANGTAG = re.compile(r"@[a-zA-Z]+(?:-[a-zA-Z0-9]+)*")
_OPERATORS = ("^^", "&&", "||", "!=", "<=", ">=")
_ECHAR = {"t": "\t", "b": "\b", "n": "\n", "r": "\r", "f": "\f", '"': '"', "'": "'", "\\": "\\"}
_REWRITE = {"\\": "\\\\", '"': '\\"', "\n": "\\n", "\r": "\\r"}


@dataclass(frozen=True)
class QueryLimits:
    """What one caller query may be: size, nesting and operator count (the engine's
    parser and evaluator recurse, and a few kB of nesting crash them)."""

    max_chars: int = 100_000
    max_depth: int = 64
    max_terms: int = 1_000


@dataclass(frozen=True)
class QueryPolicy:
    """The limits and the ``SERVICE`` endpoints a caller's query may call (none by
    default: federation is for operators who list the endpoints they trust)."""

    limits: QueryLimits = field(default_factory=QueryLimits)
    services: tuple[str, ...] = ()


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


@dataclass(frozen=True)
class _Token:
    kind: str  # iri string var bnode pname word number langtag punct space
    text: str


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
    tokens = _tokenize(expand_escapes(sparql))
    text = "".join(_canonical(t) for t in tokens)
    significant = [t for t in tokens if t.kind != "space"]
    depth, terms = _shape(significant, limits)
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


def expand_escapes(text: str) -> str:
    """Expand ``\\uXXXX`` and ``\\UXXXXXXXX`` once over the whole text (§19.2).

    An escape that expands to another escape is refused: the engine would expand it
    again inside a string and run something else than what was checked.

    >>> expand_escapes(r"SELECT * { ?s ?p '\\u0041' }")
    "SELECT * { ?s ?p 'A' }"
    """

    def replace(match: re.Match[str]) -> str:
        code = int(match.group(1) or match.group(2), 16)
        if code > 0x10FFFF or 0xD800 <= code <= 0xDFFF:
            raise BadRequest(
                f"{match.group(0)} is not a Unicode character",
                hint="escapes must name a code point outside the surrogate range",
            )
        return chr(code)

    expanded = _ESCAPE.sub(replace, text)
    if _ESCAPE.search(expanded):
        raise BadRequest(
            "the query has an escape sequence that expands to another escape sequence",
            hint="write the character itself, or one \\u escape for it",
        )
    try:
        expanded.encode("utf-8")
    except UnicodeEncodeError as err:
        raise BadRequest(
            f"the query holds a character that is not valid Unicode at position {err.start}",
            hint="send the query as UTF-8 text",
        ) from None
    return expanded


def _tokenize(text: str) -> list[_Token]:
    tokens: list[_Token] = []
    i, n = 0, len(text)
    while i < n:
        char = text[i]
        if char.isspace():
            j = i + 1
            while j < n and text[j].isspace():
                j += 1
            tokens.append(_Token("space", text[i:j]))
        elif char == "#":
            j = i
            while j < n and text[j] not in "\n\r":
                j += 1
            tokens.append(_Token("space", "\n"))  # a comment runs as a line break
        elif char == "<" and (match := _IRIREF.match(text, i)):
            j = match.end()
            tokens.append(_Token("iri", match.group()))
        elif char in "\"'":
            j, value = _string(text, i)
            tokens.append(_Token("string", value))
        elif char in "?$":
            match = _VARNAME.match(text, i + 1)
            j = match.end() if match else i + 1
            tokens.append(_Token("var" if match else "punct", text[i:j]))
        elif char == "_" and text.startswith("_:", i):
            match = _LOCAL_PART.match(text, i + 2)
            j = _trim_dots(text, i + 2, match.end() if match else i + 2)
            tokens.append(_Token("bnode", text[i:j]))
        elif char.isdigit() or (char == "." and i + 1 < n and text[i + 1].isdigit()):
            match = _NUMBER.match(text, i)
            j = match.end() if match else i + 1
            tokens.append(_Token("number", text[i:j]))
        elif char == "@" and (match := _LANGTAG.match(text, i)):
            j = match.end()
            tokens.append(_Token("langtag", match.group()))
        elif _NAME_START.match(char):
            j, token = _name(text, i)
            tokens.append(token)
        elif char == "\\":
            raise BadRequest(
                f"a backslash outside a string at position {i}",
                hint="backslashes may only escape characters in strings and prefixed names",
            )
        else:
            op = next((o for o in _OPERATORS if text.startswith(o, i)), char)
            j = i + len(op)
            tokens.append(_Token("punct", op))
        i = j
    return tokens


def _name(text: str, i: int) -> tuple[int, _Token]:
    """A keyword or a prefixed name at ``i``. A prefix stops at a dot, so "true.SERVICE"
    reads as three tokens, as the engine may read it."""
    prefix = _PREFIX_PART.match(text, i)
    j = prefix.end() if prefix else i
    if j < len(text) and text[j] == ":":
        local = _LOCAL_PART.match(text, j + 1)
        end = _trim_dots(text, j + 1, local.end() if local else j + 1)
        return end, _Token("pname", text[i:end])
    if j == i:  # a start character the prefix class lacks: take it alone
        j = i + 1
    return j, _Token("word", text[i:j])


def _trim_dots(text: str, start: int, end: int) -> int:
    """A local name may not end with a dot: the dot ends the triple instead."""
    while end > start and text[end - 1] == "." and text[end - 2 : end] != "\\.":
        end -= 1
    return end


def _string(text: str, i: int) -> tuple[int, str]:
    """The end and the value of the string literal opening at ``i``."""
    quote = text[i]
    long = text.startswith(quote * 3, i)
    j = i + (3 if long else 1)
    chars: list[str] = []
    while True:
        if j >= len(text):
            raise BadRequest(
                f"a string opened at position {i} is not closed", hint=f"close it with {quote}"
            )
        char = text[j]
        if long and text.startswith(quote * 3, j):
            return j + 3, "".join(chars)
        if not long and char == quote:
            return j + 1, "".join(chars)
        if char == "\\":
            escaped = text[j + 1 : j + 2]
            if escaped not in _ECHAR:
                raise BadRequest(
                    f"\\{escaped} at position {j} is not a string escape",
                    hint="use one of \\t \\b \\n \\r \\f \\\" \\' \\\\",
                )
            chars.append(_ECHAR[escaped])
            j += 2
            continue
        if not long and char in "\n\r":
            raise BadRequest(
                f"a line break inside the string opened at position {i}",
                hint='use \\n, or a long string ("""...""")',
            )
        chars.append(char)
        j += 1


def _canonical(token: _Token) -> str:
    if token.kind == "string":
        return '"' + "".join(_REWRITE.get(c, c) for c in token.text) + '"'
    return token.text


def _shape(tokens: list[_Token], limits: QueryLimits) -> tuple[int, int]:
    depth = deepest = terms = 0
    for token in tokens:
        if token.kind == "punct" and token.text in _OPENERS:
            depth += 1
            deepest = max(deepest, depth)
            if depth > limits.max_depth:
                raise BadRequest(
                    f"the query nests brackets deeper than the limit of {limits.max_depth}",
                    hint="flatten it, or raise the setting sparql_max_depth",
                )
        elif token.kind == "punct" and token.text in _CLOSERS:
            depth -= 1
        elif (token.kind == "punct" and token.text not in "{}()[]") or (
            token.kind == "word" and token.text.upper() in _STRUCTURAL
        ):
            terms += 1
            if terms > limits.max_terms:
                raise BadRequest(
                    f"the query has more operators and patterns than the limit of "
                    f"{limits.max_terms}",
                    hint="split it, use VALUES for long lists, or raise the setting "
                    "sparql_max_terms",
                )
    return deepest, terms


def _form(tokens: list[_Token]) -> tuple[QueryKind, dict[str, str], str | None]:
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
    tokens: list[_Token], prefixes: dict[str, str], base: str | None
) -> tuple[str | None, ...]:
    found: list[str | None] = []
    for i, token in enumerate(tokens):
        if token.kind == "pname" and token.text.split(":", 1)[0].casefold() == "service":
            raise BadRequest(
                f"the prefixed name {token.text!r} reads as the SERVICE keyword here",
                hint="rename the prefix 'service:'",
            )
        if token.kind != "word" or token.text.casefold() != "service":
            continue
        j = i + 1
        if j < len(tokens) and tokens[j].text.upper() == "SILENT":
            j += 1
        target = tokens[j] if j < len(tokens) else None
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


def _resolve(iri: str, base: str | None) -> str:
    return urljoin(base, iri) if base else iri
