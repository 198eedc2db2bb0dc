"""Every LLM backend against one suite: scripted, cached, embedded, OpenAI-compatible."""

from __future__ import annotations

from pathlib import Path

import pytest

from middleware.llm.cache import CachedLLM, ResponseCache
from middleware.llm.local import EmbeddedLLM
from middleware.llm.openai_compat import OpenAICompatLLM
from middleware.llm.scripted import ScriptedLLM
from middleware.testing.llms import LLMConformance, first_option_or


class TestScriptedLLM(LLMConformance):
    @pytest.fixture(scope="class")
    @classmethod
    def llm(cls) -> ScriptedLLM:
        return first_option_or("Paris")


class TestCachedLLM(LLMConformance):
    @pytest.fixture(scope="class")
    @classmethod
    def llm(cls, tmp_path_factory: pytest.TempPathFactory) -> CachedLLM:
        cache = ResponseCache(tmp_path_factory.mktemp("replies") / "replies.sqlite")
        return CachedLLM(first_option_or("Paris"), cache)


@pytest.mark.slow
class TestEmbeddedLLM(LLMConformance):
    @pytest.fixture(scope="class")
    @classmethod
    def llm(cls, embedded: EmbeddedLLM) -> EmbeddedLLM:
        return embedded


@pytest.mark.slow
class TestOpenAICompatLLM(LLMConformance):
    @pytest.fixture(scope="class")
    @classmethod
    def llm(cls, llama_server: str, model_file: Path) -> OpenAICompatLLM:
        return OpenAICompatLLM(base_url=llama_server, model=model_file.name, timeout=60)
