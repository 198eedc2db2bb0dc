"""The LLM the settings ask for, wrapped in the response cache when it is on."""

from __future__ import annotations

import os

from middleware.config import Settings
from middleware.errors import ConfigError
from middleware.llm.base import LLM
from middleware.llm.cache import CachedLLM, ResponseCache
from middleware.llm.local import EmbeddedLLM, bundled_model_path
from middleware.llm.openai_compat import OpenAICompatLLM
from middleware.support.cache_dir import cache_root

BACKENDS = ("auto", "embedded", "openai", "transformers")


def backend_name(settings: Settings) -> str:
    """'embedded', 'openai' or 'transformers', resolving 'auto'."""
    choice = str(settings.llm).lower()
    if choice not in BACKENDS:
        raise ConfigError(f"llm must be one of {', '.join(BACKENDS)}, not {settings.llm!r}")
    if choice == "auto":
        return "openai" if settings.llm_base_url else "embedded"
    return choice


def response_cache_path(settings: Settings) -> str:
    return str(cache_root(settings.cache_dir) / "llm-replies.sqlite")


def open_llm(settings: Settings, *, use_cache: bool | None = None) -> LLM:
    """A ready LLM: embedded llama.cpp or an OpenAI-compatible client."""
    llm: LLM
    if backend_name(settings) == "openai":
        if not settings.llm_base_url:
            raise ConfigError(
                "llm is 'openai' but llm_base_url is not set",
                hint="set KGMW_LLM_BASE_URL, e.g. http://localhost:8000/v1",
            )
        llm = OpenAICompatLLM(
            base_url=settings.llm_base_url,
            model=settings.llm_model,
            api_key=os.environ.get(settings.llm_api_key_env),
            api_key_env=settings.llm_api_key_env,
            api=settings.llm_api,
            timeout=settings.llm_timeout,
            retries=settings.llm_retries,
            backoff=settings.backoff,
            max_retry_wait=settings.max_retry_wait,
        )
    elif backend_name(settings) == "transformers":
        from middleware.llm.transformers_backend import TransformersLLM  # torch: loaded late

        base = settings.llm_model_path or bundled_model_path(cache_root(settings.cache_dir))
        llm = TransformersLLM(base=base, adapter=settings.llm_adapter)
    else:
        llm = EmbeddedLLM(
            model_path=settings.llm_model_path,
            cache_dir=cache_root(settings.cache_dir),
            context=settings.llm_context,
            threads=settings.llm_threads,
            api=settings.llm_api,
        )
    cached = settings.llm_cache if use_cache is None else use_cache
    if cached:
        return CachedLLM(llm, ResponseCache(response_cache_path(settings)))
    return llm
