"""What the integration tests run on: the bundled sample graph, offline settings and a
scripted LLM (``plan`` answers its questions without one)."""

from __future__ import annotations

from functools import cache
from typing import Any

from middleware.config import Settings
from middleware.kg.backends.local import LocalStore
from middleware.kg.sample import sample_store
from middleware.llm.scripted import ScriptedLLM

QUESTION = "Which films did James Cameron direct?"


@cache
def sample_graph() -> LocalStore:
    """The sample store, opened once (the test session's cache directory)."""
    return sample_store()


def offline_settings(**values: Any) -> Settings:
    """Settings from nothing but ``values``: no config file, no environment, the hash encoder."""
    overrides = {"progress": False, "encoder": "hash", **values}
    return Settings.load(config_path=None, env={}, overrides=overrides)


def offline_params(**values: Any) -> dict[str, Any]:
    """Constructor arguments for a retriever or tool over the sample graph, offline."""
    return {
        "graph": sample_graph(),
        "llm": ScriptedLLM(default="Titanic"),
        "settings": offline_settings(**values),
    }
