"""What an executor's end means for its request: a lost executor's cause, and an error
it reported, as the same class in the service."""

from __future__ import annotations

import middleware.errors as error_classes
from middleware.errors import BadRequest, EndpointError, MiddlewareError


def lost(code: int | None, memory_mb: int) -> MiddlewareError:
    if code is not None and code in (-6, 134):  # abort: an allocation past the cap
        return BadRequest(
            f"the query needed more than the executor's {memory_mb} MB of memory",
            hint="narrow the query (a LIMIT does not bound ORDER BY over a large join), "
            "or raise sparql_executor_memory",
        )
    return BadRequest(
        f"the query crashed its executor (exit {code}); the service is unaffected",
        hint="simplify the query: less nesting, fewer alternatives",
    )


def rebuild(name: str, message: str, hint: str | None) -> MiddlewareError:
    """The executor's error, as the same class in this process."""
    kind = getattr(error_classes, name, None)
    if isinstance(kind, type) and issubclass(kind, MiddlewareError):
        try:
            return kind(message, hint=hint)
        except TypeError:  # a class with its own signature
            pass
    return EndpointError(message, hint=hint)
