"""Whose fault an engine error is: the query's (400) or the service's (502).

pyoxigraph raises ``SyntaxError`` for a query it cannot parse, ``OSError`` when the
storage or a ``SERVICE`` call fails, and ``RuntimeError`` for everything else: some of
those refuse the query itself (an extension function the engine does not know, a cast
with the wrong number of arguments, a ``SERVICE`` whose endpoint is not an IRI), the
rest are failures of the store (corruption, a cancelled evaluation). Both paths a
query takes call ``engine_error``: ``LocalStore._execute`` in the service process and
the executor processes (``kg/executors/process.py``).

>>> engine_error(RuntimeError("The custom function <http://e/f> is not supported"), "kb").status
400
>>> engine_error(RuntimeError("Corruption: bad block"), "kb").status
502
"""

from __future__ import annotations

import re

from middleware.errors import BadRequest, EndpointError, MiddlewareError

# The engine's messages for a query it refuses (spareval's QueryEvaluationError:
# UnsupportedCustomFunction, UnsupportedCustomFunctionArity, UnboundService,
# InvalidServiceName, UnsupportedService), each with what to do instead.
_REFUSALS = (
    (
        re.compile(r"^The custom function \S+ is not supported"),
        "use SPARQL 1.1's built-in functions and XSD casts (xsd:integer(?x), ...); "
        "this engine knows no extension functions",
    ),
    (
        re.compile(r"^The custom function \S+ requires between \d+ and \d+ arguments"),
        "an XSD cast takes exactly one argument (SPARQL 1.1 §17.5)",
    ),
    (
        re.compile(
            r"^The variable encoding the service name is unbound"
            r"|is not a valid service name$"
            r"|^The service \S+ is not supported"
        ),
        "a SERVICE clause needs the IRI of an endpoint on sparql_service_allowlist "
        "(SPARQL 1.1 Federated Query)",
    ),
)


# how the engine words a SERVICE call that met no network (executors have none but the
# allowlist's outlets): unreachable, refused, no name lookup, an outlet closing at once
_CALL_FAILED = re.compile(
    r"os error 10[01]\b|os error 111\b|Network is unreachable|Connection refused"
    r"|lookup address information|Empty HTTP request|dedicated to an other use",
    re.IGNORECASE,
)


def engine_error(err: BaseException, store: str) -> MiddlewareError:
    """The middleware error for ``err``, raised by the engine while it ran a query on
    ``store``: a ``BadRequest`` when the query is at fault, else an ``EndpointError``."""
    if isinstance(err, MiddlewareError):
        return err
    if isinstance(err, SyntaxError):
        return BadRequest(f"not a valid SPARQL query: {err}")
    message = str(err)
    if isinstance(err, RuntimeError):
        for pattern, hint in _REFUSALS:
            if pattern.search(message):
                return BadRequest(f"the engine cannot run this query: {message}", hint=hint)
    if isinstance(err, OSError) and _CALL_FAILED.search(message):
        return BadRequest(
            f"a SERVICE call of this query reached no endpoint: {message}",
            hint="caller queries run without network: SERVICE reaches only the endpoints on "
            "sparql_service_allowlist, and only at their listed path",
        )
    return EndpointError(f"local store {store!r}: query failed: {message}")
