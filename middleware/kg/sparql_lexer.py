r"""SPARQL text as tokens, and the canonical text the engine runs.

The lexer follows the SPARQL 1.1 grammar's terminals (IRIs, strings, variables,
prefixed names, numbers, language tags, operators). The canonical text keeps every
token as written except comments (dropped, a line break in their place) and string
literals (written again as one double-quoted line), so the engine cannot read a
comment or a string where the lexer read code.

>>> [t.kind for t in tokenize('ASK { ?s ?p "x"@en }') if t.kind != "space"]
['word', 'punct', 'var', 'var', 'string', 'langtag', 'punct']
>>> print(canonical(tokenize("ASK { ?s ?p '''a\nb''' } # done")).strip())
ASK { ?s ?p "a\nb" }
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from dataclasses import dataclass

from middleware.errors import BadRequest

_ESCAPE = re.compile(r"\\u([0-9A-Fa-f]{4})|\\U([0-9A-Fa-f]{8})")
IRIREF = re.compile(r"<[^<>\"{}|^`\\\x00-\x20]*>")
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
class Token:
    """One token: ``kind`` is iri, string (``text`` holds its value), var, bnode, pname,
    word, number, langtag, punct or space (whitespace and comments)."""

    kind: str
    text: str


def canonical(tokens: list[Token]) -> str:
    """The text the engine runs for ``tokens``."""
    return "".join(_canonical(t) for t in tokens)


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


def tokenize(text: str) -> list[Token]:
    """The tokens of ``text`` (escapes already expanded), whitespace and comments kept
    as ``space`` tokens; BadRequest for a broken string, escape or backslash."""
    return list(iter_tokens(text))


def iter_tokens(text: str) -> Iterator[Token]:
    """``tokenize``, one token at a time, so a caller can stop early."""
    i, n = 0, len(text)
    while i < n:
        char = text[i]
        if char.isspace():
            j = i + 1
            while j < n and text[j].isspace():
                j += 1
            yield Token("space", text[i:j])
        elif char == "#":
            j = i
            while j < n and text[j] not in "\n\r":
                j += 1
            yield Token("space", "\n")  # a comment runs as a line break
        elif char == "<" and (match := IRIREF.match(text, i)):
            j = match.end()
            yield Token("iri", match.group())
        elif char in "\"'":
            j, value = _string(text, i)
            yield Token("string", value)
        elif char in "?$":
            match = _VARNAME.match(text, i + 1)
            j = match.end() if match else i + 1
            yield Token("var" if match else "punct", text[i:j])
        elif char == "_" and text.startswith("_:", i):
            match = _LOCAL_PART.match(text, i + 2)
            j = _trim_dots(text, i + 2, match.end() if match else i + 2)
            yield Token("bnode", text[i:j])
        elif char.isdigit() or (char == "." and i + 1 < n and text[i + 1].isdigit()):
            match = _NUMBER.match(text, i)
            j = match.end() if match else i + 1
            yield Token("number", text[i:j])
        elif char == "@" and (match := _LANGTAG.match(text, i)):
            j = match.end()
            yield Token("langtag", match.group())
        elif _NAME_START.match(char):
            j, token = _name(text, i)
            yield token
        elif char == "\\":
            raise BadRequest(
                f"a backslash outside a string at position {i}",
                hint="backslashes may only escape characters in strings and prefixed names",
            )
        else:
            op = next((o for o in _OPERATORS if text.startswith(o, i)), char)
            j = i + len(op)
            yield Token("punct", op)
        i = j


def _name(text: str, i: int) -> tuple[int, Token]:
    """A keyword or a prefixed name at ``i``. A prefix stops at a dot, so "true.SERVICE"
    reads as three tokens, as the engine may read it."""
    prefix = _PREFIX_PART.match(text, i)
    j = prefix.end() if prefix else i
    if j < len(text) and text[j] == ":":
        local = _LOCAL_PART.match(text, j + 1)
        end = _trim_dots(text, j + 1, local.end() if local else j + 1)
        return end, Token("pname", text[i:end])
    if j == i:  # a start character the prefix class lacks: take it alone
        j = i + 1
    return j, Token("word", text[i:j])


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


def _canonical(token: Token) -> str:
    if token.kind == "string":
        return '"' + "".join(_REWRITE.get(c, c) for c in token.text) + '"'
    return token.text
