"""LoRA over the walk's steps, on CPU: ``tune(examples, out, ...)``.

Loss is counted on the target only (the option the walk should pick), and the model
computes vocabulary logits at the target's positions only: with Gemma's 262,144-token
vocabulary, logits at every prompt position cost more than the rest of the model (a
300-token prompt: 300 x 262,144 floats, and their gradient). Example order is
a seeded shuffle per pass, so step N always sees the same examples and a run resumes
from its last checkpoint (``OUT/checkpoint``) exactly where it stopped. The result is a
peft adapter in ``OUT/adapter`` and a record of the run in ``OUT/tune.json``.
"""

from __future__ import annotations

import hashlib
import json
import random
import shutil
import time
from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from middleware.errors import BadRequest
from middleware.llm.torch_models import load_causal_lm, require
from middleware.tuning.examples import TuningExample

CHECKPOINT = "checkpoint"
ADAPTER = "adapter"
RECORD = "tune.json"


@dataclass(frozen=True)
class TuneConfig:
    """The run's knobs (settings ``tune_*``)."""

    rank: int = 16
    steps: int = 300
    learning_rate: float = 3e-4
    batch_size: int = 4
    max_length: int = 768
    seed: int = 0
    save_every: int = 25
    device: str = "cpu"  # a torch device: "cuda" on a GPU machine


@dataclass
class TuneReport:
    """What a run did: steps taken (in total and by this call), the loss per step."""

    steps: int
    resumed_from: int
    examples: int
    losses: list[float] = field(default_factory=list)
    seconds: float = 0.0
    adapter: str = ""


def encode(tokenizer: Any, example: TuningExample, max_length: int) -> tuple[list[int], int]:
    """Token ids of prompt + target, and how many of them are target. A long prompt
    keeps its first token (BOS) and its end: the round being decided."""
    prompt = list(tokenizer(example.prompt, add_special_tokens=True)["input_ids"])
    target = list(tokenizer(example.target, add_special_tokens=False)["input_ids"])
    room = max_length - len(target)
    if room < 2:
        raise BadRequest(
            f"an output of {len(target)} tokens does not fit tune_max_length {max_length}",
            hint="raise tune_max_length",
        )
    if len(prompt) > room:
        prompt = prompt[:1] + prompt[len(prompt) - room + 1 :]
    return prompt + target, len(target)


def target_loss(model: Any, tokens: Any, answer: int) -> Any:
    """Mean cross-entropy of the last ``answer`` tokens of ``tokens`` (one row), each
    predicted from the tokens before it; the logits of the prompt are never made."""
    torch = require("torch")
    logits = model(input_ids=tokens, logits_to_keep=answer + 1).logits[0, :-1]
    return torch.nn.functional.cross_entropy(logits.float(), tokens[0, -answer:])


def batch_order(count: int, step: int, batch_size: int, seed: int) -> list[int]:
    """Indices of the examples of ``step`` (0-based): passes over a seeded shuffle.

    >>> batch_order(5, 0, 2, 0) + batch_order(5, 1, 2, 0) + batch_order(5, 2, 2, 0)[:1]  # one pass
    [2, 3, 1, 0, 4]
    """
    picked = []
    for slot in range(step * batch_size, (step + 1) * batch_size):
        epoch, position = divmod(slot, count)
        order = list(range(count))
        random.Random(f"{seed}:{epoch}").shuffle(order)
        picked.append(order[position])
    return picked


def fingerprint(examples: Sequence[TuningExample], base: Path, config: TuneConfig) -> str:
    """Identifies a run: a checkpoint resumes only the same data, base and settings."""
    digest = hashlib.sha256()
    for example in examples:
        digest.update(example.prompt.encode() + b"\0" + example.target.encode() + b"\0")
    settings = {k: v for k, v in asdict(config).items() if k not in ("save_every", "device")}
    digest.update(json.dumps([str(base), settings], sort_keys=True).encode())
    return digest.hexdigest()[:16]


