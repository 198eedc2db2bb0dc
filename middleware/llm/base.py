"""The LLM protocol every backend implements, and the values it returns.

Messages are chat-style dicts (``{"role": "user", "content": "..."}``). A backend
answers ``complete()`` with text and ``choose()`` with exactly one of the options it
was given; both report token usage and which request path was taken.

>>> from middleware.llm.scripted import ScriptedLLM
>>> llm = ScriptedLLM([("capital of France", "Paris"), ("river", "Seine")])
>>> llm.complete([user("What is the capital of France?")]).text
'Paris'
>>> llm.choose([user("Pick the river")], ["Seine", "Alps"]).option
'Seine'
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field, replace
from typing import Any, Literal, Protocol, TypedDict, runtime_checkable

Role = Literal["system", "user", "assistant"]
DEFAULT_MAX_TOKENS = 256


class Message(TypedDict):
    role: Role
    content: str


def system(content: str) -> Message:
    return {"role": "system", "content": content}


def user(content: str) -> Message:
    return {"role": "user", "content": content}


def assistant(content: str) -> Message:
    return {"role": "assistant", "content": content}


@dataclass(frozen=True)
class Completion:
    """One model reply with its cost.

    ``route`` names the request path actually used (``chat``, ``completions``,
    ``json_schema``, ``json_object``, ``grammar``, ``validated``, ``corrected``,
    ``scripted``), so a fallback is never silent. ``requests`` counts the model
    requests behind this one call (2 after a corrective retry).
    """

    text: str
    backend: str
    model: str
    prompt_tokens: int = 0
    completion_tokens: int = 0
    seconds: float = 0.0
    route: str = "chat"
    cached: bool = False
    finish_reason: str | None = None
    requests: int = 1

    @property
    def total_tokens(self) -> int:
        return self.prompt_tokens + self.completion_tokens

    def as_cached(self) -> Completion:
        return replace(self, cached=True, seconds=0.0)

    def to_dict(self) -> dict[str, Any]:
        return {
            "text": self.text,
            "backend": self.backend,
            "model": self.model,
            "prompt_tokens": self.prompt_tokens,
            "completion_tokens": self.completion_tokens,
            "seconds": round(self.seconds, 4),
            "route": self.route,
            "cached": self.cached,
            "finish_reason": self.finish_reason,
            "requests": self.requests,
        }

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> Completion:
        return cls(
            text=str(data["text"]),
            backend=str(data["backend"]),
            model=str(data["model"]),
            prompt_tokens=int(data.get("prompt_tokens", 0)),
            completion_tokens=int(data.get("completion_tokens", 0)),
            seconds=float(data.get("seconds", 0.0)),
            route=str(data.get("route", "chat")),
            cached=bool(data.get("cached", False)),
            finish_reason=data.get("finish_reason"),
            requests=int(data.get("requests", 1)),
        )


@dataclass(frozen=True)
class Choice:
    """The option a model picked (always one of those offered) and the call behind it."""

    index: int
    option: str
    completion: Completion
    notes: tuple[str, ...] = field(default=())


@runtime_checkable
class LLM(Protocol):
    """What methods need from a language model."""

    @property
    def name(self) -> str:
        """Backend name: ``embedded``, ``openai``, ``scripted``..."""
        ...

    @property
    def model(self) -> str:
        """The model identifier the backend talks to."""
        ...

    def complete(
        self,
        messages: Sequence[Message],
        *,
        max_tokens: int = DEFAULT_MAX_TOKENS,
        temperature: float = 0.0,
        stop: Sequence[str] = (),
        seed: int | None = None,
    ) -> Completion:
        """Continue the conversation; return the reply text and its token usage.

        ``seed`` fixes the sampler's random state, so a sampled call (temperature above
        0) can be repeated; None leaves it to the backend.
        """
        ...

    def choose(
        self,
        messages: Sequence[Message],
        options: Sequence[str],
        *,
        temperature: float = 0.0,
        seed: int | None = None,
    ) -> Choice:
        """Pick exactly one of ``options``; raises LLMOutputError if the model will not."""
        ...


def check_options(options: Sequence[str]) -> list[str]:
    """Options as a list; refuses an empty list or empty options."""
    listed = [str(o) for o in options]
    if not listed:
        raise ValueError("choose() needs at least one option")
    if any(not o.strip() for o in listed):
        raise ValueError("choose() options must not be empty or blank")
    return listed


@runtime_checkable
class Identified(Protocol):
    """An LLM that names its exact configuration, so cached replies never cross models."""

    @property
    def identity(self) -> str: ...
