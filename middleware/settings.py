"""One registry of settings: name, type, default and help.

Values are resolved, lowest priority first, from the defaults, a ``kgmw.toml``
file (``--config``, ``$KGMW_CONFIG`` or ``./kgmw.toml``), ``KGMW_*`` environment
variables and explicit overrides (CLI flags, server arguments). Nothing is read at
import time.

>>> s = Settings.load(env={"KGMW_TIMEOUT": "5"}, overrides={"max_hops": 3}, config_path=None)
>>> s.timeout, s.max_hops, s.source_of("timeout")
(5.0, 3, 'env')
"""

from __future__ import annotations

import os
import tomllib
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from middleware.errors import ConfigError


@dataclass(frozen=True)
class Setting:
    name: str
    type: type
    default: Any
    help: str
    secret: bool = False  # shown masked by `kgmw settings`

    @property
    def env_var(self) -> str:
        return "KGMW_" + self.name.upper()

    def coerce(self, value: Any, origin: str) -> Any:
        """Convert ``value`` (from TOML, env or CLI) to this setting's type."""
        if value is None:
            return None
        try:
            if self.type is bool:
                if isinstance(value, bool):
                    return value
                text = str(value).strip().lower()
                if text in {"1", "true", "yes", "on"}:
                    return True
                if text in {"0", "false", "no", "off"}:
                    return False
                raise ValueError(text)
            return self.type(value)
        except (TypeError, ValueError) as err:
            raise ConfigError(
                f"setting {self.name!r} from {origin}: {value!r} is not a valid {self.type.__name__}",
                hint=self.help,
            ) from err


