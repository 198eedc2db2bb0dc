"""Any OpenAI-compatible server: OpenAI, vLLM, Ollama, llama.cpp's servers.

Servers differ, so this client finds out and remembers:

- ``api="auto"`` uses the chat API; if a chat reply comes back empty (a base model
  served behind a chat template ends its turn at once), it switches to the
  completions API with the conversation flattened to completion-style text.
- ``choose()`` asks for a JSON object whose ``choice`` is an ``enum`` of the options
  (``json_schema`` response format, else llama.cpp's ``json_object`` with a schema);
  on the completions API it sends a GBNF grammar (llama.cpp servers). A server that
  refuses these gets a plain prompt, the reply is validated strictly, and one
  corrective retry is made. The route taken is on every Completion.

Retries: 429, 5xx, timeouts and dropped connections are retried ``retries`` times
with doubling backoff, waiting what ``Retry-After`` asks up to ``max_retry_wait``.
``acomplete()`` and ``achoose()`` make the same requests and decisions on an asyncio
client (one per event loop): many calls wait together, none holding a thread.
The API key is read from the environment by the caller and never logged.
"""

from __future__ import annotations

import asyncio
import threading
import time
import weakref
from collections.abc import Callable, Sequence
from typing import Any, cast

import openai

from middleware.errors import BadRequest, LLMError, LLMOutputError
from middleware.llm.base import DEFAULT_MAX_TOKENS, Choice, Completion, Message, check_options
from middleware.llm.local import options_grammar
from middleware.llm.openai_wire import (
    Steps,
    Tally,
    Unsupported,
    WireRequest,
    adrive,
    choice_schema,
    drive,
    failure,
)
from middleware.llm.options import match_option, retry_messages, with_options
from middleware.llm.prompt_templates import flatten
from middleware.support.retry import aretry_call, retry_call

APIS = ("auto", "chat", "completions")
_FAILURES = (openai.APITimeoutError, openai.APIConnectionError, openai.APIStatusError)


