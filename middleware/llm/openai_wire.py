"""Shapes of the OpenAI-compatible wire: the choice schema, error details, and the
tally of requests and tokens one ``choose()`` spends across routes and retries."""

from __future__ import annotations

import json
import time
from collections.abc import Awaitable, Callable, Generator, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal, TypeVar, cast

import openai

from middleware.errors import LLMError, LLMTimeout
from middleware.llm.base import Choice, Completion, Message
from middleware.support.retry import Retryable, parse_retry_after

RETRY_STATUSES = {408, 409, 429, 500, 502, 503, 504}
T = TypeVar("T")


class Unsupported(Exception):
    """The server refused a request feature (a response format, a grammar)."""


@dataclass(frozen=True)
class WireRequest:
    """One request to send: a chat (``messages``) or a completion (``prompt``), with its
    parameters. ``choose()`` decides what to send as a series of these, so the same
    decisions drive the blocking client and the asyncio one."""

    kind: Literal["chat", "text"]
    params: dict[str, Any]
    messages: list[Message] = field(default_factory=list)
    prompt: str = ""

    @property
    def feature(self) -> bool:
        """The request carries a response format or a grammar."""
        return "response_format" in self.params or "extra_body" in self.params


# A decision made as a series of requests: it yields each one, is sent the reply text
# and response (or thrown Unsupported), and returns its result.
Steps = Generator[WireRequest, tuple[str, Any], T]


def drive(send: Callable[[WireRequest], tuple[str, Any]], steps: Steps[T]) -> T:
    """Run ``steps``, each request through the blocking ``send``."""
    try:
        request = next(steps)
        while True:
            try:
                reply = send(request)
            except Unsupported as why:
                request = steps.throw(why)
            else:
                request = steps.send(reply)
    except StopIteration as done:
        return cast(T, done.value)


async def adrive(send: Callable[[WireRequest], Awaitable[tuple[str, Any]]], steps: Steps[T]) -> T:
    """Run ``steps``, each request awaited through ``send``."""
    try:
        request = next(steps)
        while True:
            try:
                reply = await send(request)
            except Unsupported as why:
                request = steps.throw(why)
            else:
                request = steps.send(reply)
    except StopIteration as done:
        return cast(T, done.value)


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


def failure(
    err: openai.APIError, request: WireRequest, base_url: str, timeout: float, key_env: str
) -> Exception:
    """The error for a failed ``request``: a ``Retryable`` when another try may fix it,
    an ``LLMError`` or ``Unsupported`` when it cannot (a bad key, a refused feature, a
    4xx). When the request carries a response format or a grammar, an error that names
    it means "not supported here", whatever its status: some servers answer a
    validation failure with 500.
    """
    what = "a chat completion" if request.kind == "chat" else "a completion"
    feature = request.feature
    if isinstance(err, openai.APITimeoutError):
        return Retryable(
            lambda attempts: LLMTimeout(
                f"LLM server {base_url} timed out on {what}: no answer within {timeout:g} s",
                hint="raise llm_timeout or check the server's load",
                url=base_url,
            ),
            cause=err,
        )
    if isinstance(err, openai.APIConnectionError):
        reason = f"cannot connect ({err.__cause__ or err})"
        return Retryable(
            lambda attempts: LLMError(
                f"LLM server {base_url} failed on {what}: {reason}",
                hint="is the server running, and llm_base_url right?",
                url=base_url,
            ),
            cause=err,
        )
    if not isinstance(err, openai.APIStatusError):
        return LLMError(f"LLM server {base_url} failed on {what}: {err}", url=base_url)
    status, detail = err.status_code, error_detail(err)
    if status in (401, 403):
        return LLMError(
            f"LLM server {base_url} refused the API key (HTTP {status}): {detail}",
            hint=f"put a valid key in ${key_env}",
            url=base_url,
        )
    if feature and status != 429 and mentions_feature(detail):
        return Unsupported(detail)
    if status not in RETRY_STATUSES:
        return LLMError(
            f"LLM server {base_url} rejected {what} (HTTP {status}): {detail}",
            hint="check llm_model and llm_api against what the server offers",
            url=base_url,
        )
    return Retryable(
        lambda attempts: LLMError(
            f"LLM server {base_url} failed on {what} after "
            f"{attempts} attempts: HTTP {status}: {detail}",
            hint="the server may be overloaded; try later or raise llm_retries",
            url=base_url,
        ),
        reason=f"HTTP {status}",
        retry_after=parse_retry_after(err.response.headers.get("retry-after")),
        cause=err,
    )