SETTINGS: tuple[Setting, ...] = (
    Setting(
        "store",
        str,
        None,
        "Directory of a persistent local store; unset means the bundled sample graph.",
    ),
    Setting("endpoint", str, None, "URL of a SPARQL 1.1 endpoint to use instead of a local store."),
    Setting(
        "profile",
        str,
        None,
        "Source profile name (mappings/NAME.yaml) or path; default 'generic', 'metaqa' for the sample graph.",
    ),
    Setting(
        "timeout",
        float,
        30.0,
        "Seconds one SPARQL query may take before it fails with EndpointTimeout.",
    ),
    Setting(
        "retries", int, 3, "Retries of an endpoint query after 429, 5xx or a dropped connection."
    ),
    Setting(
        "backoff",
        float,
        0.5,
        "First retry delay in seconds; doubles each retry unless Retry-After says otherwise.",
    ),
    Setting(
        "max_retry_wait",
        float,
        30.0,
        "Longest wait in seconds a Retry-After header may ask for; longer asks fail at once.",
    ),
    Setting(
        "user_agent",
        str,
        "kg-middleware/0.1 (+https://kgmw.dev)",
        "User-Agent sent to SPARQL endpoints.",
    ),
    Setting("neighbors_limit", int, 100, "Most triples neighbors() returns."),
    Setting("paths_limit", int, 100, "Most paths paths() returns."),
    Setting("max_hops", int, 2, "Default hop count for paths() (1 to 3)."),
    Setting("link_limit", int, 5, "Most candidate entities linking returns for a mention."),
    Setting(
        "fuzzy_cutoff", float, 85.0, "Lowest fuzzy-match score (0-100) for a typo-tolerant link."
    ),
    Setting(
        "literal_max_chars", int, 80, "Longest literal shown by verbalization before it is cut."
    ),
    Setting(
        "cache_dir",
        str,
        None,
        "Where the sample store and caches live; default the user cache directory.",
    ),
    Setting("progress", bool, True, "Show progress bars on long work (loading, encoding)."),
    Setting(
        "llm",
        str,
        "auto",
        "LLM backend: 'embedded' (llama.cpp in-process), 'openai' (any OpenAI-compatible "
        "server) or 'auto' (openai when llm_base_url is set, else embedded).",
    ),
    Setting(
        "llm_base_url",
        str,
        None,
        "Base URL of an OpenAI-compatible API, e.g. https://api.openai.com/v1 or "
        "http://localhost:8000/v1 (vLLM, Ollama, llama.cpp server).",
    ),
    Setting("llm_model", str, None, "Model name sent to an OpenAI-compatible server."),
    Setting(
        "llm_api_key_env",
        str,
        "OPENAI_API_KEY",
        "Name of the environment variable that holds the API key (the key itself is never "
        "a setting and never logged).",
    ),
    Setting(
        "llm_api",
        str,
        "auto",
        "Which API to use: 'chat', 'completions', or 'auto' (OpenAI server: chat, switching "
        "to completions if chat replies are empty; embedded: completion-style text).",
    ),
    Setting("llm_timeout", float, 120.0, "Seconds one LLM request may take."),
    Setting("llm_retries", int, 3, "Retries of an LLM request after 429, 5xx or a timeout."),
    Setting("llm_max_tokens", int, 256, "Default most tokens one LLM reply may have."),
    Setting(
        "llm_model_path",
        str,
        None,
        "GGUF file for the embedded backend; default the bundled Gemma 3 270M (Q4_K_M).",
    ),
    Setting("llm_context", int, 8192, "Context window (tokens) of the embedded model."),
    Setting("llm_threads", int, 0, "CPU threads for the embedded model; 0 lets llama.cpp pick."),
    Setting(
        "llm_cache",
        bool,
        True,
        "Cache temperature-0 LLM replies on disk, so an identical call is answered once.",
    ),
    Setting("max_calls", int, 12, "Most LLM calls one request may make (BudgetExceeded past it)."),
    Setting(
        "max_tokens",
        int,
        200_000,
        "Most LLM tokens (prompt plus completion) one request may spend.",
    ),
    Setting(
        "encoder",
        str,
        "all-MiniLM-L6-v2",
        "Sentence encoder: the bundled 'all-MiniLM-L6-v2', a sentence-transformers model "
        "folder, or 'hash' (deterministic, no model; for tests).",
    ),
    Setting("encoder_batch_size", int, 64, "Texts per batch when encoding."),
    Setting("encoder_cache", bool, True, "Keep vectors on disk so no text is encoded twice."),
    Setting(
        "method", str, "rok", "Method `kgmw ask` and the service use: rok, pg, qsm, io or cot."
    ),
    Setting(
        "rok_max_hops", int, 2, "RoK: longest path (1-3 hops) searched between two key entities."
    ),
    Setting(
        "rok_top_k",
        int,
        5,
        "RoK: main paths kept, taken by mean PageRank from the bucket with most key entities down.",
    ),
    Setting("rok_damping", float, 0.85, "RoK: PageRank damping factor (0 < d < 1)."),
    Setting(
        "rok_neighbor_limit",
        int,
        30,
        "RoK: most neighbour triples shown to the one filter call (spread over relations).",
    ),
    Setting(
        "rok_max_entities",
        int,
        8,
        "RoK: most linked key entities; pairs searched grow with its square.",
    ),
    Setting(
        "pg_threshold",
        float,
        0.7,
        "Pseudo-graph: lowest mean cosine a ground-graph entity's matched triples may have.",
    ),
    Setting(
        "pg_top_matches", int, 10, "Pseudo-graph: base triples kept per pseudo-triple and source."
    ),
    Setting(
        "pg_neighbors_per_entity",
        int,
        100,
        "Pseudo-graph and QSM: most neighbour triples fetched per linked entity (in and out).",
    ),
    Setting(
        "pg_link_candidates",
        int,
        3,
        "Pseudo-graph: entities linked per name; the pruning picks among same-label ones.",
    ),
    Setting(
        "pg_max_entities",
        int,
        12,
        "Pseudo-graph and QSM: most linked entities per source whose neighbourhoods are fetched.",
    ),
    Setting(
        "pg_question_query",
        bool,
        True,
        "Pseudo-graph: also match the question itself against the base graph (helps when "
        "a small model's draft misses); off is the method as published.",
    ),
    Setting(
        "qsm_top_k", int, 10, "QSM: base triples most similar to the question given to the LLM."
    ),
    Setting(
        "eval_data_dir",
        str,
        None,
        "Folder holding the benchmark datasets (metaqa/, webquestions/, ...) for `kgmw eval` and `kgmw load --recipe`.",
    ),
    Setting(
        "eval_concurrency",
        int,
        1,
        "Questions `kgmw eval` answers at once (helps with remote LLMs; the embedded one is serial).",
    ),
    Setting("server_host", str, "127.0.0.1", "Address `kgmw serve` listens on."),
    Setting("server_port", int, 8000, "Port `kgmw serve` listens on."),
    Setting(
        "server_workers",
        int,
        1,
        "Worker processes of `kgmw serve`: 1 runs the development server, more run gunicorn.",
    ),
    Setting(
        "server_api_keys",
        str,
        None,
        "Comma-separated API keys the service accepts as `Authorization: Bearer KEY`; "
        "unset leaves the service open (bind it to loopback then).",
        secret=True,
    ),
    Setting("server_max_body", int, 1_048_576, "Largest request body in bytes (413 past it)."),
    Setting(
        "server_rate_limit",
        int,
        0,
        "Requests per minute one API key (or client address) may send; 0 turns the limit off.",
    ),
    Setting(
        "server_cors_origins",
        str,
        None,
        "Comma-separated origins allowed to call the service from a browser ('*' for any); "
        "unset sends no CORS headers.",
    ),
    Setting(
        "sparql_max_rows",
        int,
        10_000,
        "Most rows or triples the /sparql proxy returns; longer results are cut and marked.",
    ),
    Setting(
        "sparql_service_allowlist",
        str,
        None,
        "Comma-separated endpoint IRIs a /sparql query may call with SERVICE; unset refuses "
        "every SERVICE clause.",
    ),
    Setting(
        "faiss_threshold",
        int,
        50_000,
        "Vector collections at least this large are searched with faiss instead of NumPy.",
    ),
)
REGISTRY: dict[str, Setting] = {s.name: s for s in SETTINGS}


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
    if "kgmw" in data and "sources" in data:
        section.setdefault("sources", data["sources"])
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
        values = {}
        for key, value in table.items():
            setting = Settings._lookup(key, f"{path} [sources.{name}]")
            values[key] = setting.coerce(value, f"{path} [sources.{name}]")
        named[name] = values
    return named


