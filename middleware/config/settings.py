"""Resolved settings: every area's values as typed attributes, method tables on request.

Values are resolved, lowest priority first, from the declared defaults, a
``kgmw.toml`` file (``--config``, ``$KGMW_CONFIG`` or ``./kgmw.toml``), ``KGMW_*``
environment variables and explicit overrides (CLI flags, server arguments). Every
value is type-converted and range-checked on the way in. Nothing is read at import
time.

>>> s = Settings.load(env={"KGMW_TIMEOUT": "5"}, overrides={"max_hops": 3}, config_path=None)
>>> s.timeout, s.max_hops, s.source_of("timeout")
(5.0, 3, 'env')
>>> from middleware.config.methods import RoKSettings
>>> Settings.load(env={"KGMW_ROK_TOP_K": "3"}, config_path=None).table(RoKSettings).top_k
3
"""

from __future__ import annotations

import dataclasses
import difflib
import os
import re
import tomllib
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, TypeVar

from middleware.config.areas import (
    AREAS,
    AnswerSettings,
    EvalSettings,
    LLMSettings,
    SourceSettings,
    TextSettings,
)
from middleware.config.chat import ChatSettings
from middleware.config.fields import Setting, declared
from middleware.config.key_grants import KeyGrant, parse_grants
from middleware.config.methods import METHOD_TABLES, MethodTable
from middleware.config.service import ServerSettings
from middleware.config.sparql import SparqlSettings
from middleware.config.tuning import TuneSettings
from middleware.errors import ConfigError
from middleware.support.urls import without_credentials

T = TypeVar("T", bound=MethodTable)

SETTINGS: tuple[Setting, ...] = tuple(
    [s for title, area in AREAS for s in declared(area, area=title)]
    + [s for table in METHOD_TABLES for s in table.settings()]
)
REGISTRY: dict[str, Setting] = {s.name: s for s in SETTINGS}
_GENERAL = {s.name for title, area in AREAS for s in declared(area, area=title)}
SOURCE_KEYS = ("store", "endpoint", "profile")
# A named source's credentials are its own: the general ones never follow it to its endpoint.
CREDENTIAL_KEYS = ("endpoint_user", "endpoint_password", "endpoint_token", "endpoint_headers")


def lookup(key: str, origin: str) -> Setting:
    """The setting named ``key``; an unknown name is a ConfigError listing the known ones."""
    try:
        return REGISTRY[key]
    except KeyError:
        near = difflib.get_close_matches(key, list(REGISTRY), n=3, cutoff=0.6)
        hint = (
            f"did you mean {' or '.join(repr(n) for n in near)}?"
            if near
            else "`kgmw settings` lists every setting"
        )
        raise ConfigError(f"unknown setting {key!r} in {origin}", hint=hint) from None


ENV_REFERENCE = re.compile(r"\benv:\s*([A-Za-z_][A-Za-z0-9_]*)")  # a secret's variable


def unknown_variables(names: Iterable[str], referenced: Iterable[str] = ()) -> list[str]:
    """A line for each ``KGMW_*`` variable of ``names`` that reads like a setting's but
    names none (a slip that would otherwise be ignored in silence). Left alone:
    ``referenced`` variables (named by ``env:NAME`` values or a ``*_env`` setting: they
    hold secrets), and variables close to no setting. A setting that names a variable
    (``llm_api_key_env``) is never the suggestion: its value is a name, not a secret.

    >>> unknown_variables(["KGMW_MAX_HOP", "KGMW_TIMEOUT"])
    ['KGMW_MAX_HOP names no setting and is ignored (did you mean KGMW_MAX_HOPS?)']
    >>> unknown_variables(["KGMW_ENDPOINT_PASS"], referenced=["KGMW_ENDPOINT_PASS"])
    []
    >>> unknown_variables(["KGMW_CONFG"])
    ['KGMW_CONFG names no setting and is ignored (did you mean KGMW_CONFIG?)']
    """
    suggested = {s.env_var for s in SETTINGS if not s.name.endswith("_env")} | {"KGMW_CONFIG"}
    known = {s.env_var for s in SETTINGS} | {"KGMW_CONFIG"} | set(referenced)
    lines = []
    for name in sorted(names):
        if not name.startswith("KGMW_") or name in known:
            continue
        near = difflib.get_close_matches(name, sorted(suggested), n=1, cutoff=0.85)
        if near:
            lines.append(f"{name} names no setting and is ignored (did you mean {near[0]}?)")
    return lines


