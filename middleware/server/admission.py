"""Who a request comes from and whether it may go on, one check for every way in.

The Flask app's ``before_request`` hook and the ``/sparql`` fast path
(``middleware.server.proxy.sparql_fast``) both ask ``Admission.admit``: the API key (and the
failed authentications of the address), the rate limit, and for ``/sparql`` the
penalty box.
"""

from __future__ import annotations

from dataclasses import dataclass

from flask import Flask

from middleware.config import Settings
from middleware.config.key_grants import KeyGrant
from middleware.errors import RateLimited, Unauthorized
from middleware.server.connections.address_gate import client_network
from middleware.server.guard import ADDRESS_CALLER, ApiKeys
from middleware.server.rate_limits import RequestLimits
from middleware.server.state import ServiceState


@dataclass(frozen=True)
class Admitted:
    """The caller id (``key:NAME``, else ``addr:IP``: who the penalty box sees) and
    what its key may use (None: everything)."""

    caller: str
    grant: KeyGrant | None


class Admission:
    """The keys, the failed-authentication allowance and the rate limit of ``settings``
    (the limits kept by the app's Flask-Limiter)."""

    def __init__(self, app: Flask, settings: Settings, state: ServiceState) -> None:
        self.keys = ApiKeys.parse(settings.server_api_keys, settings.key_grants)
        self.limits = RequestLimits(
            app,
            per_minute=settings.server_rate_limit,
            auth_failures=settings.server_auth_failures,  # per client address
            shared=state.shared,  # server_state_url: one count for every host
            outage=settings.server_state_outage,
        )
        self.state = state

    def admit(
        self, remote_addr: str | None, authorization: str | None, *, sparql: bool = False
    ) -> Admitted:
        """The caller of a request from ``remote_addr`` with header ``authorization``;
        Unauthorized, RateLimited (``sparql``: also while in the penalty box)."""
        address = f"{ADDRESS_CALLER}{client_network(remote_addr or '')}"  # IPv6: its /64
        caller = None
        if self.keys.enabled:
            try:  # past its failed authentications: a look in this host's table
                self.state.penalties.check_failed(address, self.limits.failures_allowed)
            except RateLimited as err:  # later connections are closed before HTTP
                self.state.gate.refuse(remote_addr or "", err.retry_after)
                raise
            try:
                caller = self.keys.caller(authorization)
            except Unauthorized:  # counted (in Redis when shared); the last allowed one
                refused = self.limits.count_failure(address)  # refuses the address
                if refused > 0:
                    self.state.penalties.refuse_failed(address, refused)
                raise
        admitted = Admitted(caller or address, self.keys.grant(caller))
        self.limits.check(admitted.caller)
        if sparql:
            self.state.penalties.check(admitted.caller)
        return admitted
