"""Which questions a run takes: datasets, split, graph filter, folds, then a seeded draw.

Folds split a question set for cross-validation by a stable hash of each question's
id, so fold ``I`` of ``K`` is the same on every machine and in every run. Learning
takes every fold but ``I``; scoring takes fold ``I`` only; the two never overlap.

>>> items = [EvalItem(str(i), f"q{i}") for i in range(100)]
>>> scored = in_folds(items, folds=5, fold=0, held_out=True)
>>> learned = in_folds(items, folds=5, fold=0, held_out=False)
>>> len(scored) + len(learned), set(i.id for i in scored) & set(i.id for i in learned)
(100, set())
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from middleware.errors import BadRequest
from middleware.eval.datasets import load_dataset, sample
from middleware.eval.foreign_relations_set import NAME as FOREIGN
from middleware.eval.items import EvalItem
from middleware.eval.multiple_choice import draw_with_choices, mc_hops
from middleware.eval.unanswerable import NAME as UNANSWERABLE
from middleware.eval.unanswerable import sample_by_kind
from middleware.kg.base import KnowledgeGraph


def fold_of(item_id: str, folds: int) -> int:
    """The fold (0..folds-1) a question id falls in."""
    return int(hashlib.sha256(item_id.encode("utf-8")).hexdigest()[:12], 16) % folds


def in_folds(items: Sequence[EvalItem], *, folds: int, fold: int, held_out: bool) -> list[EvalItem]:
    """The items of fold ``fold`` (``held_out``) or of every other fold."""
    if folds < 2 or not 0 <= fold < folds:
        raise BadRequest(
            f"--fold must be from 0 to {folds - 1} with --folds {folds} (at least 2 folds)"
        )
    return [i for i in items if (fold_of(i.id, folds) == fold) == held_out]


@dataclass
class QuestionSet:
    """One dataset's chosen questions and what was said while choosing them."""

    name: str
    split: str
    items: list[EvalItem]
    available: int
    summary: str = ""
    problems: list[str] = field(default_factory=list)
    source: str = ""  # the file (or folder) the questions were read from


def choose(
    datasets: Sequence[str],
    *,
    split: str,
    data_dir: Path | None,
    limit: int | None,
    seed: int,
    keep: Callable[[EvalItem], bool] | None = None,
    folds: int | None = None,
    fold: int | None = None,
    held_out: bool = True,
    graph: KnowledgeGraph | None = None,
) -> list[QuestionSet]:
    """Each dataset's questions: filtered by ``keep``, by fold, then ``limit`` drawn;
    multiple-choice variants (``metaqa-2hop-mc``) get their choices from ``graph``
    while drawn (``eval/multiple_choice.py``); ``unanswerable-metaqa`` is generated with
    ``seed`` and drawn with as many of each kind as can be. Only held-out questions may
    be unanswerable: there is nothing to learn from them."""
    if (folds is None) != (fold is None):
        raise BadRequest("give --folds K and --fold I together")
    for name in (UNANSWERABLE, FOREIGN):
        if not held_out and name in datasets:
            raise BadRequest(f"{name} has no gold answers to learn from")
    chosen = []
    for name in datasets:
        data = load_dataset(name, split=split, data_dir=data_dir, keep=keep, seed=seed)
        items = list(data.items)
        if folds is not None and fold is not None:
            items = in_folds(items, folds=folds, fold=fold, held_out=held_out)
        problems = list(data.report.problems)
        hops = mc_hops(name)
        if name == UNANSWERABLE:
            picked = sample_by_kind(items, limit=limit, seed=seed)
        elif hops is None:
            picked = sample(items, limit=limit, seed=seed)
        elif graph is None:
            raise BadRequest(f"{name} builds its choices from the graph; none was given")
        else:
            picked, notes = draw_with_choices(items, graph, hops=hops, limit=limit, seed=seed)
            problems += notes
        part = ""
        if folds is not None:
            part = f" in fold {fold} of {folds}" if held_out else f" outside fold {fold} of {folds}"
        summary = (
            f"{data.name} ({data.split}): {len(picked)} of {len(items)} questions{part}"
            f"{f' (seed {seed})' if limit else ''}; {data.report.skipped} malformed lines skipped"
        )
        chosen.append(
            QuestionSet(
                data.name, data.split, picked, len(items), summary, problems, data.report.path
            )
        )
    return chosen
