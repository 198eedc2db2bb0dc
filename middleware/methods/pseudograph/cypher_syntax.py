"""Cypher syntax for the pseudo-graph parser: clauses, tokens and patterns.

``split_statements`` finds the clauses in free text (prose, code fences and comments
dropped), ``split_clauses`` cuts a statement at inline keywords, and ``Parser`` reads a
clause's patterns into nodes and relationships. Errors are ``CypherError`` with a
reason a person can read; ``methods/cypher.py`` turns patterns into triples.
"""

from __future__ import annotations

import itertools
import re
from dataclasses import dataclass
from typing import Any

# Clause keywords that can start a statement line; the first two state facts.
FACT_CLAUSES = ("CREATE", "MERGE")
OTHER_CLAUSES = (
    "OPTIONAL MATCH",
    "MATCH",
    "RETURN",
    "WITH",
    "WHERE",
    "SET",
    "DELETE",
    "DETACH DELETE",
    "REMOVE",
    "UNWIND",
    "CALL",
    "FOREACH",
    "ON CREATE SET",
    "ON MATCH SET",
    "ORDER BY",
    "LIMIT",
    "UNION",
    "LOAD CSV",
)
CLAUSE_START = re.compile(
    r"^\s*(" + "|".join(k.replace(" ", r"\s+") for k in (*FACT_CLAUSES, *OTHER_CLAUSES)) + r")\b",
    re.IGNORECASE,
)


class CypherError(Exception):
    """Why one statement could not be read."""


# -- tokens -------------------------------------------------------------------------------
_TOKEN = re.compile(
    r"""
    (?P<space>\s+)
  | (?P<string>'(?:[^'\\]|\\.)*'|"(?:[^"\\]|\\.)*")
  | (?P<badstring>['"])
  | (?P<number>-?\d+(?:\.\d+)?(?:[eE][+-]?\d+)?)
  | (?P<name>[A-Za-z_][A-Za-z0-9_]*|`[^`]+`)
  | (?P<param>\$[A-Za-z_][A-Za-z0-9_]*)
  | (?P<punct><-|->|[()\[\]{}:,\-<>|=.*;])
  | (?P<other>.)
    """,
    re.VERBOSE | re.DOTALL,
)


@dataclass(frozen=True)
class _Token:
    kind: str
    text: str


def tokens(text: str) -> list[_Token]:
    found: list[_Token] = []
    for match in _TOKEN.finditer(text):
        kind = match.lastgroup or "other"
        if kind == "space":
            continue
        if kind == "badstring":
            raise CypherError("a string is missing its closing quote")
        if kind == "other":
            raise CypherError(f"unexpected character {match.group()!r}")
        found.append(_Token(kind, match.group()))
    return found


def _unquote(token: _Token) -> str:
    text = token.text
    if token.kind == "string":
        body = text[1:-1]
        return re.sub(r"\\(.)", lambda m: {"n": " ", "t": " "}.get(m.group(1), m.group(1)), body)
    if text.startswith("`"):
        return text[1:-1]
    return text


# -- statements -----------------------------------------------------------------------------
def _strip_comment(line: str) -> str:
    """The line without a ``//`` comment (a ``//`` inside quotes is kept)."""
    quote: str | None = None
    escaped = False
    for i, char in enumerate(line):
        if escaped:
            escaped = False
        elif char == "\\":
            escaped = True
        elif quote:
            if char == quote:
                quote = None
        elif char in "'\"":
            quote = char
        elif line.startswith("//", i):
            return line[:i]
    return line


def depth(text: str) -> int:
    """Open brackets minus closed ones, outside strings."""
    depth = 0
    without_strings = re.sub(r"'(?:[^'\\]|\\.)*'|\"(?:[^\"\\]|\\.)*\"", "", text)
    for char in without_strings:
        if char in "([{":
            depth += 1
        elif char in ")]}":
            depth -= 1
    return depth


def split_statements(text: str) -> list[tuple[int, str]]:
    """``(line, clause text)`` for every clause; prose, fences and comments are dropped.

    A clause starts at a line opening with a Cypher keyword and runs on while its
    brackets are open, the line ends with a comma, or the next line starts a pattern.
    """
    text = re.sub(r"/\*.*?\*/", lambda m: "\n" * m.group().count("\n"), text, flags=re.DOTALL)
    statements: list[tuple[int, str]] = []
    current: list[str] = []
    start = 0

    def close() -> None:
        if current:
            statements.append((start, " ".join(current).strip().rstrip(";").strip()))
            current.clear()

    for number, raw in enumerate(text.splitlines(), start=1):
        line = _strip_comment(raw).strip()
        if not line or line.startswith("```"):
            if current and depth(" ".join(current)) <= 0:
                close()
            continue
        open_clause = bool(current) and (
            depth(" ".join(current)) > 0
            or current[-1].endswith((",", "-", ">", "<"))
            or line[0] in "(-<,)]}."
        )
        if CLAUSE_START.match(line):  # a keyword line starts anew, even after a broken one
            close()
            start = number
            current.append(line)
        elif open_clause:
            current.append(line)
        else:
            close()
        if current and current[-1].endswith(";") and depth(" ".join(current)) <= 0:
            close()
    close()
    return statements


# -- patterns -------------------------------------------------------------------------------
@dataclass
class Node:
    variable: str | None
    labels: list[str]
    props: list[tuple[str, Any]]


@dataclass
class Relationship:
    types: list[str]
    props: list[tuple[str, Any]]
    forward: bool  # False: the arrow points left


