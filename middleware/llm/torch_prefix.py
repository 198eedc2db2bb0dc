"""Reusing the key/value cache of a prompt's head across prompts (the PyTorch backend).

The walk's rounds share a long head: the instruction and few-shot examples, then the
question and the rounds before. ``PrefixCache`` keeps the caches of the last few
prompts, keyed by their token ids, and runs a new prompt from the longest token prefix
it shares with one of them: a copy of that cache, cut back to the shared tokens, is
continued with the new tokens only. Attention is causal, so a prefix's keys and values
are the ones a full run computes; scores agree with a full run up to float rounding.

Caches are ``DynamicCache``s made without the model's config, so every layer keeps all
its keys, sliding-window layers too (the attention mask applies their window), and any
prefix can be cut back to. A cache that cannot be cut so (a layer that keeps only its
window, linear-attention state, another cache type) is not kept: every prompt then
runs in full, as without this cache.
"""

from __future__ import annotations

import copy
from collections import OrderedDict
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from middleware.llm.torch_models import require

KEPT = 3  # caches kept: the last prompts, one of which the next one most likely extends


@dataclass(frozen=True)
class Prefilled:
    """A prompt run through the model: what its next token may be, and its cache."""

    log_probs: Any  # 1-D tensor: log-probabilities of the token after the prompt
    cache: Any  # the prompt's cache; continue a deep copy of it, never this one
    reused: int  # prompt tokens whose keys and values came from a kept cache


def shared_length(a: Sequence[int], b: Sequence[int]) -> int:
    """How many leading tokens ``a`` and ``b`` have in common.

    >>> shared_length([1, 5, 7, 9], [1, 5, 8])
    2
    """
    n = 0
    for x, y in zip(a, b, strict=False):
        if x != y:
            break
        n += 1
    return n


def croppable(cache: Any, length: int) -> bool:
    """Whether ``cache`` is a ``DynamicCache`` of full layers that all hold ``length``
    tokens, so it can be cut back to any prefix."""
    transformers = require("transformers")
    full = transformers.cache_utils.DynamicLayer  # its subclasses (sliding, indexed) are not
    return (
        isinstance(cache, transformers.DynamicCache)
        and bool(cache.layers)
        and all(
            type(layer) is full and layer.is_initialized and layer.keys.shape[-2] == length
            for layer in cache.layers
        )
    )


class PrefixCache:
    """The caches of the last ``size`` prompts (0: none kept, every prompt runs in full);
    a newer prompt holds the prefix it took from an older one, so the oldest goes first.

    ``new_cache`` makes the empty cache a prompt starts from (default: a config-less
    ``DynamicCache``, one full layer per model layer).
    """

    def __init__(self, size: int = KEPT, *, new_cache: Callable[[], Any] | None = None) -> None:
        if size < 0:
            raise ValueError(f"a prefix cache keeps 0 or more prompts, not {size}")
        self.size = size
        self._new_cache = new_cache
        self._kept: OrderedDict[tuple[int, ...], Any] = OrderedDict()

    def __len__(self) -> int:
        return len(self._kept)

    def clear(self) -> None:
        """Drop every kept cache."""
        self._kept.clear()

    def _empty(self) -> Any:
        if self._new_cache is not None:
            return self._new_cache()
        return require("transformers").DynamicCache()

    def _start(self, ids: tuple[int, ...]) -> tuple[Any, int]:
        """A cache holding the longest kept prefix of ``ids`` (at least one token of
        ``ids`` left to run: its output is the prompt's next-token distribution)."""
        best, shared = None, 0
        for kept in self._kept:
            n = min(shared_length(kept, ids), len(ids) - 1)
            if n > shared:
                best, shared = kept, n
        if best is None:
            return self._empty(), 0
        cache = copy.deepcopy(self._kept[best])
        if shared < len(best):
            cache.crop(shared - len(best))  # negative: the number of tokens to remove
        return cache, shared

    def run(self, model: Any, ids: Sequence[int]) -> Prefilled:
        """``ids`` through ``model`` from the longest kept prefix; the result is kept."""
        torch = require("torch")
        key = tuple(int(i) for i in ids)
        if not key:
            raise ValueError("an empty prompt has no next token to score")
        cache, reused = self._start(key)
        with torch.no_grad():
            out = model(
                input_ids=torch.tensor([key[reused:]]),
                cache=cache,
                use_cache=True,
                logits_to_keep=1,
            )
        log_probs = torch.log_softmax(out.logits[0, -1].float(), dim=-1)
        if self.size and croppable(out.cache, len(key)):
            self._kept[key] = out.cache
            self._kept.move_to_end(key)
            while len(self._kept) > self.size:
                self._kept.popitem(last=False)
        return Prefilled(log_probs, out.cache, reused)
