"""Decide, by parsing rather than by pattern, whether SPARQL text is a read-only query."""

from __future__ import annotations

import threading
from dataclasses import dataclass
from functools import lru_cache
from typing import Any, Literal

from pyparsing import ParseException
from rdflib.plugins.sparql.algebra import translateQuery
from rdflib.plugins.sparql.parser import parseQuery, parseUpdate
from rdflib.plugins.sparql.parserutils import CompValue
from rdflib.term import URIRef

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


@dataclass(frozen=True)
class QueryInfo:
    """What parsing told about a read-only query.

    ``services`` names the IRI of every ``SERVICE`` clause, ``None`` for one whose
    endpoint is a variable (known only when the query runs).
    """

    kind: QueryKind
    services: tuple[str | None, ...] = ()


@lru_cache(maxsize=1024)
def check_read_only(sparql: str) -> QueryKind:
    """Return the query form, or raise ReadOnlyViolation for updates, BadRequest for junk.

    Answers are remembered per query text (errors are not), so a repeated query is
    parsed once.

    >>> check_read_only("SELECT * WHERE { ?s ?p ?o } LIMIT 1")
    'select'
    >>> check_read_only("DROP ALL")
    Traceback (most recent call last):
    ...
    middleware.errors.ReadOnlyViolation: SPARQL updates are not allowed here: this request is DROP (send a SELECT, ASK, CONSTRUCT or DESCRIBE query)
    """
    return _parse(sparql)[0]


@lru_cache(maxsize=1024)
def inspect_query(sparql: str) -> QueryInfo:
    """The query form and the ``SERVICE`` endpoints a read-only query would call.

    >>> inspect_query("SELECT * { SERVICE <http://other.example/sparql> { ?s ?p ?o } }")
    QueryInfo(kind='select', services=('http://other.example/sparql',))
    """
    kind, parsed = _parse(sparql)
    try:
        with _PARSE_LOCK:
            algebra = translateQuery(parsed).algebra
    except Exception as err:  # rdflib's translator raises plain exceptions on odd queries
        raise BadRequest(f"SPARQL query could not be analysed: {err}") from err
    found: list[str | None] = []
    _collect_services(algebra, found)
    return QueryInfo(kind, tuple(found))


def _collect_services(node: Any, found: list[str | None]) -> None:
    if isinstance(node, CompValue):
        if node.name == "ServiceGraphPattern":
            term = node.get("term")
            found.append(str(term) if isinstance(term, URIRef) else None)
        for value in node.values():
            _collect_services(value, found)
    elif isinstance(node, list | tuple):
        for value in node:
            _collect_services(value, found)


def _parse(sparql: str) -> tuple[QueryKind, Any]:
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
    return _KINDS.get(parsed[1].name, "select"), parsed


def _update_name(operation: str) -> str:
    table = {
        "InsertData": "INSERT DATA",
        "DeleteData": "DELETE DATA",
        "DeleteWhere": "DELETE WHERE",
        "Modify": "DELETE/INSERT",
    }
    return table.get(operation, operation.upper())
