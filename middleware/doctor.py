"""``kgmw doctor``: what is configured, whether each part answers, versions and caches."""

from __future__ import annotations

import importlib.metadata
import os
import platform
import time
from collections.abc import Callable
from dataclasses import dataclass, field

from middleware.config import Settings
from middleware.errors import MiddlewareError
from middleware.kg.open import open_graph
from middleware.llm.base import user
from middleware.llm.factory import backend_name, open_llm, response_cache_path
from middleware.support.cache_dir import cache_root
from middleware.support.urls import without_credentials
from middleware.text.embeddings.factory import embedding_cache_path, open_encoder

PACKAGES = (
    "kg-middleware",
    "pyoxigraph",
    "rdflib",
    "SPARQLWrapper",
    "owlready2",
    "openai",
    "llama-cpp-python",
    "sentence-transformers",
    "torch",
    "numpy",
    "faiss-cpu",
)


@dataclass
class Check:
    """One part of the set-up: what it is, whether it answered, and how fast."""

    part: str
    detail: str
    ok: bool | None = None
    message: str = ""
    seconds: float = 0.0
    extra: dict[str, str] = field(default_factory=dict)

    def to_dict(self) -> dict[str, object]:
        return {
            "part": self.part,
            "detail": self.detail,
            "ok": self.ok,
            "message": self.message,
            "seconds": round(self.seconds, 3),
            **self.extra,
        }


def _probe(check: Check, action: Callable[[], str]) -> Check:
    started = time.perf_counter()
    try:
        check.message = action()
        check.ok = True
    except MiddlewareError as err:
        check.ok, check.message = False, str(err)
    except (OSError, RuntimeError, ValueError) as err:
        check.ok, check.message = False, f"{type(err).__name__}: {err}"
    check.seconds = time.perf_counter() - started
    return check


def versions() -> dict[str, str]:
    found = {"python": platform.python_version()}
    for name in PACKAGES:
        try:
            found[name] = importlib.metadata.version(name)
        except importlib.metadata.PackageNotFoundError:
            found[name] = "not installed"
    return found


def check_source(settings: Settings) -> Check:
    where = (
        without_credentials(settings.endpoint)
        if settings.endpoint
        else settings.store or "bundled sample graph"
    )
    check = Check("source", str(where))

    def ask() -> str:
        graph = open_graph(settings)
        return f"{graph.name}: answers; has triples: {graph.has_triples(timeout=settings.timeout)}"

    return _probe(check, ask)


def check_llm(settings: Settings, *, answer: bool = True) -> Check:
    backend = backend_name(settings)
    if backend == "openai":
        detail = f"openai-compatible at {settings.llm_base_url}, model {settings.llm_model or '(server default)'}"
        key_set = "set" if os.environ.get(settings.llm_api_key_env) else "not set"
        extra = {"api_key": f"${settings.llm_api_key_env} is {key_set}"}
    else:
        detail = f"embedded llama.cpp, {settings.llm_model_path or 'bundled Gemma 3 270M (Q4_K_M)'}"
        extra = {}
    check = Check("llm", detail, extra=extra)
    if not answer:
        return check

    def ask() -> str:
        llm = open_llm(settings, use_cache=False)
        done = llm.complete([user("The capital of France is")], max_tokens=4)
        return f"answers ({done.route}): {done.text.strip()[:40]!r}"

    return _probe(check, ask)


def check_encoder(settings: Settings) -> Check:
    check = Check("encoder", str(settings.encoder))

    def encode() -> str:
        encoder = open_encoder(settings)
        vector = encoder.encode(["kgmw doctor test sentence"])
        return f"encodes: {vector.shape[1]} dimensions"

    return _probe(check, encode)


def caches(settings: Settings) -> dict[str, str]:
    root = cache_root(settings.cache_dir)
    return {
        "cache_dir": str(root),
        "llm_replies": response_cache_path(settings) + ("" if settings.llm_cache else " (off)"),
        "embeddings": embedding_cache_path(settings) + ("" if settings.encoder_cache else " (off)"),
        "models": str(root / "models"),
    }


def run_checks(settings: Settings, *, answer: bool = True) -> list[Check]:
    """Check the source, the LLM (unless ``answer`` is off) and the encoder."""
    return [
        check_source(settings),
        check_llm(settings, answer=answer),
        check_encoder(settings),
    ]
