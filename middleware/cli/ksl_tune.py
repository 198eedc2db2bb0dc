"""``kgmw ksl-tune``: LoRA over ``kgmw ksl-dataset``'s examples, on CPU, resumable."""

from __future__ import annotations

from pathlib import Path

import click

from middleware.cli.support import echo_json, settings_for
from middleware.llm.local import bundled_model_path
from middleware.support.cache_dir import cache_root
from middleware.support.progress_bar import progress_bar
from middleware.tuning.examples import read_examples
from middleware.tuning.lora import TuneConfig, tune


@click.command("ksl-tune")
@click.option(
    "--data",
    required=True,
    type=click.Path(dir_okay=False),
    help="Training examples: the JSON that `kgmw ksl-dataset --out` wrote.",
)
@click.option(
    "--out",
    required=True,
    type=click.Path(file_okay=False),
    help="Folder for the run: OUT/adapter (the result), OUT/tune.json, OUT/checkpoint while it runs; a run into a folder with a checkpoint of the same run resumes it.",
)
@click.option(
    "--base",
    type=click.Path(),
    help="Model to tune: a GGUF file or a Hugging Face model folder (default: setting llm_model_path, else the bundled Gemma 3 270M).",
)
@click.option("--rank", type=click.IntRange(min=1), help="LoRA rank (default: setting tune_rank).")
@click.option(
    "--steps", type=click.IntRange(min=1), help="Optimizer steps (default: setting tune_steps)."
)
@click.option(
    "--learning-rate", type=float, help="Learning rate (default: setting tune_learning_rate)."
)
@click.option(
    "--batch-size",
    type=click.IntRange(min=1),
    help="Examples per step (default: setting tune_batch_size).",
)
@click.option(
    "--max-length",
    type=click.IntRange(min=32),
    help="Most tokens of one example (default: setting tune_max_length).",
)
@click.option("--seed", type=int, help="Seed (default: setting tune_seed).")
@click.option("--progress/--no-progress", default=None, help="Show a progress bar (default: on).")
@click.option("--json", "as_json", is_flag=True, help="Print JSON instead of text.")
@click.pass_context
def ksl_tune_command(
    ctx: click.Context,
    data: str,
    out: str,
    base: str | None,
    rank: int | None,
    steps: int | None,
    learning_rate: float | None,
    batch_size: int | None,
    max_length: int | None,
    seed: int | None,
    progress: bool | None,
    as_json: bool,
) -> None:
    """Tune the walk's model on its own steps with LoRA (needs the `tune` extra)."""
    settings = settings_for(
        ctx,
        tune_rank=rank,
        tune_steps=steps,
        tune_learning_rate=learning_rate,
        tune_batch_size=batch_size,
        tune_max_length=max_length,
        tune_seed=seed,
        progress=progress,
    )
    examples = read_examples(Path(data))
    config = TuneConfig(
        rank=settings.tune_rank,
        steps=settings.tune_steps,
        learning_rate=settings.tune_learning_rate,
        batch_size=settings.tune_batch_size,
        max_length=settings.tune_max_length,
        seed=settings.tune_seed,
        save_every=settings.tune_save_every,
        device=settings.tune_device,
    )
    model = Path(
        base or settings.llm_model_path or bundled_model_path(cache_root(settings.cache_dir))
    ).expanduser()
    folder = Path(out)
    folder.mkdir(parents=True, exist_ok=True)
    with progress_bar(
        total=config.steps,
        unit="step",
        disable=not settings.progress,
        dynamic_ncols=True,
        mininterval=1.0,
    ) as bar:

        def advance(step: int, loss: float) -> None:
            bar.n = step
            bar.set_postfix_str(f"loss {loss:.3f}", refresh=False)
            bar.refresh()

        report = tune(examples, folder, base=model, config=config, progress=advance)
    summary = {
        "adapter": report.adapter,
        "examples": report.examples,
        "steps": report.steps,
        "resumed_from": report.resumed_from,
        "first_loss": report.losses[0] if report.losses else None,
        "last_loss": report.losses[-1] if report.losses else None,
        "seconds": round(report.seconds, 1),
    }
    if as_json:
        echo_json(summary)
        return
    resumed = f" (resumed at step {report.resumed_from})" if report.resumed_from else ""
    click.echo(
        f"tuned {model.name} on {report.examples} examples for {report.steps} steps{resumed} "
        f"in {report.seconds:.0f} s; loss {summary['first_loss']} → {summary['last_loss']}\n"
        f"adapter: {report.adapter}\n"
        f"use it: kgmw ask QUESTION --method ksl --llm transformers "
        f"(with llm_adapter = {report.adapter!r}"
        + (f", llm_model_path = {str(model)!r}" if base else "")
        + ")"
    )
