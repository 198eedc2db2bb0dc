"""The transformers backend reuses a shared prompt head's cache: same scores, fewer tokens run."""

from __future__ import annotations

from pathlib import Path

import pytest

from middleware.llm import user
from middleware.llm.base import Message
from middleware.llm.options import with_options
from middleware.llm.prompt_templates import flatten
from middleware.llm.torch_models import load_causal_lm
from middleware.llm.torch_prefix import PrefixCache
from middleware.llm.transformers_backend import (
    OPTION_BATCH,
    TransformersLLM,
    continuation_scores,
)
from middleware.methods.ksl.walk import round_messages

TITANIC = "who directed Titanic"
# Walk rounds as the walk sends them (instruction, few-shot examples, question, rounds
# before), one prompt that shares only the first token, and the first round again.
ROUNDS: list[tuple[list[Message], list[str]]] = [
    (round_messages(TITANIC, None, [], "Titanic"), ["James Cameron (directed by)", "1997"]),
    (
        round_messages(TITANIC, None, [("Titanic", "James Cameron (directed by)")], "Cameron"),
        ["Aliens (directed)", "James Cameron is the answer"],
    ),
    (
        round_messages("who starred in Heat", None, [], "Heat"),
        ["Al Pacino (starring)", "1995", "Michael Mann (directed by)", "Robert De Niro (starring)"],
    ),
    ([user("What is the capital of France? A:")], ["Paris", "Lyon"]),
    (round_messages(TITANIC, None, [], "Titanic"), ["James Cameron (directed by)", "1997"]),
]


def plain_scores(llm: TransformersLLM, messages: list[Message], options: list[str]) -> list[float]:
    """Each option's log-probability from one plain run of prompt and option, no cache."""
    import torch

    model, tokenizer = llm._model()
    prompt = tokenizer(flatten(with_options(messages, options)))["input_ids"]
    scores = []
    for option in options:
        tokens = tokenizer(" " + option, add_special_tokens=False)["input_ids"]
        with torch.no_grad():
            logits = model(input_ids=torch.tensor([prompt + tokens]), use_cache=False).logits[0]
        steps = torch.log_softmax(logits[len(prompt) - 1 : -1], dim=-1)
        scores.append(sum(float(steps[i, t]) for i, t in enumerate(tokens)))
    return scores


def assert_same_scores(reusing: TransformersLLM, full: TransformersLLM) -> list[int]:
    """Every round scored alike by both and by a plain run; the prompt tokens ``reusing``
    took from its cache."""
    reused = []
    for messages, options in ROUNDS:
        got, wanted = reusing.score(messages, options), full.score(messages, options)
        assert wanted.reused == 0
        assert got.prompt_tokens == wanted.prompt_tokens
        assert got.scores == pytest.approx(wanted.scores, abs=1e-4)
        assert got.scores == pytest.approx(plain_scores(full, messages, options), abs=1e-4)
        reused.append(got.reused)
    return reused


@pytest.mark.parametrize("model", ["tiny_model", "tiny_gemma"])
def test_a_shared_prompt_head_is_run_once_and_scores_as_a_full_run(
    model: str, request: pytest.FixtureRequest
) -> None:
    base = request.getfixturevalue(model)  # tiny_gemma: prompts far beyond its window of 4
    reusing, full = TransformersLLM(base=base, kept=4), TransformersLLM(base=base, kept=0)
    reused = assert_same_scores(reusing, full)
    lengths = [full.score(m, o).prompt_tokens for m, o in ROUNDS]
    assert reused[0] == 0
    assert reused[1] > lengths[1] // 2  # the instruction, examples, question and first At
    assert reused[2] > lengths[2] // 2  # the instruction and examples
    assert reused[3] <= 1  # only the first token is shared
    assert reused[4] == lengths[4] - 1  # the same prompt: only its last token runs again


def test_choose_says_how_much_of_the_prompt_it_reused(tiny_model: Path) -> None:
    llm = TransformersLLM(base=tiny_model)
    for messages, options in ROUNDS[:2]:
        picked = llm.choose(messages, options)
    assert any(n.startswith("prompt tokens reused from a kept cache: ") for n in picked.notes)
    assert not picked.notes[-1].startswith("prompt tokens reused from a kept cache: 0 ")


