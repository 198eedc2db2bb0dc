"""The question-set options ``kgmw eval`` and ``kgmw learn`` share, and the choice they make."""

from __future__ import annotations

import functools
from dataclasses import dataclass
from pathlib import Path
from typing import Any, cast

import click

from middleware.cli.support import F
from middleware.config import Settings
from middleware.eval.datasets import DATASETS
from middleware.eval.selection import QuestionSet, choose
from middleware.eval.topics import in_graph
from middleware.kg.base import KnowledgeGraph


@dataclass(frozen=True)
class QuestionArgs:
    """--dataset/--split/--data-dir/--limit/--seed/--only-in-graph/--folds/--fold."""

    datasets: tuple[str, ...]
    split: str
    data_dir: str | None
    limit: int | None
    seed: int
    only_in_graph: bool
    folds: int | None
    fold: int | None

    def choose(
        self, settings: Settings, graph: KnowledgeGraph, *, held_out: bool, learning: bool = False
    ) -> list[QuestionSet]:
        """The questions, each dataset's notes printed to stderr."""
        if not self.datasets:
            raise click.UsageError(
                "give a question set with --dataset NAME (repeat for several)"
                + (" or, to learn with no questions, --from-graph" if learning else "")
            )
        keep = (lambda item: in_graph(item, graph)) if self.only_in_graph else None
        folder = Path(settings.eval_data_dir) if settings.eval_data_dir else None
        chosen = choose(
            self.datasets,
            split=self.split,
            data_dir=folder,
            limit=self.limit,
            seed=self.seed,
            keep=keep,
            folds=self.folds,
            fold=self.fold,
            held_out=held_out,
            graph=graph,
        )
        for questions in chosen:
            for problem in questions.problems:
                click.echo(f"kgmw: note: {problem}", err=True)
            click.echo(questions.summary, err=True)
        return chosen


def question_options(func: F) -> F:
    """Add the question-set options, handed over as ``questions``."""

    @functools.wraps(func)
    def wrapper(
        *args: Any,
        datasets: tuple[str, ...],
        split: str,
        data_dir: str | None,
        limit: int | None,
        seed: int,
        only_in_graph: bool,
        folds: int | None,
        fold: int | None,
        **kwargs: Any,
    ) -> Any:
        chosen = QuestionArgs(datasets, split, data_dir, limit, seed, only_in_graph, folds, fold)
        return func(*args, questions=chosen, **kwargs)

    options = [
        click.option(
            "--dataset",
            "datasets",
            multiple=True,
            metavar="NAME",
            help=f"Question set (repeat for several): {', '.join(DATASETS)}, or a path to a .jsonl file.",
        ),
        click.option(
            "--split", default="dev", show_default=True, help="Which split to read (dev, test)."
        ),
        click.option(
            "--data-dir",
            type=click.Path(file_okay=False),
            help="Folder holding metaqa/, webquestions/, ... (default: setting eval_data_dir).",
        ),
        click.option(
            "--limit",
            type=click.IntRange(min=1),
            help="Questions drawn per dataset (default: all).",
        ),
        click.option(
            "--seed",
            type=int,
            default=0,
            show_default=True,
            help="Seed for drawing --limit questions.",
        ),
        click.option(
            "--only-in-graph",
            is_flag=True,
            help="Keep only questions whose topic entity is in the graph (before drawing --limit).",
        ),
        click.option(
            "--folds",
            type=click.IntRange(min=2),
            metavar="K",
            help="Split each question set into K folds by question id (with --fold).",
        ),
        click.option(
            "--fold",
            type=click.IntRange(min=0),
            metavar="I",
            help="eval: score only fold I; learn: learn from every fold but I.",
        ),
    ]
    decorated: Any = wrapper
    for option in reversed(options):
        decorated = option(decorated)
    return cast(F, decorated)
