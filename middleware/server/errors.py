"""Every error the service answers with, rendered in one place as JSON.

A ``MiddlewareError`` answers with its own status and message; an HTTP error from
Flask (unknown route, wrong method, body too large) with its status; anything else
with 500 and an id to find the logged traceback by, never the traceback itself.
OpenAI-compatible routes get OpenAI's error shape, ``{"error": {"message", "type",
"code"}}``, so OpenAI clients show the message.
"""

from __future__ import annotations

import logging
import uuid
from typing import Any

from flask import Flask, Response, jsonify, request
from werkzeug.exceptions import HTTPException

from middleware.errors import MiddlewareError, RateLimited, StateUnavailable

log = logging.getLogger("middleware.server")
OPENAI_ROUTES = ("/v1/chat/completions", "/v1/models")


def error_body(err: BaseException | None, *, openai_shape: bool) -> tuple[dict[str, Any], int]:
    """The JSON body and status for ``err``."""
    if isinstance(err, MiddlewareError):
        body = err.to_dict()
        status = err.status
    elif isinstance(err, HTTPException):
        status = err.code or 500
        code = (err.name or "error").lower().replace(" ", "_")
        body = {"error": code, "status": status, "message": err.description or err.name}
    else:
        incident = uuid.uuid4().hex[:12]
        log.error("unexpected error %s", incident, exc_info=err)
        status = 500
        body = {
            "error": "internal_error",
            "status": 500,
            "message": f"internal error (incident {incident}); the server log has the details",
        }
    if openai_shape:
        inner = {"message": body["message"], "type": body["error"], "code": body["error"]}
        if "hint" in body:
            inner["message"] += f" ({body['hint']})"
        return {"error": inner}, status
    return body, status


def register_error_handlers(app: Flask, on_error: Any) -> None:
    """Route every exception through ``error_body``; ``on_error(err)`` counts it."""

    @app.errorhandler(Exception)
    def handle(err: Exception) -> Response:
        on_error(err)
        openai_shape = request.path in OPENAI_ROUTES
        body, status = error_body(err, openai_shape=openai_shape)
        response = jsonify(body)
        response.status_code = status
        if isinstance(err, RateLimited | StateUnavailable):
            response.headers["Retry-After"] = str(int(err.retry_after))
        if status == 401:
            response.headers["WWW-Authenticate"] = 'Bearer realm="kgmw"'
        return response
