"""Credentials for a SPARQL endpoint: HTTP Basic, a Bearer token, or custom headers.

Values come from settings (the config file, ``[sources.NAME]`` tables, ``KGMW_*``
variables); a value written ``env:NAME`` is read from environment variable NAME when
the source opens, so a config file can name a secret without holding it. Credentials
only ever become request headers: ``repr`` masks them, and errors name the setting or
the variable, never the value.

>>> auth = EndpointAuth.resolve(token="env:TOKEN", env={"TOKEN": "t0k"})
>>> auth.http_headers()
{'Authorization': 'Bearer t0k'}
>>> auth
EndpointAuth(basic=False, token=True, headers=[])
"""

from __future__ import annotations

import base64
import os
import re
from collections.abc import Mapping
from dataclasses import dataclass

from middleware.errors import ConfigError

HEADER_NAME = re.compile(r"^[!#$%&'*+.^_`|~0-9A-Za-z-]+$")
ENV_PREFIX = "env:"


def secret(value: str | None, setting: str, env: Mapping[str, str]) -> str | None:
    """``value``, or the environment variable it names as ``env:NAME``."""
    if value is None or not value.startswith(ENV_PREFIX):
        return value
    name = value[len(ENV_PREFIX) :].strip()
    if name not in env:
        raise ConfigError(
            f"setting {setting!r} names environment variable {name!r}, which is not set",
            hint=f"export {name}=... before running, or set {setting} another way",
        )
    return env[name]


def parse_headers(text: str | None, env: Mapping[str, str]) -> tuple[tuple[str, str], ...]:
    """``Name: value`` lines (``value`` may be ``env:NAME``); a bad line names its number."""
    found = []
    for number, line in enumerate((text or "").splitlines(), start=1):
        if not line.strip():
            continue
        name, colon, value = line.partition(":")
        if not colon or not HEADER_NAME.match(name.strip()) or "\r" in value:
            raise ConfigError(
                f"setting 'endpoint_headers': line {number} is not 'Name: value'",
                hint="one header per line, e.g. X-Api-Key: env:MY_KEY",
            )
        value = secret(value.strip(), "endpoint_headers", env) or ""
        found.append((name.strip(), value))
    return tuple(found)


@dataclass(frozen=True, repr=False)
class EndpointAuth:
    """What an endpoint request carries to authenticate; empty by default."""

    user: str | None = None
    password: str | None = None
    token: str | None = None
    headers: tuple[tuple[str, str], ...] = ()

    @classmethod
    def resolve(
        cls,
        *,
        user: str | None = None,
        password: str | None = None,
        token: str | None = None,
        headers: str | None = None,
        env: Mapping[str, str] | None = None,
    ) -> EndpointAuth:
        """Credentials from setting values, ``env:NAME`` ones read from ``env``."""
        env = os.environ if env is None else env
        auth = cls(
            user=secret(user, "endpoint_user", env),
            password=secret(password, "endpoint_password", env),
            token=secret(token, "endpoint_token", env),
            headers=parse_headers(headers, env),
        )
        if auth.token and (auth.user or auth.password):
            raise ConfigError(
                "give endpoint_token or endpoint_user/endpoint_password, not both",
                hint="a request carries one Authorization header",
            )
        if auth.password and not auth.user:
            raise ConfigError("endpoint_password is set but endpoint_user is not")
        if (auth.token or auth.user) and any(n.lower() == "authorization" for n, _ in auth.headers):
            raise ConfigError(
                "endpoint_headers sets Authorization as well as endpoint_token or endpoint_user"
            )
        return auth

    @property
    def basic(self) -> bool:
        return self.user is not None

    @property
    def sends_credentials(self) -> bool:
        return bool(self.user or self.token or self.headers)

    def http_headers(self) -> dict[str, str]:
        """The request headers these credentials make."""
        found = dict(self.headers)
        if self.user is not None:
            pair = f"{self.user}:{self.password or ''}".encode()
            found["Authorization"] = "Basic " + base64.b64encode(pair).decode("ascii")
        elif self.token:
            found["Authorization"] = f"Bearer {self.token}"
        return found

    def __repr__(self) -> str:
        names = [name for name, _ in self.headers]
        return f"EndpointAuth(basic={self.basic}, token={bool(self.token)}, headers={names})"
