"""Caller JSON: its nesting bounded before it is parsed, its text checked after.

Python's ``json`` parser recurses once per nested array or object: about a thousand
levels raise ``RecursionError``, and code walking the parsed value recursively fails
sooner. ``BoundedJSONProvider`` (the app's ``app.json``, so every ``get_json`` of every
route goes through it) counts the nesting first, in one pass without recursion, and
refuses a body deeper than ``server_max_json_depth`` with a 400. ``check_text`` walks a
parsed body with a stack of its own.

>>> json_depth('{"a": [1, {"b": "]]]"}]}')
3
"""

from __future__ import annotations

import json
import re
from itertools import accumulate, count
from operator import sub
from typing import Any

from flask.json.provider import DefaultJSONProvider

from middleware.errors import BadRequest

_ESCAPE = re.compile(r"\\.", re.DOTALL)  # inside strings; a backslash elsewhere is invalid
_STRING = re.compile(r'"[^"]*"')  # once escapes are gone, no quote hides in a string
_NOT_BRACKET = re.compile(r"[^\[\]{}]+")
_STEPS = bytes.maketrans(b"[{]}", b"\x02\x02\x00\x00")  # depth change + 1 per bracket


def json_depth(text: str) -> int:
    """The deepest nesting of arrays and objects in ``text``, brackets inside strings
    left out. Linear: escapes, then strings, then everything but brackets are removed
    by regular expressions that never backtrack, and the running depth is summed in C.
    Past an unterminated string nothing more counts (the parser stops there too)."""
    if "[" not in text and "{" not in text:
        return 0
    code = _STRING.sub("", _ESCAPE.sub("", text)).partition('"')[0]
    brackets = _NOT_BRACKET.sub("", code).encode("ascii").translate(_STEPS)
    return max(0, max(map(sub, accumulate(brackets), count(1)), default=0))


def check_json_depth(text: str, limit: int) -> None:
    """A BadRequest when ``text`` nests arrays and objects deeper than ``limit``."""
    if text.count("[") + text.count("{") <= limit:
        return  # cannot be deeper: the common case costs two counts
    depth = json_depth(text)
    if depth > limit:
        raise BadRequest(
            f"the JSON body is nested {depth} levels deep, more than {limit}",
            hint="send flatter JSON (the routes' own fields nest at most 4 levels), or "
            "raise server_max_json_depth",
        )


class BoundedJSONProvider(DefaultJSONProvider):
    """Flask's JSON provider, refusing bodies nested deeper than ``max_depth``."""

    max_depth = 64

    def loads(self, s: str | bytes, **kwargs: Any) -> Any:
        if isinstance(s, bytes | bytearray):
            try:  # as json.loads decodes bytes (UTF-8, -16 or -32)
                s = s.decode(json.detect_encoding(s), "surrogatepass")
            except UnicodeDecodeError:
                return super().loads(s, **kwargs)  # the parser's own error
        check_json_depth(s, self.max_depth)
        return super().loads(s, **kwargs)


def check_text(value: Any, where: str) -> None:
    """Refuse strings that cannot be written as UTF-8 (a JSON ``\\ud800`` escape decodes
    to a lone surrogate), before any work is spent on the request. Walks ``value`` with
    its own stack; each item keeps a link to its parent, so the path to a bad string
    is written only when one is found."""
    stack: list[tuple[Any, tuple[Any, ...]]] = [(value, (where, None))]
    while stack:
        item, path = stack.pop()
        if isinstance(item, str):
            try:
                item.encode("utf-8")
            except UnicodeEncodeError as err:
                raise BadRequest(
                    f"{_path(path)} holds text that is not valid Unicode (a lone surrogate "
                    f"at position {err.start})",
                    hint="send UTF-8 text; \\uD800-\\uDFFF escapes must come in pairs",
                ) from None
        elif isinstance(item, dict):  # pushed last first: found in the body's order
            for key, inner in reversed(item.items()):
                stack += [(inner, (f".{key}", path)), (key, path)]
        elif isinstance(item, list):
            stack += [(item[i], (f"[{i}]", path)) for i in range(len(item) - 1, -1, -1)]


def _path(link: tuple[Any, ...] | None) -> str:
    parts = []
    while link is not None:
        parts.append(link[0])
        link = link[1]
    return "".join(reversed(parts))
