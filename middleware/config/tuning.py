"""Settings of ``kgmw ksl-tune`` (LoRA over the Knowledge Solver's walk steps) and of the
tuned model's backend (``llm = "transformers"``)."""

from __future__ import annotations

from dataclasses import dataclass

from middleware.config.fields import setting


@dataclass(frozen=True)
class TuneSettings:
    """LoRA tuning on CPU, and the adapter the transformers backend loads."""

    tune_rank: int = setting(16, "LoRA rank of `kgmw ksl-tune`.", minimum=1, maximum=256)
    tune_steps: int = setting(
        300, "Optimizer steps of `kgmw ksl-tune` (each over tune_batch_size examples).", minimum=1
    )
    tune_learning_rate: float = setting(
        3e-4, "Learning rate of `kgmw ksl-tune` (AdamW, linear decay).", minimum=1e-7, maximum=1.0
    )
    tune_batch_size: int = setting(
        4, "Examples per optimizer step of `kgmw ksl-tune`.", minimum=1, maximum=256
    )
    tune_max_length: int = setting(
        768,
        "Most tokens of one training example; a longer prompt loses its beginning "
        "(the instruction), never the walk's last round or the answer.",
        minimum=32,
    )
    tune_seed: int = setting(0, "Seed of `kgmw ksl-tune`: adapter init, example order, dropout.")
    tune_save_every: int = setting(
        25,
        "`kgmw ksl-tune` writes a resumable checkpoint every this many steps.",
        minimum=1,
    )
    tune_device: str = setting(
        "cpu",
        "Torch device `kgmw ksl-tune` trains on: 'cpu', or 'cuda' on a GPU machine "
        "(docs/benchmarks.md has the larger run).",
    )
    llm_adapter: str | None = setting(
        None,
        "LoRA adapter folder (`kgmw ksl-tune`'s OUT/adapter) that the transformers "
        "backend (llm = 'transformers') puts on its base model (llm_model_path).",
    )
