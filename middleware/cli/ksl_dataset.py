"""``kgmw ksl-dataset``: the Knowledge Solver instruction dataset, as Alpaca-style JSON."""

from __future__ import annotations

import json
import os
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import click

from middleware.cli.questions import QuestionArgs, question_options
from middleware.cli.support import (
    LLMArgs,
    SourceArgs,
    echo_json,
    method_settings,
    print_table,
    source_options,
)
from middleware.config.methods import KSLSettings
from middleware.support.progress_bar import progress_bar
from middleware.tuning.dataset import SKIP_REASONS, Counts, InstructionDataset
from middleware.tuning.rounds import Example
from middleware.workspace import Workspace


def write_atomically(path: Path, rows: Sequence[dict[str, str]]) -> None:
    """The rows as one JSON list: written to a temporary file beside ``path``, then
    renamed over it, so a reader never sees half a file."""
    path.parent.mkdir(parents=True, exist_ok=True)
    temporary = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    try:
        with temporary.open("w", encoding="utf-8") as out:
            json.dump(list(rows), out, ensure_ascii=False, indent=1)
            out.write("\n")
            out.flush()
            os.fsync(out.fileno())
        os.replace(temporary, path)
    except BaseException:  # also Ctrl-C: no half-written dataset stays; re-raised
        temporary.unlink(missing_ok=True)
        raise


@click.command("ksl-dataset")
@question_options
@click.option("--source", "source_name", metavar="NAME", help="A source named in kgmw.toml.")
@click.option(
    "--out",
    required=True,
    type=click.Path(dir_okay=False),
    help="JSON file for the examples (a list of instruction/input/output objects).",
)
@click.option("--progress/--no-progress", default=None, help="Show a progress bar (default: on).")
@source_options
@click.pass_context
def ksl_dataset_command(
    ctx: click.Context,
    questions: QuestionArgs,
    source_name: str | None,
    out: str,
    progress: bool | None,
    source: SourceArgs,
) -> None:
    """Write the Knowledge Solver's instruction dataset: one example per step of the
    shortest paths from each question's entities to its gold answers."""
    no_llm = LLMArgs(None, None, None, None, no_cache=False)
    settings = method_settings(ctx, source, source_name, no_llm).replace(
        progress=progress, eval_data_dir=questions.data_dir
    )
    work = Workspace(settings)
    graph = work.graph()
    chosen = questions.choose(settings, graph, held_out=False)
    builder = InstructionDataset(
        graph,
        encoder=work.encoder,
        config=settings.table(KSLSettings),
        text=settings,
        seed=questions.seed,
    )
    counts = Counts()
    examples: list[Example] = []
    started = time.perf_counter()
    total = sum(len(q.items) for q in chosen)
    with progress_bar(
        total=total, unit="q", disable=not settings.progress, dynamic_ncols=True, mininterval=1.0
    ) as bar:
        for question_set in chosen:
            for item in question_set.items:
                done = builder.export(item)
                counts.add(done)
                examples += done.examples
                bar.update(1)
                bar.set_postfix_str(f"{counts.examples} examples", refresh=False)
    seconds = time.perf_counter() - started
    path = Path(out)
    write_atomically(path, [e.to_dict() for e in examples])
    sample = examples[len(examples) // 2].to_dict() if examples else None
    summary: dict[str, Any] = {"out": str(path), **counts.to_dict(), "seconds": round(seconds, 2)}
    if source.as_json:
        echo_json({**summary, "sample": sample})
        return
    rows = [
        ["questions read", counts.questions],
        ["questions with a path", counts.with_path],
        ["paths", counts.paths],
        ["later paths refused as detours", counts.detours],
        ["examples", counts.examples],
        ["rounds with one option (no example)", counts.lone],
        ["rounds whose correct option was put back", counts.rescued],
    ]
    rows += [[f"skipped: {why}", counts.skipped[key]] for key, why in SKIP_REASONS.items()]
    print_table(["what", "count"], rows)
    if sample is not None:
        click.echo("\nSample example:")
        click.echo(json.dumps(sample, ensure_ascii=False, indent=2))
    click.echo(f"\n{counts.examples} examples written to {path} in {seconds:.1f} s")
