"""The current app's state and metrics, and the request's key grant, for route functions."""

from __future__ import annotations

from flask import current_app, g

from middleware.config.key_grants import KeyGrant
from middleware.server.metrics import Metrics
from middleware.server.state import ServiceState

STATE_KEY = "KGMW_STATE"
METRICS_KEY = "KGMW_METRICS"


def state() -> ServiceState:
    found: ServiceState = current_app.config[STATE_KEY]
    return found


def metrics() -> Metrics:
    found: Metrics = current_app.config[METRICS_KEY]
    return found


def grant() -> KeyGrant | None:
    """What the request's API key may use (None: everything, or no keys configured)."""
    found: KeyGrant | None = g.get("grant")
    return found
