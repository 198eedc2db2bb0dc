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
The API key is read from the environment by the caller and never logged.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Sequence
from typing import Any, cast

import openai

from middleware.errors import BadRequest, LLMError, LLMOutputError, LLMTimeout
from middleware.llm.base import DEFAULT_MAX_TOKENS, Choice, Completion, Message, check_options
from middleware.llm.local import options_grammar
from middleware.llm.openai_wire import (
    Tally,
    Unsupported,
    choice_schema,
    error_detail,
    mentions_feature,
)
from middleware.llm.options import match_option, retry_messages, with_options
from middleware.llm.templates import flatten
from middleware.support.retry import Retryable, parse_retry_after, retry_call

RETRY_STATUSES = {408, 409, 429, 500, 502, 503, 504}
APIS = ("auto", "chat", "completions")


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
        self._client = openai.OpenAI(
            base_url=self.base_url,
            api_key=api_key or "no-key",
            timeout=timeout,
            max_retries=0,
        )
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

    def _call(self, what: str, request: Callable[[], Any], *, feature: bool = False) -> Any:
        """Run one API request with bounded retries; map failures to LLM errors.

        With ``feature`` (the request carries a response format or a grammar), an error
        that names the feature means "not supported here", whatever its status: some
        servers answer a validation failure with 500.
        """
        return retry_call(
            lambda: self._attempt(what, request, feature=feature),
            retries=self.retries,
            backoff=self.backoff,
            max_wait=self.max_retry_wait,
            too_long=lambda wait, reason: LLMError(
                f"LLM server {self.base_url} asked to retry after {wait:g} s",
                hint=f"that is longer than max_retry_wait ({self.max_retry_wait:g} s)",
                url=self.base_url,
            ),
            sleep=self._sleep,
        )

    def _attempt(self, what: str, request: Callable[[], Any], *, feature: bool) -> Any:
        """One API request; a failure that another try may fix is a Retryable."""
        try:
            return request()
        except openai.APITimeoutError as err:
            raise Retryable(
                lambda attempts: LLMTimeout(
                    f"LLM server {self.base_url} timed out on {what}: "
                    f"no answer within {self.timeout:g} s",
                    hint="raise llm_timeout or check the server's load",
                    url=self.base_url,
                ),
                cause=err,
            ) from err
        except openai.APIConnectionError as err:
            reason = f"cannot connect ({err.__cause__ or err})"
            raise Retryable(
                lambda attempts: LLMError(
                    f"LLM server {self.base_url} failed on {what}: {reason}",
                    hint="is the server running, and llm_base_url right?",
                    url=self.base_url,
                ),
                cause=err,
            ) from err
        except openai.APIStatusError as err:
            self._refuse_at_once(err, what, feature=feature)
            status, detail = err.status_code, error_detail(err)
            raise Retryable(
                lambda attempts: LLMError(
                    f"LLM server {self.base_url} failed on {what} after "
                    f"{attempts} attempts: HTTP {status}: {detail}",
                    hint="the server may be overloaded; try later or raise llm_retries",
                    url=self.base_url,
                ),
                reason=f"HTTP {status}",
                retry_after=parse_retry_after(err.response.headers.get("retry-after")),
                cause=err,
            ) from err

    def _refuse_at_once(self, err: openai.APIStatusError, what: str, *, feature: bool) -> None:
        """Raise for answers that retrying cannot fix: bad key, unsupported feature, 4xx."""
        status, detail = err.status_code, error_detail(err)
        if status in (401, 403):
            raise LLMError(
                f"LLM server {self.base_url} refused the API key (HTTP {status}): {detail}",
                hint=f"put a valid key in ${self.api_key_env}",
                url=self.base_url,
            ) from err
        if feature and status != 429 and mentions_feature(detail):
            raise Unsupported(detail) from err
        if status not in RETRY_STATUSES:
            raise LLMError(
                f"LLM server {self.base_url} rejected {what} (HTTP {status}): {detail}",
                hint="check llm_model and llm_api against what the server offers",
                url=self.base_url,
            ) from err

    def _chat(self, messages: Sequence[Message], **params: Any) -> tuple[str, Any]:
        response = self._call(
            "a chat completion",
            lambda: self._client.chat.completions.create(
                model=self._model,
                messages=cast(Any, list(messages)),
                **params,
            ),
            feature="response_format" in params or "extra_body" in params,
        )
        if not response.choices:
            raise LLMOutputError(f"LLM server {self.base_url} returned no choices")
        return response.choices[0].message.content or "", response

    def _text(self, prompt: str, **params: Any) -> tuple[str, Any]:
        response = self._call(
            "a completion",
            lambda: self._client.completions.create(model=self._model, prompt=prompt, **params),
            feature="extra_body" in params,
        )
        if not response.choices:
            raise LLMOutputError(f"LLM server {self.base_url} returned no choices")
        return response.choices[0].text or "", response

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
        params: dict[str, Any] = {"max_tokens": max_tokens, "temperature": temperature}
        if stop:
            params["stop"] = list(stop)
        if seed is not None:
            params["seed"] = seed
        chars = sum(len(m["content"]) for m in messages)
        started = time.perf_counter()
        if self._use_chat():
            text, response = self._chat(messages, **params)
            if text.strip() or self.chat_works is True:
                self.chat_works = True
                return self._completion(text, response, "chat", started, chars)
            self._switch_to_completions("the chat API returned an empty reply")
        text, response = self._text(flatten(messages), **params)
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
                    text, response = tally.add(request())
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
                return self._validated(full, listed, params, tally, first=(text, response))
            if not switched:
                break
        return self._validated(full, listed, params, tally)

    def _constrained_routes(
        self, full: list[Message], listed: list[str], params: dict[str, Any]
    ) -> list[tuple[str, Callable[[], tuple[str, Any]]]]:
        schema = choice_schema(listed)
        grammar = options_grammar(listed)
        if self._use_chat():
            json_schema = {
                "type": "json_schema",
                "json_schema": {"name": "choice", "schema": schema, "strict": True},
            }
            json_object = {"type": "json_object", "schema": schema}
            routes = [
                ("json_schema", lambda: self._chat(full, response_format=json_schema, **params))
            ]
            if not any('"' in o or "\\" in o for o in listed):
                # llama-cpp-python 0.3 turns enums holding quotes or backslashes into a
                # grammar it cannot parse, and its server process aborts: skip the route.
                routes.append(
                    ("json_object", lambda: self._chat(full, response_format=json_object, **params))
                )
            # llama.cpp servers also take a GBNF grammar on the chat API.
            routes.append(
                (
                    "chat_grammar",
                    lambda: self._chat(full, extra_body={"grammar": grammar}, **params),
                )
            )
            return routes
        prompt = flatten(full)
        return [("grammar", lambda: self._text(prompt, extra_body={"grammar": grammar}, **params))]

    def _ask_plain(self, conversation: list[Message], params: dict[str, Any]) -> tuple[str, Any]:
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
    ) -> Choice:
        """Plain prompt, strict validation, and one corrective retry."""
        text, response = first if first is not None else tally.add(self._ask_plain(full, params))
        index = match_option(text, listed)
        if index is not None:
            return tally.choice(self.name, self.model, index, listed, response, "validated")
        retry = retry_messages(full, text, listed)
        text, response = tally.add(self._ask_plain(retry, params))
        index = match_option(text, listed)
        if index is None:
            raise LLMOutputError(
                f"the model at {self.base_url} named none of the {len(listed)} options, "
                f"even when asked again (last reply {text[:80]!r})",
                raw=text,
                hint="use a stronger model or a server with JSON-schema or grammar support",
            )
        return tally.choice(self.name, self.model, index, listed, response, "corrected")
