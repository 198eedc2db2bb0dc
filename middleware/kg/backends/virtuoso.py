"""What Virtuoso does unlike other SPARQL servers, read from its answers.

Its errors come as ``text/plain`` bodies with an SQL state and a code, often under HTTP
500 even when nothing will change on a retry::

    Virtuoso 37000 Error SP030: SPARQL compiler, line 1: syntax error at 'WHERE' before '{'

It caps every result at ``ResultSetMaxRows`` (its ini's ``[SPARQL]`` section) and says so
only in an ``X-SPARQL-MaxRows`` header on SELECT answers; a CONSTRUCT is cut without a
word. Past its ``MaxQueryExecutionTime`` an "anytime" query answers HTTP 200 with
whatever it had (an aggregate: nothing), saying so only in ``X-SQL-State: S1TAT``. And
it answers ASK with a one-column SELECT (``__ASK_RETVAL``: one row of 1 when
true, no row when false).

>>> error = parse_error(b"Virtuoso 22012 Error SR084: Division by 0.\\n\\nSPARQL query:\\n...")
>>> error.state, error.code, error.text
('22012', 'SR084', 'Division by 0.')
>>> parse_error(b"<html>Bad gateway</html>") is None
True
"""

from __future__ import annotations

import re
from dataclasses import dataclass

ASK_VARIABLE = "__ASK_RETVAL"
MAX_ROWS_HEADER = "X-SPARQL-MaxRows"
STATE_HEADER = "X-SQL-State"
MESSAGE_HEADER = "X-SQL-Message"
INCOMPLETE = "S1TAT"  # an anytime query stopped at the time limit: the result is partial
_ERROR = re.compile(rb"^\s*Virtuoso ([0-9A-Z]{5}) Error(?: ([A-Z]{2}[0-9A-Z.]{1,5}):)?\s*(.*)")


@dataclass(frozen=True)
class VirtuosoError:
    """One error as Virtuoso words it: SQL state, its own code (may be empty), the text."""

    state: str
    code: str
    text: str

    @property
    def kind(self) -> str:
        """``rejected`` (the query itself: syntax, unsupported, data), ``timeout``,
        ``transient`` (deadlock, connection) or ``server``."""
        if self.state == "S1T00":
            return "timeout"
        if self.state.startswith(("40", "08")):
            return "transient"
        if self.state.startswith(("37", "42", "22")):
            return "rejected"
        return "server"

    def __str__(self) -> str:
        code = f" {self.code}" if self.code else ""
        return f"Virtuoso {self.state}{code}: {self.text}"


class VirtuosoFailure(Exception):
    """An HTTP error whose body is a Virtuoso error (raised by the endpoint's client)."""

    def __init__(self, status: int, error: VirtuosoError) -> None:
        super().__init__(f"HTTP {status}: {error}")
        self.status = status
        self.error = error


def parse_error(body: bytes) -> VirtuosoError | None:
    """The error in a Virtuoso error body (its first paragraph), or None if it is not one."""
    first = body.split(b"\n\n", 1)[0]
    match = _ERROR.match(first)
    if match is None:
        return None
    state, code, text = match.groups()
    message = text.decode("utf-8", "replace").replace("\n", " ").strip()
    return VirtuosoError(state.decode(), (code or b"").decode(), message[:500])


def row_cap(header: str | None) -> int | None:
    """The cap an ``X-SPARQL-MaxRows`` header names, or None.

    >>> row_cap("10000"), row_cap(None), row_cap("lots")
    (10000, None, None)
    """
    if header is None or not header.strip().isdigit():
        return None
    return int(header.strip())


def ask_answer(variables: list[str], row_count: int, first: str | None) -> bool | None:
    """The boolean of an ASK that Virtuoso answered as a SELECT over ``__ASK_RETVAL``, or
    None when the result is not that shape.

    >>> ask_answer(["__ASK_RETVAL"], 1, "1"), ask_answer(["__ASK_RETVAL"], 0, None)
    (True, False)
    >>> ask_answer(["x"], 1, "1") is None
    True
    """
    if variables != [ASK_VARIABLE]:
        return None
    return row_count > 0 and first not in ("0", "false")
