"""A PyTorch (transformers) backend, for the walk's model tuned by ``kgmw ksl-tune``.

``choose()`` scores every option: the log-probability of `` option`` after the prompt
(the prompt is run once, each option continues a copy of its cache), and takes the
best, or samples by those scores when ``temperature`` is above 0. One short option list
costs one prompt pass plus a few tokens per option, so no grammar is needed.
``complete()`` generates greedily (or samples with a seed) and stops at ``stop``.
A prompt runs from the longest token prefix it shares with one of the last few prompts
(``torch_prefix``): the walk's rounds share the instruction and few-shot examples, and
the rounds before, so only the new tokens run.
Prompts are the embedded backend's completion-style text (``flatten``), the text the
tuning examples were made of.
"""

from __future__ import annotations

import copy
import json
import math
import random
import threading
import time
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from middleware.errors import ConfigError
from middleware.llm.base import DEFAULT_MAX_TOKENS, Choice, Completion, Message, check_options
from middleware.llm.options import with_options
from middleware.llm.prompt_templates import flatten
from middleware.llm.torch_models import load_causal_lm, require
from middleware.llm.torch_prefix import KEPT, Prefilled, PrefixCache

OPTION_BATCH = 16  # option continuations run together (each row holds a copy of the cache)


@dataclass(frozen=True)
class Scored:
    """The options scored after one prompt."""

    prompt_tokens: int
    reused: int  # prompt tokens taken from a kept prefix cache
    scores: list[float]  # each option's log-probability
    lengths: list[int]  # each option's token count


class TransformersLLM:
    """A causal LM (a model folder or GGUF file) with an optional LoRA adapter."""

    name = "transformers"

    def __init__(
        self, *, base: str | Path, adapter: str | Path | None = None, kept: int = KEPT
    ) -> None:
        """``kept``: how many recent prompts' caches are kept for reuse (0: none)."""
        self.base = Path(base).expanduser()
        self.adapter = Path(adapter).expanduser() if adapter else None
        if self.adapter is not None and not (self.adapter / "adapter_config.json").is_file():
            raise ConfigError(
                f"no LoRA adapter in {self.adapter}",
                hint="point llm_adapter at `kgmw ksl-tune`'s OUT/adapter folder",
            )
        self._loaded: tuple[Any, Any] | None = None
        self._prefixes = PrefixCache(kept)
        self._lock = threading.Lock()

    @property
    def model(self) -> str:
        return self.base.name + (f"+{self.adapter.parent.name}" if self.adapter else "")

    @property
    def identity(self) -> str:
        """Base, adapter and the tuning run that made it: replies cached for one adapter
        are never served for another."""
        run = ""
        if self.adapter is not None:
            record = self.adapter.parent / "tune.json"
            if record.is_file():
                run = str(json.loads(record.read_text(encoding="utf-8")).get("run", ""))
        return f"transformers:{self.base}:{self.adapter}:{run}"

    def warm_up(self) -> None:
        """Load the model now instead of on the first call."""
        self._model()

    def _model(self) -> tuple[Any, Any]:
        if self._loaded is None:
            model, tokenizer = load_causal_lm(self.base)
            if self.adapter is not None:
                peft = require("peft")
                model = peft.PeftModel.from_pretrained(model, self.adapter)
                model.eval()
            self._loaded = (model, tokenizer)
        return self._loaded

    def complete(
        self,
        messages: Sequence[Message],
        *,
        max_tokens: int = DEFAULT_MAX_TOKENS,
        temperature: float = 0.0,
        stop: Sequence[str] = (),
        seed: int | None = None,
    ) -> Completion:
        started = time.perf_counter()
        with self._lock:
            ids = self._model()[1](flatten(messages))["input_ids"]
            new, text, finish = self._generate(ids, max_tokens, temperature, stop, seed)
        for marker in stop:
            if marker and marker in text:
                text = text[: text.index(marker)]
        return Completion(
            text=text,
            backend=self.name,
            model=self.model,
            prompt_tokens=len(ids),
            completion_tokens=len(new),
            seconds=time.perf_counter() - started,
            route="completions",
            finish_reason=finish,
        )

    def choose(
        self,
        messages: Sequence[Message],
        options: Sequence[str],
        *,
        temperature: float = 0.0,
        seed: int | None = None,
    ) -> Choice:
        listed = check_options(options)
        started = time.perf_counter()
        scored = self.score(messages, listed)
        scores = scored.scores
        if temperature > 0:
            top = max(scores)
            weights = [math.exp((s - top) / temperature) for s in scores]
            index = random.Random(0 if seed is None else seed).choices(
                range(len(listed)), weights=weights
            )[0]
        else:
            index = max(range(len(listed)), key=lambda i: (scores[i], -i))
        completion = Completion(
            text=listed[index],
            backend=self.name,
            model=self.model,
            prompt_tokens=scored.prompt_tokens,
            completion_tokens=scored.lengths[index],
            seconds=time.perf_counter() - started,
            route="scored",
            finish_reason="stop",
        )
        notes = (
            f"log-probabilities: {', '.join(f'{s:.2f}' for s in scores)}",
            f"prompt tokens reused from a kept cache: {scored.reused} of {scored.prompt_tokens}",
        )
        return Choice(index, listed[index], completion, notes)

    def score(self, messages: Sequence[Message], options: Sequence[str]) -> Scored:
        """Each option's log-probability after the prompt ``choose()`` makes of them."""
        listed = check_options(options)
        with self._lock:
            return self._scores(flatten(with_options(messages, listed)), listed)

    def _scores(self, prompt: str, options: list[str]) -> Scored:
        model, tokenizer = self._model()
        ids = tokenizer(prompt)["input_ids"]
        head = self._prefixes.run(model, ids)
        tokens = [tokenizer(" " + o, add_special_tokens=False)["input_ids"] for o in options]
        scores = continuation_scores(model, head, tokens)
        return Scored(len(ids), head.reused, scores, [len(t) for t in tokens])

    def _generate(
        self,
        ids: list[int],
        max_tokens: int,
        temperature: float,
        stop: Sequence[str],
        seed: int | None,
    ) -> tuple[list[int], str, str]:
        """New tokens after the prompt ``ids``, their text, and why they ended: the
        prompt from its longest kept prefix, then one token at a time from its cache."""
        torch = require("torch")
        model, tokenizer = self._model()
        prefilled = self._prefixes.run(model, ids)
        cache, log_probs = copy.deepcopy(prefilled.cache), prefilled.log_probs
        draw = torch.Generator().manual_seed(0 if seed is None else seed)
        ends = end_tokens(model, tokenizer)
        new: list[int] = []
        text = ""
        with torch.no_grad():
            while len(new) < max_tokens:
                if temperature > 0:
                    weights = torch.softmax(log_probs / temperature, dim=-1)
                    token = int(torch.multinomial(weights, 1, generator=draw))
                else:
                    token = int(torch.argmax(log_probs))
                new.append(token)
                text = tokenizer.decode(new, skip_special_tokens=True)
                if token in ends or any(m and m in text for m in stop):
                    return new, text, "stop"
                if len(new) < max_tokens:
                    out = model(input_ids=torch.tensor([[token]]), cache=cache, use_cache=True)
                    log_probs = torch.log_softmax(out.logits[0, -1].float(), dim=-1)
        return new, text, "length"