def referenced_variables(settings: Settings) -> set[str]:
    """The environment variables ``settings`` read secrets from: ``env:NAME`` in any
    value (a named source's too), and the value of each ``*_env`` setting."""
    values: list[tuple[str, Any]] = [(s.name, settings.value(s.name)) for s in SETTINGS]
    values += [item for table in settings.named_sources.values() for item in table.items()]
    names: set[str] = set()
    for name, value in values:
        if isinstance(value, str):
            names.update(ENV_REFERENCE.findall(value))
            if name.endswith("_env") and value:
                names.add(value)
    return names


def _read_toml(path: Path) -> dict[str, Any]:
    try:
        with path.open("rb") as handle:
            data = tomllib.load(handle)
    except tomllib.TOMLDecodeError as err:
        raise ConfigError(f"{path}: not valid TOML: {err}") from err
    except OSError as err:
        raise ConfigError(f"{path}: cannot read config file: {err.strerror}") from err
    table = data.get("kgmw", data)
    if not isinstance(table, dict):
        raise ConfigError(f"{path}: [kgmw] must be a table")
    section = dict(table)
    for table_name in ("sources", "keys"):
        if "kgmw" in data and table_name in data:
            section.setdefault(table_name, data[table_name])
    return section


def _named_sources(raw: Any, path: Path) -> dict[str, dict[str, Any]]:
    """``[sources.NAME]`` tables: each a set of source settings (store, endpoint, profile...)."""
    if not isinstance(raw, dict) or not all(isinstance(v, dict) for v in raw.values()):
        raise ConfigError(
            f"{path}: [sources] must hold one table per source",
            hint='e.g. [sources.wiki] endpoint = "https://query.wikidata.org/sparql"',
        )
    named: dict[str, dict[str, Any]] = {}
    for name, table in raw.items():
        where = f"{path} [sources.{name}]"
        named[name] = {key: lookup(key, where).coerce(value, where) for key, value in table.items()}
    return named


def _config_path(config_path: str | Path | bool | None, env: Mapping[str, str]) -> Path | None:
    if config_path is True:
        named = env.get("KGMW_CONFIG")
        if named:
            return Path(named)
        return Path("kgmw.toml") if Path("kgmw.toml").is_file() else None
    return Path(config_path) if config_path else None


