"""Shapes of the OpenAI-compatible wire: the choice schema, error details, and the
tally of requests and tokens one ``choose()`` spends across routes and retries."""

from __future__ import annotations

import json
import time
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import openai

from middleware.llm.base import Choice, Completion


class Unsupported(Exception):
    """The server refused a request feature (a response format, a grammar)."""


def choice_schema(options: Sequence[str]) -> dict[str, Any]:
    """A JSON schema whose only valid objects name one of ``options``."""
    return {
        "type": "object",
        "properties": {"choice": {"type": "string", "enum": list(options)}},
        "required": ["choice"],
        "additionalProperties": False,
    }


@dataclass
class Tally:
    """Requests and tokens spent on one choose() call, across routes and retries."""

    started: float
    chars: int
    requests: int = 0
    prompt_tokens: int = 0
    completion_tokens: int = 0

    def add(self, reply: tuple[str, Any]) -> tuple[str, Any]:
        text, response = reply
        self.requests += 1
        usage = getattr(response, "usage", None)
        if usage is not None:
            self.prompt_tokens += int(getattr(usage, "prompt_tokens", 0) or 0)
            self.completion_tokens += int(getattr(usage, "completion_tokens", 0) or 0)
        else:  # some servers omit usage; a rough estimate keeps budgets meaningful
            self.prompt_tokens += self.chars // 4
            self.completion_tokens += len(text) // 4
        return text, response

    def choice(
        self, backend: str, model: str, index: int, listed: list[str], response: Any, route: str
    ) -> Choice:
        done = Completion(
            text=listed[index],
            backend=backend,
            model=str(getattr(response, "model", None) or model),
            prompt_tokens=self.prompt_tokens,
            completion_tokens=self.completion_tokens,
            seconds=time.perf_counter() - self.started,
            route=route,
            finish_reason=getattr(response.choices[0], "finish_reason", None),
            requests=self.requests,
        )
        return Choice(index, listed[index], done)


def error_detail(err: openai.APIStatusError) -> str:
    body = err.body
    if isinstance(body, dict):
        inner = body.get("error", body)
        if isinstance(inner, dict) and inner.get("message"):
            return str(inner["message"])[:300]
        if isinstance(inner, str):
            return inner[:300]
        return json.dumps(body)[:300]
    try:
        return err.response.text[:300] or err.message
    except (AttributeError, UnicodeDecodeError):
        return str(err.message)[:300]


def mentions_feature(detail: str) -> bool:
    lowered = detail.lower()
    return any(w in lowered for w in ("response_format", "json_schema", "schema", "grammar"))
