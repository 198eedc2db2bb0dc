"""The autouse guard in conftest.py refuses non-loopback connections before any packet leaves."""

from __future__ import annotations

import socket

import pytest

from middleware.errors import EndpointError
from middleware.kg.backends.endpoint import SparqlEndpoint


def test_non_loopback_connections_are_refused() -> None:
    with socket.socket() as sock, pytest.raises(OSError, match="network access blocked"):
        sock.connect(("192.0.2.1", 80))  # TEST-NET-1: refused by the guard, never dialled


def test_an_endpoint_outside_fails_cleanly() -> None:
    endpoint = SparqlEndpoint("http://192.0.2.1/sparql", retries=0, timeout=2)
    with pytest.raises(EndpointError, match="network access blocked"):
        endpoint.neighbors("http://e.org/a")