@dataclass(frozen=True)
class Settings(
    SourceSettings,
    TextSettings,
    LLMSettings,
    AnswerSettings,
    EvalSettings,
    ServerSettings,
    SparqlSettings,
    ChatSettings,
    TuneSettings,
):
    """Resolved settings; read the general ones as attributes (``settings.timeout``) and
    a method's own with ``settings.table(RoKSettings)``."""

    origins: Mapping[str, str] = field(default_factory=dict, repr=False, compare=False)
    named_sources: Mapping[str, Mapping[str, Any]] = field(
        default_factory=dict, repr=False, compare=False
    )
    method_values: Mapping[str, Any] = field(default_factory=dict, repr=False, compare=False)
    key_grants: tuple[KeyGrant, ...] = field(default=(), repr=False, compare=False)

    @classmethod
    def build(
        cls,
        values: Mapping[str, Any],
        origins: Mapping[str, str] | None = None,
        sources: Mapping[str, Mapping[str, Any]] | None = None,
        grants: tuple[KeyGrant, ...] = (),
    ) -> Settings:
        """Settings from values by name (missing ones take their default)."""
        full = {s.name: s.default for s in SETTINGS} | dict(values)
        return cls(
            **{k: v for k, v in full.items() if k in _GENERAL},
            origins={s.name: "default" for s in SETTINGS} | dict(origins or {}),
            named_sources={n: dict(t) for n, t in (sources or {}).items()},
            method_values={k: v for k, v in full.items() if k not in _GENERAL},
            key_grants=grants,
        )

    @classmethod
    def load(
        cls,
        *,
        config_path: str | Path | bool | None = True,
        env: Mapping[str, str] | None = None,
        overrides: Mapping[str, Any] | None = None,
    ) -> Settings:
        """Resolve every setting. ``config_path=True`` looks for the usual config files."""
        env = os.environ if env is None else env
        values: dict[str, Any] = {}
        origins: dict[str, str] = {}
        sources: dict[str, dict[str, Any]] = {}
        grants: tuple[KeyGrant, ...] = ()
        path = _config_path(config_path, env)
        if path is not None:
            section = _read_toml(path)
            if "sources" in section:
                sources = _named_sources(section.pop("sources"), path)
            if "keys" in section:
                grants = parse_grants(section.pop("keys"), str(path))
            for key, raw in section.items():
                values[key] = lookup(key, str(path)).coerce(raw, str(path))
                origins[key] = str(path)
        for setting in SETTINGS:
            if setting.env_var in env:
                values[setting.name] = setting.coerce(env[setting.env_var], setting.env_var)
                origins[setting.name] = "env"
        return cls.build(values, origins, sources, grants).replace(**(overrides or {}))

    def value(self, name: str) -> Any:
        """Any setting's value by name (general or a method table's)."""
        lookup(name, "a lookup")
        return self.method_values[name] if name in self.method_values else getattr(self, name)

    def table(self, table: type[T]) -> T:
        """A method's own settings as its typed table."""
        prefix = table.PREFIX + "_"
        return table(
            **{s.name.removeprefix(prefix): self.method_values[s.name] for s in table.settings()}
        )

    def source_of(self, name: str) -> str:
        """Where a value came from: 'default', a file path, 'env', 'cli' or 'source NAME'."""
        return self.origins[name]

    @property
    def source_names(self) -> list[str]:
        """Names of the ``[sources.NAME]`` tables in the config file."""
        return sorted(self.named_sources)

    def for_source(self, name: str) -> Settings:
        """These settings with source ``name``'s table laid over them.

        ``sample`` always names the bundled sample graph.

        >>> s = Settings.build({"store": "/x"}, sources={"wiki": {"endpoint": "http://q"}})
        >>> s.for_source("wiki").endpoint, s.for_source("wiki").store
        ('http://q', None)

        A source's credentials are only those of its table:

        >>> Settings.build({"endpoint_token": "t"}, sources={"wiki": {}}).for_source("wiki").endpoint_token
        """
        if name == "sample" and name not in self.named_sources:
            table: dict[str, Any] = dict.fromkeys(SOURCE_KEYS + CREDENTIAL_KEYS)
        elif name in self.named_sources:
            table = {
                "store": None,
                "endpoint": None,
                **dict.fromkeys(CREDENTIAL_KEYS),
                **self.named_sources[name],
            }
        else:
            known = ", ".join(["sample", *self.source_names])
            raise ConfigError(
                f"no source named {name!r}",
                hint=f"known sources: {known}; add a [sources.{name}] table to kgmw.toml",
            )
        origins = {**self.origins, **{key: f"source {name}" for key in table}}
        return Settings.build(self.as_dict() | table, origins, self.named_sources, self.key_grants)

    def replace(self, **overrides: Any) -> Settings:
        """A copy with ``overrides`` applied as command-line values (None leaves a value)."""
        values, origins = self.as_dict(), dict(self.origins)
        for key, raw in overrides.items():
            if raw is None:
                continue
            values[key] = lookup(key, "overrides").coerce(raw, "command line")
            origins[key] = "cli"
        return Settings.build(values, origins, self.named_sources, self.key_grants)

    def as_dict(self, *, mask_secrets: bool = False) -> dict[str, Any]:
        """Every value by name; with ``mask_secrets``, secret ones that are set read '***'."""
        values = {
            f.name: getattr(self, f.name) for f in dataclasses.fields(self) if f.name in _GENERAL
        }
        values.update(self.method_values)
        if mask_secrets:
            for name, setting in REGISTRY.items():
                if setting.secret and values.get(name):
                    values[name] = "***"
            for name in ("endpoint", "llm_base_url"):  # a password inside a URL
                if values.get(name):
                    values[name] = without_credentials(values[name])
        return {s.name: values[s.name] for s in SETTINGS}