@pytest.fixture(scope="module")
def random_adapter(tiny_model: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A LoRA adapter with random (not zero) weights, so that it changes the scores."""
    import torch
    from peft import LoraConfig, get_peft_model

    model, _ = load_causal_lm(tiny_model)
    torch.manual_seed(1)
    config = LoraConfig(r=4, target_modules=["q_proj", "v_proj"], init_lora_weights=False)
    folder = tmp_path_factory.mktemp("adapter")
    get_peft_model(model, config).save_pretrained(folder)
    return folder


def test_prefix_reuse_with_a_lora_adapter_scores_as_a_full_run(
    tiny_model: Path, random_adapter: Path
) -> None:
    tuned = TransformersLLM(base=tiny_model, adapter=random_adapter)
    full = TransformersLLM(base=tiny_model, adapter=random_adapter, kept=0)
    reused = assert_same_scores(tuned, full)
    assert reused[1] > 0
    untuned = TransformersLLM(base=tiny_model, kept=0).score(*ROUNDS[0]).scores
    assert tuned.score(*ROUNDS[0]).scores != pytest.approx(untuned, abs=1e-4)


def test_a_cache_that_keeps_only_its_window_is_not_reused(tiny_gemma: Path) -> None:
    from transformers import DynamicCache

    model, tokenizer = load_causal_lm(tiny_gemma)
    windowed = PrefixCache(new_cache=lambda: DynamicCache(config=model.config))
    full = PrefixCache(0)
    for messages, options in ROUNDS:
        ids = tokenizer(flatten(messages))["input_ids"]
        got, wanted = windowed.run(model, ids), full.run(model, ids)
        assert got.reused == 0  # its sliding layer cannot be cut back: every prompt runs in full
        assert got.log_probs.tolist() == pytest.approx(wanted.log_probs.tolist(), abs=1e-4)
        tokens = [tokenizer(" " + o, add_special_tokens=False)["input_ids"] for o in options]
        assert continuation_scores(model, got, tokens) == pytest.approx(
            continuation_scores(model, wanted, tokens), abs=1e-4
        )
    assert len(windowed) == 0 and len(full) == 0


def test_only_the_last_prompts_are_kept(tiny_model: Path) -> None:
    model, _ = load_causal_lm(tiny_model)
    first, second, third = [1, 10, 11, 12], [1, 20, 21, 22], [1, 30, 31, 32]
    few, more = PrefixCache(2), PrefixCache(3)
    for prompts in (few, more):
        for ids in (first, second, third):
            prompts.run(model, ids)
    assert len(few) == 2 and len(more) == 3
    assert few.run(model, [*first, 13]).reused == 1  # the first prompt was dropped
    assert more.run(model, [*first, 13]).reused == 4
    with pytest.raises(ValueError, match="0 or more"):
        PrefixCache(-1)
    with pytest.raises(ValueError, match="empty prompt"):
        more.run(model, [])


def test_complete_from_a_kept_prefix_generates_what_generate_does(tiny_model: Path) -> None:
    import torch

    llm = TransformersLLM(base=tiny_model)
    model, tokenizer = load_causal_lm(tiny_model)
    for messages, _ in ROUNDS[:3]:
        done = llm.complete(messages, max_tokens=6)
        ids = tokenizer(flatten(messages), return_tensors="pt")
        with torch.no_grad():
            out = model.generate(**ids, max_new_tokens=6, do_sample=False, top_p=None, top_k=None)
        wanted = tokenizer.decode(out[0, ids["input_ids"].shape[1] :], skip_special_tokens=True)
        assert done.text == wanted


def test_more_options_than_one_batch_holds_score_as_plain_runs(tiny_model: Path) -> None:
    llm = TransformersLLM(base=tiny_model)
    options = [f"Film {'X' * i} {i} (directed)" for i in range(OPTION_BATCH + 3)] + ["Heat"]
    messages = round_messages("what did Michael Mann direct", None, [], "Michael Mann")
    got = llm.score(messages, options)
    assert got.scores == pytest.approx(plain_scores(llm, messages, options), abs=1e-4)
    assert len(set(got.lengths)) > 3  # options of many lengths: padded in their batch