class OpenAICompatLLM:
    """A client for ``base_url``; ``model`` is sent as given (servers with one model ignore it)."""

    name = "openai"

    def __init__(
        self,
        *,
        base_url: str,
        model: str | None = None,
        api_key: str | None = None,
        api_key_env: str = "OPENAI_API_KEY",
        api: str = "auto",
        timeout: float = 120.0,
        retries: int = 3,
        backoff: float = 0.5,
        max_retry_wait: float = 30.0,
        sleep: Callable[[float], None] = time.sleep,
    ) -> None:
        if not base_url.startswith(("http://", "https://")):
            raise BadRequest(f"llm_base_url must start with http:// or https://, got {base_url!r}")
        if api not in APIS:
            raise BadRequest(f"llm_api must be one of {', '.join(APIS)}, not {api!r}")
        self.base_url = base_url.rstrip("/")
        self._model = model or "default"
        self.api_key_env = api_key_env
        self.api = api
        self.timeout = timeout
        self.retries = max(0, retries)
        self.backoff = backoff
        self.max_retry_wait = max_retry_wait
        self._sleep = sleep
        self._client_args: dict[str, Any] = {
            "base_url": self.base_url,
            "api_key": api_key or "no-key",
            "timeout": timeout,
            "max_retries": 0,  # retries are ours: Retry-After, backoff, clear errors
        }
        self._client = openai.OpenAI(**self._client_args)
        self._async_clients: weakref.WeakKeyDictionary[
            asyncio.AbstractEventLoop, openai.AsyncOpenAI
        ] = weakref.WeakKeyDictionary()
        self._lock = threading.Lock()
        # What this server turned out to support; filled in as calls find out.
        self.chat_works: bool | None = None if api == "auto" else api == "chat"
        self.unsupported: set[str] = set()
        self.fallbacks: list[str] = []

    @property
    def model(self) -> str:
        return self._model

    @property
    def identity(self) -> str:
        return f"openai:{self.base_url}:{self._model}"

    # -- transport -------------------------------------------------------------------

    def _client_for_loop(self) -> openai.AsyncOpenAI:
        """The asyncio client of the running event loop (a client's connections belong
        to the loop that opened them)."""
        loop = asyncio.get_running_loop()
        with self._lock:
            client = self._async_clients.get(loop)
            if client is None:
                client = self._async_clients[loop] = openai.AsyncOpenAI(**self._client_args)
            return client

    def _retrying(self) -> dict[str, Any]:
        return {
            "retries": self.retries,
            "backoff": self.backoff,
            "max_wait": self.max_retry_wait,
            "too_long": lambda wait, reason: LLMError(
                f"LLM server {self.base_url} asked to retry after {wait:g} s",
                hint=f"that is longer than max_retry_wait ({self.max_retry_wait:g} s)",
                url=self.base_url,
            ),
        }

    def _failure(self, err: openai.APIError, request: WireRequest) -> Exception:
        return failure(err, request, self.base_url, self.timeout, self.api_key_env)

    def _send(self, request: WireRequest) -> tuple[str, Any]:
        """One request with bounded retries; the reply text and the response."""

        def attempt() -> Any:
            try:
                if request.kind == "chat":
                    return self._client.chat.completions.create(
                        model=self._model, messages=cast(Any, request.messages), **request.params
                    )
                return self._client.completions.create(
                    model=self._model, prompt=request.prompt, **request.params
                )
            except _FAILURES as err:
                raise self._failure(err, request) from err

        return self._reply(request, retry_call(attempt, sleep=self._sleep, **self._retrying()))

    async def _asend(self, request: WireRequest) -> tuple[str, Any]:
        """``_send`` on the asyncio client: the event loop waits, no thread does."""
        client = self._client_for_loop()

        async def attempt() -> Any:
            try:
                if request.kind == "chat":
                    return await client.chat.completions.create(
                        model=self._model, messages=cast(Any, request.messages), **request.params
                    )
                return await client.completions.create(
                    model=self._model, prompt=request.prompt, **request.params
                )
            except _FAILURES as err:
                raise self._failure(err, request) from err

        return self._reply(request, await aretry_call(attempt, **self._retrying()))

    def _reply(self, request: WireRequest, response: Any) -> tuple[str, Any]:
        if not response.choices:
            raise LLMOutputError(f"LLM server {self.base_url} returned no choices")
        if request.kind == "chat":
            return response.choices[0].message.content or "", response
        return response.choices[0].text or "", response

    async def aclose(self) -> None:
        """Close the running event loop's asyncio client (call it before the loop ends)."""
        client = self._async_clients.pop(asyncio.get_running_loop(), None)
        if client is not None:
            await client.close()

    def _chat(self, messages: Sequence[Message], **params: Any) -> WireRequest:
        return WireRequest("chat", params, messages=list(messages))

    def _text(self, prompt: str, **params: Any) -> WireRequest:
        return WireRequest("text", params, prompt=prompt)

    def _completion(
        self, text: str, response: Any, route: str, started: float, prompt_chars: int
    ) -> Completion:
        usage = getattr(response, "usage", None)
        if usage is not None:
            prompt_tokens, completion_tokens = usage.prompt_tokens, usage.completion_tokens
        else:  # some servers omit usage; a rough estimate keeps budgets meaningful
            prompt_tokens, completion_tokens = prompt_chars // 4, len(text) // 4
        choice = response.choices[0] if response.choices else None
        return Completion(
            text=text,
            backend=self.name,
            model=str(getattr(response, "model", None) or self._model),
            prompt_tokens=int(prompt_tokens or 0),
            completion_tokens=int(completion_tokens or 0),
            seconds=time.perf_counter() - started,
            route=route,
            finish_reason=getattr(choice, "finish_reason", None),
        )

    # -- complete --------------------------------------------------------------------

    def _use_chat(self) -> bool:
        return self.chat_works is not False

    def complete(
        self,
        messages: Sequence[Message],
        *,
        max_tokens: int = DEFAULT_MAX_TOKENS,
        temperature: float = 0.0,
        stop: Sequence[str] = (),
        seed: int | None = None,
    ) -> Completion:
        return drive(
            self._send, self._complete_steps(messages, max_tokens, temperature, stop, seed)
        )

    async def acomplete(
        self,
        messages: Sequence[Message],
        *,
        max_tokens: int = DEFAULT_MAX_TOKENS,
        temperature: float = 0.0,
        stop: Sequence[str] = (),
        seed: int | None = None,
    ) -> Completion:
        """``complete()`` awaited on an asyncio client: many calls wait together on one
        event loop, each without a thread."""
        steps = self._complete_steps(messages, max_tokens, temperature, stop, seed)
        return await adrive(self._asend, steps)

    def _complete_steps(
        self,
        messages: Sequence[Message],
        max_tokens: int,
        temperature: float,
        stop: Sequence[str],
        seed: int | None,
    ) -> Steps[Completion]:
        params: dict[str, Any] = {"max_tokens": max_tokens, "temperature": temperature}
        if stop:
            params["stop"] = list(stop)
        if seed is not None:
            params["seed"] = seed
        chars = sum(len(m["content"]) for m in messages)
        started = time.perf_counter()
        if self._use_chat():
            text, response = yield self._chat(messages, **params)
            if text.strip() or self.chat_works is True:
                self.chat_works = True
                return self._completion(text, response, "chat", started, chars)
            self._switch_to_completions("the chat API returned an empty reply")
        text, response = yield self._text(flatten(messages), **params)
        return self._completion(text, response, "completions", started, chars)

    def _switch_to_completions(self, reason: str) -> None:
        with self._lock:
            if self.chat_works is not False:
                self.chat_works = False
                self.fallbacks.append(f"{reason}; using the completions API from now on")

    # -- choose ----------------------------------------------------------------------

    def choose(
        self,
        messages: Sequence[Message],
        options: Sequence[str],
        *,
        temperature: float = 0.0,
        seed: int | None = None,
    ) -> Choice:
        return drive(self._send, self._choose_steps(messages, options, temperature, seed))

    async def achoose(
        self,
        messages: Sequence[Message],
        options: Sequence[str],
        *,
        temperature: float = 0.0,
        seed: int | None = None,
    ) -> Choice:
        """``choose()`` awaited on an asyncio client, with the same routes and fallbacks."""
        return await adrive(self._asend, self._choose_steps(messages, options, temperature, seed))

    def _choose_steps(
        self,
        messages: Sequence[Message],
        options: Sequence[str],
        temperature: float,
        seed: int | None,
    ) -> Steps[Choice]:
        listed = check_options(options)
        full = with_options(messages, listed)
        tally = Tally(started=time.perf_counter(), chars=sum(len(m["content"]) for m in full))
        longest = max(len(o) for o in listed)
        params: dict[str, Any] = {"temperature": temperature, "max_tokens": longest + 32}
        if seed is not None:
            params["seed"] = seed
        for _ in range(2):  # a second pass only after switching from chat to completions
            switched = False
            for route, request in self._constrained_routes(full, listed, params):
                if route in self.unsupported:
                    continue
                try:
                    text, response = tally.add((yield request))
                except Unsupported as why:
                    tally.requests += 1
                    self.unsupported.add(route)
                    reason = " ".join(str(why).split())[:120]
                    self.fallbacks.append(f"{route} refused ({reason}); trying the next route")
                    continue
                if route != "grammar" and self.chat_works is None:
                    if not text.strip():
                        self._switch_to_completions("the chat API returned an empty reply")
                        switched = True
                        break
                    self.chat_works = True
                index = match_option(text, listed)
                if index is not None:
                    return tally.choice(self.name, self.model, index, listed, response, route)
                # The server took the constraint but did not keep to it.
                self.unsupported.add(route)
                self.fallbacks.append(f"{route} was accepted but ignored (reply {text[:60]!r})")
                return (yield from self._validated(full, listed, params, tally, (text, response)))
            if not switched:
                break
        return (yield from self._validated(full, listed, params, tally))

    def _constrained_routes(
        self, full: list[Message], listed: list[str], params: dict[str, Any]
    ) -> list[tuple[str, WireRequest]]:
        schema = choice_schema(listed)
        grammar = options_grammar(listed)
        if self._use_chat():
            json_schema = {
                "type": "json_schema",
                "json_schema": {"name": "choice", "schema": schema, "strict": True},
            }
            json_object = {"type": "json_object", "schema": schema}
            routes = [("json_schema", self._chat(full, response_format=json_schema, **params))]
            if not any('"' in o or "\\" in o for o in listed):
                # llama-cpp-python 0.3 turns enums holding quotes or backslashes into a
                # grammar it cannot parse, and its server process aborts: skip the route.
                routes.append(
                    ("json_object", self._chat(full, response_format=json_object, **params))
                )
            # llama.cpp servers also take a GBNF grammar on the chat API.
            routes.append(
                ("chat_grammar", self._chat(full, extra_body={"grammar": grammar}, **params))
            )
            return routes
        prompt = flatten(full)
        return [("grammar", self._text(prompt, extra_body={"grammar": grammar}, **params))]

    def _ask_plain(self, conversation: list[Message], params: dict[str, Any]) -> WireRequest:
        if self._use_chat():
            return self._chat(conversation, **params)
        return self._text(flatten(conversation), **params)

    def _validated(
        self,
        full: list[Message],
        listed: list[str],
        params: dict[str, Any],
        tally: Tally,
        first: tuple[str, Any] | None = None,
    ) -> Steps[Choice]:
        """Plain prompt, strict validation, and one corrective retry."""
        if first is None:
            first = tally.add((yield self._ask_plain(full, params)))
        text, response = first
        index = match_option(text, listed)
        if index is not None:
            return tally.choice(self.name, self.model, index, listed, response, "validated")
        retry = retry_messages(full, text, listed)
        text, response = tally.add((yield self._ask_plain(retry, params)))
        index = match_option(text, listed)
        if index is None:
            raise LLMOutputError(
                f"the model at {self.base_url} named none of the {len(listed)} options, "
                f"even when asked again (last reply {text[:80]!r})",
                raw=text,
                hint="use a stronger model or a server with JSON-schema or grammar support",
            )
        return tally.choice(self.name, self.model, index, listed, response, "corrected")
