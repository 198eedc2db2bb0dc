"""Known question sets by name: where their files lie under the data folder, how
to read each, which questions to keep, and a seeded draw.

>>> sorted(DATASETS)[:3]
['commonsenseqa', 'foreign-relation-metaqa', 'metaqa-1hop']
"""

from __future__ import annotations

import random
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from middleware.errors import BadRequest
from middleware.eval.foreign_relations_set import NAME as FOREIGN
from middleware.eval.foreign_relations_set import build as build_foreign
from middleware.eval.items import Dataset, EvalItem, finish
from middleware.eval.loaders import (
    load_choice_jsonl,
    load_jsonl,
    load_metaqa,
    load_qald,
    load_webquestions,
)
from middleware.eval.unanswerable import NAME as UNANSWERABLE
from middleware.eval.unanswerable import build as build_unanswerable


@dataclass(frozen=True)
class DatasetSpec:
    """Where a known dataset's files lie under the data folder, and how to read them."""

    name: str
    files: dict[str, str]
    description: str

    def path(self, data_dir: Path, split: str) -> Path:
        if split not in self.files:
            raise BadRequest(
                f"{self.name} has no {split!r} split here",
                hint=f"use --split {' or '.join(self.files)}",
            )
        relative = Path(self.files[split])
        # The data folder may be the datasets root or this dataset's own folder.
        for candidate in (data_dir / relative, data_dir / Path(*relative.parts[1:])):
            if candidate.is_file():
                return candidate
        raise BadRequest(
            f"{self.name}: no {relative} under {data_dir}",
            hint="point --data-dir at the folder that holds metaqa/, webquestions/, ...",
        )


def _metaqa_spec(hops: int) -> DatasetSpec:
    return DatasetSpec(
        f"metaqa-{hops}hop",
        {s: f"metaqa/{hops}-hop/qa_{s}.txt" for s in ("dev", "test")},
        f"MetaQA vanilla {hops}-hop questions over the WikiMovies graph",
    )


def _metaqa_mc_spec(hops: int) -> DatasetSpec:
    plain = _metaqa_spec(hops)
    return DatasetSpec(
        f"{plain.name}-mc",
        plain.files,
        f"MetaQA {hops}-hop as multiple choice: the gold answer and 4 distractors of its "
        "kind, all reachable from the topic (needs the graph)",
    )


DATASETS: dict[str, DatasetSpec] = {
    spec.name: spec
    for spec in (
        _metaqa_spec(1),
        _metaqa_spec(2),
        _metaqa_spec(3),
        _metaqa_mc_spec(1),
        _metaqa_mc_spec(2),
        _metaqa_mc_spec(3),
        DatasetSpec(
            "webquestions",
            {"test": "webquestions/WebQuestions.json"},
            "WebQuestions with Freebase topic entities (answer over FB15k-237)",
        ),
        DatasetSpec(
            "commonsenseqa",
            {"dev": "commonsenseqa/dev_rand_split.jsonl"},
            "CommonsenseQA, five choices",
        ),
        DatasetSpec(
            "openbookqa",
            {"dev": "openbookqa/dev.jsonl", "test": "openbookqa/test.jsonl"},
            "OpenBookQA, four choices",
        ),
        DatasetSpec("qald-10", {"test": "qald-10/qald_10.json"}, "QALD-10 over Wikidata"),
        DatasetSpec(
            UNANSWERABLE,
            {s: f"metaqa/1-hop/qa_{s}.txt" for s in ("dev", "test")},
            "MetaQA-shaped questions the graph cannot answer (made-up entities, absent "
            "relations), generated from the split and kb.txt with --seed",
        ),
        DatasetSpec(
            FOREIGN,
            dict.fromkeys(("dev", "test"), "metaqa/kb.txt"),
            "Questions about real MetaQA entities asking for relations the graph does not "
            "hold at all (a spouse, a budget), generated from kb.txt with --seed",
        ),
    )
}


def load_dataset(
    name: str,
    *,
    split: str,
    data_dir: Path | None,
    keep: Callable[[EvalItem], bool] | None = None,
    seed: int = 0,
) -> Dataset:
    """A known dataset by name (files under ``data_dir``), or a ``.jsonl`` file by path.

    ``seed`` generates ``unanswerable-metaqa``, which ``keep`` leaves whole: its made-up
    entities are out of the graph by design."""
    if name.endswith(".jsonl") and name not in DATASETS:
        own = load_jsonl(Path(name))
        return own if keep is None else keep_only(own, keep)
    spec = DATASETS.get(name)
    if spec is None:
        raise BadRequest(
            f"unknown dataset {name!r}",
            hint=f"use one of {', '.join(DATASETS)}, or a path to your own .jsonl file",
        )
    if data_dir is None:
        raise BadRequest(
            f"{name} needs --data-dir", hint="the folder holding metaqa/, webquestions/, ..."
        )
    path = spec.path(data_dir, split)
    if name == UNANSWERABLE:
        return build_unanswerable(path, split=split, seed=seed)
    if name == FOREIGN:
        return build_foreign(path, split=split, seed=seed)
    if name == "webquestions":
        return load_webquestions(path, split=split, keep=keep)
    if name.startswith("metaqa-"):
        data = load_metaqa(path, hops=int(name[len("metaqa-")]), split=split)
        data.name = name  # the -mc variants get their choices when drawn
    elif name in ("commonsenseqa", "openbookqa"):
        data = load_choice_jsonl(path, name=name, split=split)
    else:
        data = load_qald(path, split=split)
    return data if keep is None else keep_only(data, keep)


def keep_only(data: Dataset, keep: Callable[[EvalItem], bool]) -> Dataset:
    """The dataset without the items ``keep`` rejects; the report counts them."""
    kept = [item for item in data.items if keep(item)]
    if len(kept) < len(data.items):
        data.report.problems.append(
            f"{data.report.path}: {len(data.items) - len(kept)} questions dropped: "
            "topic entity not in the graph"
        )
    return finish(data.name, data.split, kept, data.report)


def sample(items: list[EvalItem], *, limit: int | None, seed: int) -> list[EvalItem]:
    """``limit`` items drawn with ``seed`` (all when ``limit`` is None), in file order.

    >>> items = [EvalItem(str(i), f"q{i}") for i in range(10)]
    >>> [i.id for i in sample(items, limit=3, seed=1)] == [i.id for i in sample(items, limit=3, seed=1)]
    True
    >>> len(sample(items, limit=None, seed=0))
    10
    """
    if limit is None or limit >= len(items):
        return list(items)
    chosen = set(random.Random(seed).sample(range(len(items)), limit))
    return [item for i, item in enumerate(items) if i in chosen]
