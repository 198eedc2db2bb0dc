"""A gunicorn worker class that refuses an address's connection before reading it.

``kgmw serve`` makes one ``AddressGate`` in gunicorn's master and hands it to
``use_gate`` before the workers fork, so every worker sees every refusal; the
connection of a refused address goes to the tarpit as soon as it is accepted, before
the request line is read or a thread is given to it.
"""

from __future__ import annotations

from typing import Any

from gunicorn.workers.gthread import ThreadWorker

from middleware.server.address_gate import AddressGate
from middleware.server.tarpit import Tarpit

_gate: AddressGate | None = None
_pit = Tarpit(0.0)


def use_gate(gate: AddressGate | None, pit: Tarpit) -> None:
    """The gate the workers forked from now on consult (None: none), and where refused
    connections go."""
    global _gate, _pit
    _gate, _pit = gate, pit


def _refused(client: Any) -> bool:
    address = client[0] if isinstance(client, tuple) and client else ""
    return _gate is not None and isinstance(address, str) and _gate.refused(address)


class GuardedThreadWorker(ThreadWorker):  # type: ignore[misc]
    """``gthread`` with the gate in front of the thread pool."""

    def enqueue_req(self, conn: Any) -> None:
        if _refused(conn.client):
            self.nr_conns -= 1
            _pit.hold(conn.sock)
            return
        super().enqueue_req(conn)
