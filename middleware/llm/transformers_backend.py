"""A PyTorch (transformers) backend, for the walk's model tuned by ``kgmw ksl-tune``.

``choose()`` scores every option: the log-probability of `` option`` after the prompt
(the prompt is run once, each option continues a copy of its cache), and takes the
best, or samples by those scores when ``temperature`` is above 0. One short option list
costs one prompt pass plus a few tokens per option, so no grammar is needed.
``complete()`` generates greedily (or samples with a seed) and cuts at ``stop``.
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
from pathlib import Path
from typing import Any

from middleware.errors import ConfigError
from middleware.llm.base import DEFAULT_MAX_TOKENS, Choice, Completion, Message, check_options
from middleware.llm.options import with_options
from middleware.llm.templates import flatten
from middleware.llm.torch_models import load_causal_lm, require


class TransformersLLM:
    """A causal LM (a model folder or GGUF file) with an optional LoRA adapter."""

    name = "transformers"

    def __init__(self, *, base: str | Path, adapter: str | Path | None = None) -> None:
        self.base = Path(base).expanduser()
        self.adapter = Path(adapter).expanduser() if adapter else None
        if self.adapter is not None and not (self.adapter / "adapter_config.json").is_file():
            raise ConfigError(
                f"no LoRA adapter in {self.adapter}",
                hint="point llm_adapter at `kgmw ksl-tune`'s OUT/adapter folder",
            )
        self._loaded: tuple[Any, Any] | None = None
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
        torch = require("torch")
        started = time.perf_counter()
        with self._lock:
            model, tokenizer = self._model()
            ids = tokenizer(flatten(messages), return_tensors="pt")
            torch.manual_seed(0 if seed is None else seed)
            sampled = temperature > 0
            with torch.no_grad():
                out = model.generate(
                    **ids,
                    max_new_tokens=max_tokens,
                    do_sample=sampled,
                    temperature=temperature if sampled else None,
                    top_p=None,
                    top_k=None,
                    pad_token_id=tokenizer.pad_token_id or tokenizer.eos_token_id,
                )
        new = out[0, ids["input_ids"].shape[1] :]
        text = tokenizer.decode(new, skip_special_tokens=True)
        finish = "length" if len(new) >= max_tokens else "stop"
        for marker in stop:
            if marker and marker in text:
                text, finish = text[: text.index(marker)], "stop"
        return Completion(
            text=text,
            backend=self.name,
            model=self.model,
            prompt_tokens=int(ids["input_ids"].shape[1]),
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
        with self._lock:
            prompt_tokens, scores, lengths = self._scores(
                flatten(with_options(messages, listed)), listed
            )
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
            prompt_tokens=prompt_tokens,
            completion_tokens=lengths[index],
            seconds=time.perf_counter() - started,
            route="scored",
            finish_reason="stop",
        )
        notes = (f"log-probabilities: {', '.join(f'{s:.2f}' for s in scores)}",)
        return Choice(index, listed[index], completion, notes)

    def _scores(self, prompt: str, options: list[str]) -> tuple[int, list[float], list[int]]:
        """Prompt tokens, and each option's log-probability and token count."""
        torch = require("torch")
        model, tokenizer = self._model()
        ids = tokenizer(prompt, return_tensors="pt")["input_ids"]
        scores, lengths = [], []
        with torch.no_grad():
            head = model(input_ids=ids, use_cache=True)
            first = torch.log_softmax(head.logits[0, -1], dim=-1)
            for option in options:
                tokens = tokenizer(" " + option, add_special_tokens=False)["input_ids"]
                score = float(first[tokens[0]])
                if len(tokens) > 1:
                    rest = model(
                        input_ids=torch.tensor([tokens[:-1]]),
                        cache=copy.deepcopy(head.cache),
                        use_cache=True,
                    )
                    steps = torch.log_softmax(rest.logits[0], dim=-1)
                    score += float(sum(steps[i, t] for i, t in enumerate(tokens[1:])))
                scores.append(score)
                lengths.append(len(tokens))
        return int(ids.shape[1]), scores, lengths
