"""API keys limited to some sources and methods: the ``[keys.NAME]`` tables of kgmw.toml.

Keys in ``server_api_keys`` may use everything. A key given in a ``[keys.NAME]`` table
may use only the sources and methods it lists (a list left out allows all of its kind).
The table holds the key itself (``token``) or, so that the file holds no secret, its
SHA-256 in hex (``token_sha256``, from ``printf %s KEY | sha256sum``)::

    [keys.analyst]
    token_sha256 = "9f86d081884c7d659a2feaa0c55ad015a3bf4f1b2b0b822cd15d6c15b0f00a08"
    sources = ["wiki"]          # /sparql?source=, the sources of an answer
    methods = ["rok", "pg"]     # /v1/answer's method, the chat model

>>> grant = parse_grants({"a": {"token": "t", "sources": ["wiki"]}}, "kgmw.toml")[0]
>>> grant.name, grant.sources, grant.methods
('a', ('wiki',), None)
"""

from __future__ import annotations

import hashlib
import re
from dataclasses import dataclass
from typing import Any

from middleware.errors import ConfigError

_KEYS = {"token", "token_sha256", "sources", "methods"}
_HEX = re.compile(r"[0-9a-f]{64}")


@dataclass(frozen=True)
class KeyGrant:
    """One named key: the SHA-256 of its token, and what it may use (None: everything)."""

    name: str
    digest: bytes
    sources: tuple[str, ...] | None = None
    methods: tuple[str, ...] | None = None


def parse_grants(raw: Any, where: str) -> tuple[KeyGrant, ...]:
    """The ``[keys]`` tables of a config file; ConfigError naming what is wrong."""
    if not isinstance(raw, dict) or not all(isinstance(v, dict) for v in raw.values()):
        raise ConfigError(
            f"{where}: [keys] must hold one table per key",
            hint='e.g. [keys.analyst] token_sha256 = "..." sources = ["wiki"]',
        )
    grants = []
    for name, table in raw.items():
        at = f"{where} [keys.{name}]"
        if name.isdigit() or ":" in name:  # key:sha256:... names a server_api_keys entry
            raise ConfigError(
                f"{at}: a key's name may not be a number or hold ':'", hint="name it by its user"
            )
        unknown = sorted(set(table) - _KEYS)
        if unknown:
            raise ConfigError(f"{at}: unknown field(s) {', '.join(unknown)}", hint=f"use {_KEYS}")
        grants.append(
            KeyGrant(
                name,
                _digest(table, at),
                _names(table.get("sources"), "sources", at),
                _names(table.get("methods"), "methods", at),
            )
        )
    return tuple(grants)


def _digest(table: dict[str, Any], at: str) -> bytes:
    token, hashed = table.get("token"), table.get("token_sha256")
    if (token is None) == (hashed is None):
        raise ConfigError(f"{at}: give exactly one of token and token_sha256")
    if token is not None:
        if not isinstance(token, str) or not token.strip():
            raise ConfigError(f"{at}: token must be a non-empty string")
        return hashlib.sha256(token.strip().encode()).digest()
    if not isinstance(hashed, str) or not _HEX.fullmatch(hashed.lower()):
        raise ConfigError(
            f"{at}: token_sha256 must be 64 hex digits", hint="printf %s KEY | sha256sum"
        )
    return bytes.fromhex(hashed)


def _names(value: Any, field: str, at: str) -> tuple[str, ...] | None:
    if value is None:
        return None
    if not isinstance(value, list) or not all(isinstance(v, str) and v for v in value):
        raise ConfigError(f"{at}: {field} must be a list of names", hint=f'{field} = ["..."]')
    return tuple(v.strip().lower() if field == "methods" else v for v in value)
