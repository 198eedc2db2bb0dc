"""What a caller's text may not hold when an engine this process cannot contain runs it.

A remote endpoint (Virtuoso, QLever, Blazegraph, Fuseki) reads the caller's query its
own way and makes calls itself: a ``SERVICE``, or an extension function that fetches a
URL (Virtuoso's ``bif:http_get``). So, on the text the engine receives (the guard's
canonical text: comments dropped, strings rewritten), these checks go by letters and
token shapes, not by a reading of the query: the word ``service`` anywhere outside IRIs
and strings, and any IRI or prefixed name right before ``(`` that is not an allowed
function. Query executors that could not be cut off the network use the first check.

>>> refuse_extension_functions('SELECT (xsd:integer("1") AS ?n) {}', ("http://www.w3.org/2001/XMLSchema#",))
>>> refuse_extension_functions('SELECT (bif:http_get("http://e/") AS ?x) {}', ())
Traceback (most recent call last):
...
middleware.errors.BadRequest: the query calls the function bif:http_get, which this source does not run for callers (...)
"""

from __future__ import annotations

from collections.abc import Sequence

from middleware.errors import BadRequest
from middleware.kg.sparql_lexer import iter_tokens

_PREDECLARED = {"xsd": "http://www.w3.org/2001/XMLSchema#"}


def refuse_service_words(text: str, *, why: str = "") -> None:
    """Refuse ``text`` (a canonical query text: its comments dropped, its strings
    rewritten) when ``service`` appears in it, in any case, anywhere but inside an IRI
    or a string: for engines that make the SERVICE call themselves (a remote endpoint)
    or executors that could not be cut off the network. Variables named ``?service``
    are refused too: no reading of the text decides, only the letters.

    >>> refuse_service_words('SELECT * { ?s <http://e/service> "customer service" }')
    >>> refuse_service_words("SELECT * { SERVICESILENT<http://e/> { ?s ?p ?o } }")
    Traceback (most recent call last):
    ...
    middleware.errors.BadRequest: SERVICE is not allowed on this source: the query has 'SERVICESILENT<http://e/>' outside IRIs and strings (federated queries are off here)
    """
    for token in iter_tokens(text):
        if token.kind in ("iri", "string"):
            continue
        if "service" in token.text.casefold():
            place = text.find(token.text)
            shown = text[place : place + 40].split("{")[0].strip() or token.text[:40]
            reason = f"; {why}" if why else ""
            raise BadRequest(
                f"SERVICE is not allowed on this source: the query has {shown!r} outside "
                f"IRIs and strings",
                hint=f"federated queries are off here{reason}",
            )


def refuse_extension_functions(text: str, allowed: Sequence[str]) -> None:
    """Refuse ``text`` when an IRI or prefixed name stands right before ``(`` (a function
    call, or an RDF collection after a predicate, which reads the same) and is not under
    one of the ``allowed`` IRI prefixes; prefixed names are resolved by the prologue."""
    tokens = [t for t in iter_tokens(text) if t.kind != "space"]
    prefixes = dict(_PREDECLARED)  # the engines' own, unless the query declares it again
    for i, token in enumerate(tokens[:-1]):
        if token.kind == "word" and token.text.upper() == "PREFIX" and i + 2 < len(tokens):
            name, iri = tokens[i + 1], tokens[i + 2]
            if name.kind == "pname" and iri.kind == "iri":
                prefixes[name.text[:-1]] = iri.text[1:-1]
        if token.kind not in ("iri", "pname") or tokens[i + 1].text != "(":
            continue
        if token.kind == "iri":
            function = token.text[1:-1]
        else:
            prefix, _, local = token.text.partition(":")
            function = prefixes[prefix] + local if prefix in prefixes else token.text
        if not any(function.startswith(start) for start in allowed):
            raise BadRequest(
                f"the query calls the function {function[:80]}, which this source does not "
                "run for callers",
                hint="a remote engine's extension functions may fetch from the network; "
                "list the function's IRI prefix in sparql_endpoint_functions if it is safe "
                "(an RDF collection right after a predicate reads as a call too: use VALUES)",
            )