def continuation_scores(model: Any, head: Prefilled, tokens: list[list[int]]) -> list[float]:
    """Each token list's log-probability after the prompt ``head``: the first token from
    the prompt's next-token distribution, the others from one run per ``OPTION_BATCH``
    lists, each a row continuing a copy of the prompt's cache. Rows are padded at their
    end, where causal attention keeps the padding out of the real tokens' scores."""
    torch = require("torch")
    scores = [float(head.log_probs[t[0]]) for t in tokens]
    longer = [i for i, t in enumerate(tokens) if len(t) > 1]
    for start in range(0, len(longer), OPTION_BATCH):
        batch = longer[start : start + OPTION_BATCH]
        width = max(len(tokens[i]) for i in batch) - 1
        rows = [tokens[i][:-1] + [0] * (width + 1 - len(tokens[i])) for i in batch]
        cache = copy.deepcopy(head.cache)
        cache.batch_repeat_interleave(len(batch))
        with torch.no_grad():
            out = model(input_ids=torch.tensor(rows), cache=cache, use_cache=True)
        steps = torch.log_softmax(out.logits.float(), dim=-1)
        for row, i in enumerate(batch):
            scores[i] += sum(float(steps[row, j, t]) for j, t in enumerate(tokens[i][1:]))
    return scores


def end_tokens(model: Any, tokenizer: Any) -> set[int]:
    """The token ids that end a generation: the tokenizer's and the model's own."""
    ends = {tokenizer.eos_token_id}
    generation = model.generation_config
    configured = generation.eos_token_id if generation is not None else None
    ends |= set(configured) if isinstance(configured, list) else {configured}
    return {int(t) for t in ends if t is not None}
