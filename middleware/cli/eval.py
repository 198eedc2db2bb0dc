"""``kgmw eval`` and ``kgmw report``: score methods on question sets, then summarize."""

from __future__ import annotations

import datetime as dt
import json
from pathlib import Path
from typing import Any

import click

from middleware.cli.questions import QuestionArgs, question_options
from middleware.cli.support import (
    LLMArgs,
    SourceArgs,
    echo_json,
    llm_options,
    method_settings,
    print_table,
    source_options,
)
from middleware.eval.items import EvalItem
from middleware.eval.report import write_report
from middleware.eval.runner import RESULTS_FILE, RUNS_FILE, Evaluator, ResultsFile, plan
from middleware.eval.scoring import Scorer
from middleware.methods.registry import METHODS
from middleware.workspace import Workspace


@click.command("eval")
@question_options
@click.option(
    "--method",
    "methods",
    multiple=True,
    type=click.Choice(list(METHODS)),
    help="Method to score (repeat for several; default: setting method).",
)
@click.option(
    "--source", "source_name", metavar="NAME", help="A source named in kgmw.toml ([sources.NAME])."
)
@click.option(
    "--out",
    required=True,
    type=click.Path(file_okay=False),
    help="Folder for results.jsonl; a run into a folder with results resumes it.",
)
@click.option(
    "--concurrency",
    type=click.IntRange(min=1),
    metavar="K",
    help="Questions answered at once (default: setting eval_concurrency).",
)
@click.option(
    "--max-calls",
    type=click.IntRange(min=1),
    metavar="N",
    help="Most LLM calls per question (default: setting max_calls).",
)
@click.option("--progress/--no-progress", default=None, help="Show a progress bar (default: on).")
@source_options
@llm_options
@click.pass_context
def eval_command(
    ctx: click.Context,
    questions: QuestionArgs,
    methods: tuple[str, ...],
    source_name: str | None,
    out: str,
    concurrency: int | None,
    max_calls: int | None,
    progress: bool | None,
    source: SourceArgs,
    llm: LLMArgs,
) -> None:
    """Answer dataset questions with each method and append scored results to OUT."""
    settings = method_settings(ctx, source, source_name, llm).replace(
        progress=progress, eval_data_dir=questions.data_dir, eval_concurrency=concurrency
    )
    if max_calls is not None:
        settings = settings.replace(max_calls=max_calls)  # the user's own flag may raise it
    work = Workspace(settings)
    graph = work.graph()
    chosen = [(q.name, q.split, q.items) for q in questions.choose(settings, graph, held_out=True)]
    names = list(dict.fromkeys(methods or (settings.method,)))
    runners = {name: work.method(name) for name in names}
    out_dir = Path(out)
    out_dir.mkdir(parents=True, exist_ok=True)
    evaluator = Evaluator(
        runners,
        Scorer(graph),
        ResultsFile(out_dir / RESULTS_FILE),
        budget=work.budget,
        concurrency=settings.eval_concurrency,
        progress=settings.progress,
    )
    _note_run(
        out_dir,
        chosen,
        names,
        work.llm.model or work.llm.name,
        graph.name,
        questions.seed,
        questions.limit,
    )
    summary = evaluator.run(plan(chosen, names))
    tally = summary.tally
    groups = [
        {
            "dataset": dataset,
            "method": method,
            "questions": n,
            "hits_at_1": _rounded(tally.accuracy((dataset, method))),
            "errors": tally.errors[(dataset, method)],
            **tally.abstention[(dataset, method)].as_json(),
        }
        for (dataset, method), n in tally.questions.items()
    ]
    if source.as_json:
        echo_json(
            {
                "out": str(out_dir),
                "total": summary.total,
                "resumed": summary.resumed,
                "answered": summary.answered,
                "failed": summary.failed,
                "seconds": round(summary.seconds, 2),
                "groups": groups,
            }
        )
        return
    print_table(*_table(groups))
    click.echo(
        f"{summary.answered} answered ({summary.failed} failed), {summary.resumed} already done, "
        f"in {summary.seconds:.0f} s; results in {out_dir / RESULTS_FILE}; "
        f"`kgmw report {out_dir}` writes the summary and plots"
    )


def _rounded(value: float | None) -> float | None:
    return None if value is None else round(value, 4)


def _table(groups: list[dict[str, Any]]) -> tuple[list[str], list[list[Any]]]:
    """Hits@1 (answerable questions) and the share abstained; with unanswerable
    questions, the share abstained among the answerable and per unanswerable kind."""

    def rate(value: float | None) -> str:
        return "–" if value is None else f"{value:.3f}"

    kinds = list(dict.fromkeys(k for g in groups for k in g["abstained_by_kind"]))
    detail = ["abstained (answerable)", *(f"abstained ({k})" for k in kinds)] if kinds else []
    head = ["dataset", "method", "questions", "hits@1", "abstained", *detail, "errors"]
    rows = []
    for g in groups:
        cells = [g["abstained_answerable"], *(g["abstained_by_kind"].get(k) for k in kinds)]
        rates = [rate(c) for c in cells] if kinds else []
        counts = [g["dataset"], g["method"], g["questions"]]
        rows.append([*counts, rate(g["hits_at_1"]), rate(g["abstained"]), *rates, g["errors"]])
    return head, rows


def _note_run(
    out_dir: Path,
    chosen: list[tuple[str, str, list[EvalItem]]],
    methods: list[str],
    model: str,
    graph: str,
    seed: int,
    limit: int | None,
) -> None:
    """Append what this invocation ran to runs.jsonl, for the report's header."""
    entry = {
        "started": dt.datetime.now(dt.UTC).isoformat(timespec="seconds"),
        "datasets": [{"name": n, "split": s, "questions": len(i)} for n, s, i in chosen],
        "methods": methods,
        "model": model,
        "graph": graph,
        "seed": seed,
        "limit": limit,
    }
    with (out_dir / RUNS_FILE).open("a", encoding="utf-8") as handle:
        handle.write(json.dumps(entry, ensure_ascii=False) + "\n")


@click.command("report")
@click.argument("folders", nargs=-1, required=True, type=click.Path(file_okay=False, exists=True))
@click.option(
    "--out",
    type=click.Path(file_okay=False),
    help="Folder for report.md and the plots (default: the first FOLDER).",
)
@click.option("--seed", type=int, default=0, show_default=True, help="Seed of the bootstrap.")
def report_command(folders: tuple[str, ...], out: str | None, seed: int) -> None:
    """Summarize the results in FOLDERS (written by `kgmw eval`) as Markdown and PNG plots."""
    written = write_report([Path(f) for f in folders], Path(out or folders[0]), seed=seed)
    for path in written:
        click.echo(str(path))