class Settings:
    """Resolved settings; read values as attributes (``settings.timeout``)."""

    def __init__(
        self,
        values: Mapping[str, Any],
        origins: Mapping[str, str],
        sources: Mapping[str, Mapping[str, Any]] | None = None,
    ) -> None:
        self._values = dict(values)
        self._origins = dict(origins)
        self._sources = {name: dict(table) for name, table in (sources or {}).items()}

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
        values = {s.name: s.default for s in SETTINGS}
        origins = {s.name: "default" for s in SETTINGS}

        path: Path | None = None
        if config_path is True:
            named = env.get("KGMW_CONFIG")
            if named:
                path = Path(named)
            elif Path("kgmw.toml").is_file():
                path = Path("kgmw.toml")
        elif config_path:
            path = Path(config_path)
        sources: dict[str, dict[str, Any]] = {}
        if path is not None:
            section = _read_toml(path)
            if "sources" in section:
                sources = _named_sources(section.pop("sources"), path)
            for key, raw in section.items():
                setting = cls._lookup(key, f"{path}")
                values[key] = setting.coerce(raw, str(path))
                origins[key] = str(path)

        for setting in SETTINGS:
            if setting.env_var in env:
                values[setting.name] = setting.coerce(env[setting.env_var], setting.env_var)
                origins[setting.name] = "env"

        return cls(values, origins, sources).replace(**(overrides or {}))

    @staticmethod
    def _lookup(key: str, origin: str) -> Setting:
        try:
            return REGISTRY[key]
        except KeyError:
            known = ", ".join(sorted(REGISTRY))
            raise ConfigError(
                f"unknown setting {key!r} in {origin}", hint=f"known: {known}"
            ) from None

    def __getattr__(self, name: str) -> Any:
        try:
            return self.__dict__["_values"][name]
        except KeyError:
            raise AttributeError(name) from None

    def source_of(self, name: str) -> str:
        """Where a value came from: 'default', a file path, 'env' or 'cli'."""
        return self._origins[name]

    @property
    def source_names(self) -> list[str]:
        """Names of the ``[sources.NAME]`` tables in the config file."""
        return sorted(self._sources)

    def for_source(self, name: str) -> Settings:
        """These settings with source ``name``'s table laid over them.

        ``sample`` always names the bundled sample graph.

        >>> s = Settings({"store": "/x", "endpoint": None}, {}, {"wiki": {"endpoint": "http://q"}})
        >>> s.for_source("wiki").endpoint, s.for_source("wiki").store
        ('http://q', None)
        """
        if name == "sample" and name not in self._sources:
            table: dict[str, Any] = {"store": None, "endpoint": None, "profile": None}
        elif name in self._sources:
            table = {"store": None, "endpoint": None, **self._sources[name]}
        else:
            known = ", ".join(["sample", *self.source_names])
            raise ConfigError(
                f"no source named {name!r}",
                hint=f"known sources: {known}; add a [sources.{name}] table to kgmw.toml",
            )
        values = {**self._values, **table}
        origins = {**self._origins, **{key: f"source {name}" for key in table}}
        return Settings(values, origins, self._sources)

    def replace(self, **overrides: Any) -> Settings:
        """A copy with ``overrides`` applied as command-line values (None leaves a value)."""
        values, origins = dict(self._values), dict(self._origins)
        for key, raw in overrides.items():
            if raw is None:
                continue
            values[key] = self._lookup(key, "overrides").coerce(raw, "command line")
            origins[key] = "cli"
        return Settings(values, origins, self._sources)

    def as_dict(self, *, mask_secrets: bool = False) -> dict[str, Any]:
        """Every value by name; with ``mask_secrets``, secret ones that are set read '***'."""
        values = dict(self._values)
        if mask_secrets:
            for name, setting in REGISTRY.items():
                if setting.secret and values.get(name):
                    values[name] = "***"
        return values