def tune(
    examples: Sequence[TuningExample],
    out: Path,
    *,
    base: Path,
    config: TuneConfig,
    progress: Callable[[int, float], None] | None = None,
) -> TuneReport:
    """Train (or resume) a LoRA adapter for ``base`` on ``examples`` into ``out``."""
    torch = require("torch")
    peft = require("peft")
    run_id = fingerprint(examples, base, config)
    checkpoint = out / CHECKPOINT
    state = _read_state(checkpoint, run_id)
    torch.manual_seed(config.seed)
    model, tokenizer = load_causal_lm(base)
    if state is not None:
        model = peft.PeftModel.from_pretrained(model, checkpoint / ADAPTER, is_trainable=True)
    else:
        lora = peft.LoraConfig(
            r=config.rank,
            lora_alpha=2 * config.rank,
            lora_dropout=0.05,
            target_modules="all-linear",
            task_type="CAUSAL_LM",
        )
        model = peft.get_peft_model(model, lora)
    model.to(config.device)
    model.train()
    trainable = [p for p in model.parameters() if p.requires_grad]
    optimizer = torch.optim.AdamW(trainable, lr=config.learning_rate, weight_decay=0.0)
    warmup = max(1, min(10, config.steps // 10))

    def rate(step: int) -> float:
        if step < warmup:
            return (step + 1) / warmup
        return max(0.0, (config.steps - step) / max(1, config.steps - warmup))

    scheduler = torch.optim.lr_scheduler.LambdaLR(optimizer, rate)
    start, losses = 0, []
    if state is not None:
        saved = torch.load(
            checkpoint / "optimizer.pt", weights_only=False, map_location=config.device
        )
        optimizer.load_state_dict(saved["optimizer"])
        scheduler.load_state_dict(saved["scheduler"])
        torch.set_rng_state(saved["rng"].cpu())
        start, losses = int(state["step"]), list(state["losses"])
    encoded = [encode(tokenizer, e, config.max_length) for e in examples]
    started = time.perf_counter()
    for step in range(start, config.steps):
        optimizer.zero_grad()
        total = 0.0
        for index in batch_order(len(encoded), step, config.batch_size, config.seed):
            ids, answer = encoded[index]
            tokens = torch.tensor([ids], device=config.device)
            loss = target_loss(model, tokens, answer) / config.batch_size
            loss.backward()
            total += float(loss.detach())
        torch.nn.utils.clip_grad_norm_(trainable, 1.0)
        optimizer.step()
        scheduler.step()
        losses.append(round(total, 5))
        if (step + 1) % config.save_every == 0 and step + 1 < config.steps:
            _write_state(checkpoint, run_id, model, optimizer, scheduler, step + 1, losses)
        if progress is not None:
            progress(step + 1, total)
    adapter = out / ADAPTER
    model.save_pretrained(adapter)
    report = TuneReport(
        steps=config.steps,
        resumed_from=start,
        examples=len(examples),
        losses=losses,
        seconds=time.perf_counter() - started,
        adapter=str(adapter),
    )
    record = {"run": run_id, "base": str(base), "config": asdict(config), **asdict(report)}
    (out / RECORD).write_text(json.dumps(record, indent=1) + "\n", encoding="utf-8")
    shutil.rmtree(checkpoint, ignore_errors=True)
    return report


def _read_state(checkpoint: Path, run_id: str) -> dict[str, Any] | None:
    """The checkpoint's state if it belongs to this run; another run's is an error."""
    path = checkpoint / "state.json"
    if not path.is_file():
        return None
    state: dict[str, Any] = json.loads(path.read_text(encoding="utf-8"))
    if state.get("run") != run_id:
        raise BadRequest(
            f"{checkpoint} holds a checkpoint of another run (other data, base or settings)",
            hint="use another --out, or delete that folder to start over",
        )
    return state


def _write_state(
    checkpoint: Path,
    run_id: str,
    model: Any,
    optimizer: Any,
    scheduler: Any,
    step: int,
    losses: list[float],
) -> None:
    """A checkpoint written beside the old one and swapped in, so a kill mid-write
    leaves the previous checkpoint whole."""
    torch = require("torch")
    fresh = checkpoint.with_name(CHECKPOINT + ".new")
    shutil.rmtree(fresh, ignore_errors=True)
    model.save_pretrained(fresh / ADAPTER)
    torch.save(
        {
            "optimizer": optimizer.state_dict(),
            "scheduler": scheduler.state_dict(),
            "rng": torch.get_rng_state(),
        },
        fresh / "optimizer.pt",
    )
    state = {"run": run_id, "step": step, "losses": losses}
    (fresh / "state.json").write_text(json.dumps(state) + "\n", encoding="utf-8")
    old = checkpoint.with_name(CHECKPOINT + ".old")
    shutil.rmtree(old, ignore_errors=True)
    if checkpoint.exists():
        checkpoint.rename(old)
    fresh.rename(checkpoint)
    shutil.rmtree(old, ignore_errors=True)
