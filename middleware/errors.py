"""One exception tree for the whole middleware.

Every class carries the HTTP status a server should answer with, so errors are
rendered in one place (the CLI prints ``str(err)`` as one line; the Flask app
turns ``status`` and ``to_dict()`` into a JSON response).

>>> err = BadRequest("not an IRI: 'a b'", hint="IRIs may not contain spaces")
>>> err.status, str(err)
(400, "not an IRI: 'a b' (IRIs may not contain spaces)")
"""

from __future__ import annotations

from typing import Any


class MiddlewareError(Exception):
    """Base of every error the middleware raises on purpose."""

    status = 500
    code = "internal_error"

    def __init__(self, message: str, *, hint: str | None = None, **context: Any) -> None:
        super().__init__(message)
        self.message = message
        self.hint = hint
        self.context = context

    def __str__(self) -> str:
        return f"{self.message} ({self.hint})" if self.hint else self.message

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready form for APIs and ``--json`` output."""
        body: dict[str, Any] = {"error": self.code, "status": self.status, "message": self.message}
        if self.hint:
            body["hint"] = self.hint
        if self.context:
            body["context"] = {k: str(v) for k, v in self.context.items()}
        return body


class BadRequest(MiddlewareError):
    """The caller sent something invalid: a bad IRI, bad SPARQL, a bad option."""

    status = 400
    code = "bad_request"


class ReadOnlyViolation(BadRequest):
    """A SPARQL update (INSERT, DELETE, LOAD, CLEAR, ...) where only queries are allowed."""

    code = "read_only"


class QueryTooComplex(BadRequest):
    """A caller's query past a shape limit (nesting depth, operator count)."""

    code = "query_too_complex"


class LoadError(BadRequest):
    """An input file could not be parsed; ``path`` and ``line`` say where."""

    code = "load_error"

    def __init__(self, path: str, line: int | None, what: str, *, hint: str | None = None) -> None:
        where = f"{path}:{line}" if line is not None else f"{path}"
        super().__init__(f"{where}: {what}", hint=hint, path=path, line=line)
        self.path = path
        self.line = line
        self.what = what


class Unauthorized(MiddlewareError):
    """A service request without a valid API key."""

    status = 401
    code = "unauthorized"


class Forbidden(MiddlewareError):
    """A valid API key asked for a source or method its ``[keys.NAME]`` table leaves out."""

    status = 403
    code = "forbidden"


class PayloadTooLarge(BadRequest):
    """A request body or query longer than the service accepts."""

    status = 413
    code = "payload_too_large"


class NotAcceptable(BadRequest):
    """No result format the request's ``Accept`` header allows."""

    status = 406
    code = "not_acceptable"


class UnsupportedMediaType(BadRequest):
    """A request body in a media type or character set the service does not read."""

    status = 415
    code = "unsupported_media_type"


class RateLimited(MiddlewareError):
    """A caller sent more requests than its rate limit; ``retry_after`` says when to retry."""

    status = 429
    code = "rate_limited"

    def __init__(self, message: str, *, retry_after: float, hint: str | None = None) -> None:
        super().__init__(message, hint=hint)
        self.retry_after = retry_after


class StateUnavailable(MiddlewareError):
    """The Redis the service shares with its other workers and hosts cannot be reached;
    ``retry_after`` says when to retry."""

    status = 503
    code = "state_unavailable"

    def __init__(self, message: str, *, retry_after: float, hint: str | None = None) -> None:
        super().__init__(message, hint=hint)
        self.retry_after = retry_after


class StoreBusy(MiddlewareError):
    """Another writer held a local store for longer than ``store_lock_wait``."""

    status = 409
    code = "store_busy"


class NotFound(MiddlewareError):
    """An entity, profile, source or file that does not exist."""

    status = 404
    code = "not_found"


class ConfigError(MiddlewareError):
    """A setting, profile or ontology file is invalid."""

    status = 500
    code = "config_error"


class EndpointError(MiddlewareError):
    """A SPARQL endpoint failed or answered with something that is not a SPARQL result."""

    status = 502
    code = "endpoint_error"


class QueryRejected(EndpointError):
    """An endpoint refused a query as malformed (a caller's query: a 400; ours: a 502)."""

    code = "query_rejected"


class ClientGone(MiddlewareError):
    """The caller closed its connection before the answer: the work for it was stopped."""

    status = 499  # no one reads it; the access log and the metrics do
    code = "client_gone"


class EndpointTimeout(EndpointError):
    """A query ran past its timeout (endpoint or local store)."""

    status = 504
    code = "endpoint_timeout"


class DownloadError(MiddlewareError):
    """A dataset file could not be downloaded, or arrived with another checksum."""

    status = 502
    code = "download_error"


class LLMError(MiddlewareError):
    """The language model could not be reached, or answered with an error."""

    status = 502
    code = "llm_error"


class LLMTimeout(LLMError):
    """The language model did not answer within the request timeout."""

    status = 504
    code = "llm_timeout"


class LLMOutputError(LLMError):
    """The model's reply could not be parsed into what the step needs."""

    code = "llm_output"

    def __init__(self, message: str, *, raw: str = "", hint: str | None = None) -> None:
        super().__init__(message, hint=hint, raw=raw[:300])
        self.raw = raw


class BudgetExceeded(MiddlewareError):
    """A request would spend more LLM calls or tokens than its budget allows.

    ``ledger`` holds every call made before the limit was hit.
    """

    status = 422
    code = "budget_exceeded"

    def __init__(self, message: str, *, ledger: Any, hint: str | None = None) -> None:
        super().__init__(message, hint=hint)
        self.ledger = ledger

    def to_dict(self) -> dict[str, Any]:
        body = super().to_dict()
        body["usage"] = self.ledger.summary()
        return body