class Parser:
    def __init__(self, tokens: list[_Token]) -> None:
        self.tokens = tokens
        self.at = 0

    def peek(self, offset: int = 0) -> _Token | None:
        index = self.at + offset
        return self.tokens[index] if index < len(self.tokens) else None

    def take(self, text: str | None = None) -> _Token:
        token = self.peek()
        if token is None:
            wanted = repr(text) if text is not None else "more"
            raise CypherError(f"the statement ends early (expected {wanted})")
        if text is not None and token.text != text:
            raise CypherError(f"expected {text!r} but found {token.text!r}")
        self.at += 1
        return token

    def next_is(self, *texts: str) -> bool:
        """Whether the next token is one of ``texts``."""
        token = self.peek()
        return token is not None and token.text in texts

    def accept(self, text: str) -> bool:
        token = self.peek()
        if token is not None and token.text == text:
            self.at += 1
            return True
        return False

    def patterns(self) -> list[list[Node | Relationship]]:
        found = [self.pattern()]
        while self.accept(","):
            found.append(self.pattern())
        if self.peek() is not None:
            raise CypherError(f"unexpected {self.take().text!r} after a pattern")
        return found

    def pattern(self) -> list[Node | Relationship]:
        token, following = self.peek(), self.peek(1)
        if token is not None and token.kind == "name" and following and following.text == "=":
            self.at += 2  # a path variable: p = (a)-->(b)
        chain: list[Node | Relationship] = [self.node()]
        while self.next_is("-", "<-", "<"):
            chain.append(self.relationship())
            chain.append(self.node())
        return chain

    def node(self) -> Node:
        self.take("(")
        variable = None
        token = self.peek()
        if token is not None and token.kind == "name":
            variable = _unquote(self.take())
        labels = []
        while self.accept(":"):
            labels.append(_unquote(self.take()))
            while self.accept("|") or self.accept("&"):
                labels.append(_unquote(self.take()))
        props = self.properties() if self.next_is("{") else []
        self.take(")")
        return Node(variable, labels, props)

    def relationship(self) -> Relationship:
        left = self.take().text  # '-', '<-' or '<'
        if left == "<":
            self.take("-")
        pointing_left = left in ("<-", "<")
        types: list[str] = []
        props: list[tuple[str, Any]] = []
        if self.accept("["):
            token = self.peek()
            if token is not None and token.kind == "name":
                self.take()  # the relationship's variable
            if self.accept(":"):
                types.append(_unquote(self.take()))
                while self.accept("|"):
                    types.append(_unquote(self.take()))
            if self.next_is("*"):
                raise CypherError("a variable-length relationship states no single fact")
            if self.next_is("{"):
                props = self.properties()
            self.take("]")
        if self.accept("->"):
            if pointing_left:
                raise CypherError("a relationship cannot point both ways")
            return Relationship(types, props, forward=True)
        self.take("-")
        if self.accept(">"):
            return Relationship(types, props, forward=not pointing_left)
        return Relationship(types, props, forward=not pointing_left)

    def properties(self) -> list[tuple[str, Any]]:
        self.take("{")
        found: list[tuple[str, Any]] = []
        if self.accept("}"):
            return found
        while True:
            key = self.take()
            if key.kind not in ("name", "string"):
                raise CypherError(f"a property name was expected, not {key.text!r}")
            self.take(":")
            found.append((_unquote(key), self.value()))
            if self.accept("}"):
                return found
            self.take(",")

    def value(self) -> Any:
        token = self.take()
        if token.kind in ("string", "number"):
            return _unquote(token)
        if token.text == "[":
            items: list[Any] = []
            if self.accept("]"):
                return items
            while True:
                items.append(self.value())
                if self.accept("]"):
                    return items
                self.take(",")
        if token.kind == "name":
            if self.accept("("):  # date("1990-01-01"), point({...}): keep the argument
                inner = self.value() if not self.accept(")") else ""
                if inner != "":
                    self.take(")")
                return f"{token.text}({inner})" if not isinstance(inner, str) else inner
            if token.text.lower() in ("true", "false"):
                return token.text.lower()
            if token.text.lower() == "null":
                return None
            raise CypherError(f"{token.text!r} is not a value (variables cannot be properties)")
        if token.kind == "param":
            raise CypherError(f"parameter {token.text} has no value here")
        raise CypherError(f"{token.text!r} is not a value")


_INLINE_CLAUSE = re.compile(
    r"(?:" + "|".join(k.replace(" ", r"\s+") for k in (*OTHER_CLAUSES, *FACT_CLAUSES)) + r")\b",
    re.IGNORECASE,
)


def split_clauses(statement: str) -> list[str]:
    """A statement cut where a clause keyword starts outside strings and brackets
    (``MATCH (a) CREATE (a)-[:R]->(b)`` is two clauses).

    >>> split_clauses("MATCH (a {name: 'Create me'}) CREATE (a)-[:R]->(b) RETURN a")
    ["MATCH (a {name: 'Create me'})", 'CREATE (a)-[:R]->(b)', 'RETURN a']
    """
    cuts = [0]
    depth, quote = 0, ""
    first = _INLINE_CLAUSE.match(statement)
    i = first.end() if first else 0
    while i < len(statement):
        char = statement[i]
        if quote:
            if char == "\\":
                i += 1
            elif char == quote:
                quote = ""
        elif char in "'\"":
            quote = char
        elif char in "([{":
            depth += 1
        elif char in ")]}":
            depth -= 1
        elif depth == 0 and char == ";":
            cuts.append(i)
            statement = statement[:i] + " " + statement[i + 1 :]
        elif depth == 0 and statement[i - 1] in " \t)":
            match = _INLINE_CLAUSE.match(statement, i)
            if match:
                cuts.append(i)
                i = match.end()
                continue
        i += 1
    cuts.append(len(statement))
    pieces = (statement[a:b].strip() for a, b in itertools.pairwise(cuts))
    return [piece for piece in pieces if piece]
