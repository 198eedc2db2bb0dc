"""A tiny randomly initialised causal LM, built in the test session (no download)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("peft", reason="the tune extra (peft) is not installed")

EXAMPLES = [
    {
        "instruction": "Walk the graph to the answer.",
        "input": f"Question: who directed {film}\nAt: {film}\nOptions:\n{options}\nChoice:",
        "output": answer,
    }
    for film, options, answer in [
        (
            "Titanic",
            "James Cameron (directed by)\n1997 (release year)",
            "James Cameron (directed by)",
        ),
        ("Heat", "Michael Mann (directed by)\nAl Pacino (starring)", "Michael Mann (directed by)"),
        (
            "Aliens",
            "Sigourney Weaver (starring)\nJames Cameron (directed by)",
            "James Cameron (directed by)",
        ),
        (
            "Ran",
            "Akira Kurosawa (directed by)\n1985 (release year)",
            "Akira Kurosawa (directed by)",
        ),
    ]
]


# the sizes both tiny models share: fast on a CPU, big enough for real attention
TINY_SIZES: dict[str, int] = {
    "hidden_size": 32,
    "intermediate_size": 64,
    "num_hidden_layers": 2,
    "num_attention_heads": 4,
    "num_key_value_heads": 2,
    "max_position_embeddings": 2048,
}


def special_ids(tokenizer: Any) -> dict[str, int]:
    """The padding, start and end token ids a model config takes from its tokenizer."""
    return {
        "pad_token_id": tokenizer.pad_token_id,
        "bos_token_id": tokenizer.bos_token_id,
        "eos_token_id": tokenizer.eos_token_id,
    }


@pytest.fixture(scope="session")
def tiny_model(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A 2-layer Llama-shaped model with a byte-level BPE tokenizer trained on the examples."""
    import torch
    from tokenizers import Tokenizer, decoders, models, pre_tokenizers, processors, trainers
    from transformers import LlamaConfig, LlamaForCausalLM, PreTrainedTokenizerFast

    folder = tmp_path_factory.mktemp("tiny-model")
    texts = [f"{e['instruction']}\n\n{e['input']} {e['output']}" for e in EXAMPLES]
    texts += ["Pick one. Paris Lyon Count: 1 2 3 What is the capital of France? A:"]
    bpe = Tokenizer(models.BPE())
    bpe.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    bpe.decoder = decoders.ByteLevel()
    trainer = trainers.BpeTrainer(
        vocab_size=400,
        special_tokens=["<pad>", "<bos>", "<eos>"],
        initial_alphabet=pre_tokenizers.ByteLevel.alphabet(),
    )
    bpe.train_from_iterator(texts, trainer)
    bpe.post_processor = processors.TemplateProcessing(
        single="<bos> $A", special_tokens=[("<bos>", bpe.token_to_id("<bos>"))]
    )
    tokenizer = PreTrainedTokenizerFast(
        tokenizer_object=bpe, bos_token="<bos>", eos_token="<eos>", pad_token="<pad>"
    )
    tokenizer.save_pretrained(folder)
    config = LlamaConfig(
        vocab_size=len(tokenizer),
        **TINY_SIZES,
        **special_ids(tokenizer),
    )
    torch.manual_seed(0)
    LlamaForCausalLM(config).save_pretrained(folder)
    return folder


@pytest.fixture
def train_file(tmp_path: Path) -> Path:
    path = tmp_path / "train.json"
    path.write_text(json.dumps(EXAMPLES), encoding="utf-8")
    return path


@pytest.fixture(scope="session")
def tiny_gemma(tiny_model: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A 2-layer Gemma 3 with a sliding-window layer (window 4: every prompt outruns it)
    and a full-attention one, with the tiny model's tokenizer."""
    import torch
    from transformers import AutoTokenizer, Gemma3ForCausalLM, Gemma3TextConfig

    folder = tmp_path_factory.mktemp("tiny-gemma")
    tokenizer = AutoTokenizer.from_pretrained(tiny_model)
    tokenizer.save_pretrained(folder)
    config = Gemma3TextConfig(
        vocab_size=len(tokenizer),
        **TINY_SIZES,
        head_dim=8,
        query_pre_attn_scalar=8,
        sliding_window=4,
        layer_types=["sliding_attention", "full_attention"],
        **special_ids(tokenizer),
    )
    torch.manual_seed(0)
    Gemma3ForCausalLM(config).save_pretrained(folder)
    return folder
