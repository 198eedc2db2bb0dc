"""Language models behind one protocol: embedded llama.cpp, any OpenAI-compatible server,
and a scripted fake for tests; plus the usage ledger, budgets, reply cache and prompts."""

from middleware.llm.base import (
    LLM,
    Choice,
    Completion,
    Message,
    assistant,
    system,
    user,
)
from middleware.llm.cache import CachedLLM, ResponseCache
from middleware.llm.factory import backend_name, open_llm
from middleware.llm.ledger import Budget, Ledger, LLMCall
from middleware.llm.local import EmbeddedLLM
from middleware.llm.openai_compat import OpenAICompatLLM
from middleware.llm.prompt_templates import Prompt, PromptTemplate, flatten, load_template, render
from middleware.llm.scripted import ScriptedLLM
from middleware.llm.session import LLMSession

__all__ = [
    "LLM",
    "Budget",
    "CachedLLM",
    "Choice",
    "Completion",
    "EmbeddedLLM",
    "LLMCall",
    "LLMSession",
    "Ledger",
    "Message",
    "OpenAICompatLLM",
    "Prompt",
    "PromptTemplate",
    "ResponseCache",
    "ScriptedLLM",
    "assistant",
    "backend_name",
    "flatten",
    "load_template",
    "open_llm",
    "render",
    "system",
    "user",
]
