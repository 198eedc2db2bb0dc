"""Decide, by parsing rather than by pattern, whether SPARQL text is a read-only query."""

from __future__ import annotations

import threading
from typing import Literal

from pyparsing import ParseException
from rdflib.plugins.sparql.parser import parseQuery, parseUpdate

from middleware.errors import BadRequest, ReadOnlyViolation

QueryKind = Literal["select", "ask", "construct", "describe"]
MAX_QUERY_CHARS = 100_000
# rdflib's pyparsing grammar keeps parse state in shared objects: two threads parsing
# at once corrupt each other's results, so parses take turns.
_PARSE_LOCK = threading.Lock()
_KINDS: dict[str, QueryKind] = {
    "SelectQuery": "select",
    "AskQuery": "ask",
    "ConstructQuery": "construct",
    "DescribeQuery": "describe",
}


def check_read_only(sparql: str) -> QueryKind:
    """Return the query form, or raise ReadOnlyViolation for updates, BadRequest for junk.

    >>> check_read_only("SELECT * WHERE { ?s ?p ?o } LIMIT 1")
    'select'
    >>> check_read_only("DROP ALL")
    Traceback (most recent call last):
    ...
    middleware.errors.ReadOnlyViolation: SPARQL updates are not allowed here: this request is DROP (send a SELECT, ASK, CONSTRUCT or DESCRIBE query)
    """
    if len(sparql) > MAX_QUERY_CHARS:
        raise BadRequest(f"query of {len(sparql)} characters is longer than {MAX_QUERY_CHARS}")
    try:
        with _PARSE_LOCK:
            parsed = parseQuery(sparql)
    except ParseException as query_err:
        try:
            with _PARSE_LOCK:
                update = parseUpdate(sparql)
        except ParseException:
            raise BadRequest(
                f"not a valid SPARQL query: {query_err.msg} at line {query_err.lineno}, column {query_err.col}"
            ) from query_err
        operations = [op.name for op in (update.get("request") or [])]
        names = ", ".join(_update_name(op) for op in operations) or "an update"
        raise ReadOnlyViolation(
            f"SPARQL updates are not allowed here: this request is {names}",
            hint="send a SELECT, ASK, CONSTRUCT or DESCRIBE query",
        ) from None
    return _KINDS.get(parsed[1].name, "select")


def _update_name(operation: str) -> str:
    table = {
        "InsertData": "INSERT DATA",
        "DeleteData": "DELETE DATA",
        "DeleteWhere": "DELETE WHERE",
        "Modify": "DELETE/INSERT",
    }
    return table.get(operation, operation.upper())
