"""The walk's model before and after `kgmw ksl-tune`: choice accuracy on held-out steps.

    ../.venv/bin/python bench_ksl_tune.py --store METAQA_STORE --adapter RUN/adapter \\
        [--fold 0] [--limit 100] [--base GGUF_OR_FOLDER] [--models base,tuned] \\
        [--steps N] [--few-shot]

Held-out steps are the instruction examples of the dev questions of fold ``--fold`` of 5
(`kgmw ksl-dataset --folds 5 --fold I` trains on every other fold, so these were never
seen), ``--limit`` questions per hop count (1 and 2), seed 7. Each step is put to the
transformers backend's ``choose()`` as the walk puts it (the instruction as system text,
the round, the options), once with the base model alone and once with the adapter.
``--few-shot`` puts the ``ksl_step`` prompt's few-shot examples before the round, so the
prompt is the walk's own, word for word (the tuning examples leave them out); ``--steps``
scores only the first N steps (for timing). A pick is right when it is the example's
output. Also printed: how often the correct
option was the first offered (the offer ranks options best first), a floor any model
should clear.
"""

from __future__ import annotations

import argparse
import json
import time
from pathlib import Path

from common import DATASETS

from middleware.cli.questions import QuestionArgs
from middleware.config import Settings
from middleware.config.methods import KSLSettings
from middleware.kg.open import open_graph
from middleware.llm import system, user
from middleware.llm.base import Message
from middleware.llm.local import bundled_model_path
from middleware.llm.prompt_templates import load_template
from middleware.llm.transformers_backend import TransformersLLM
from middleware.support.cache_dir import cache_root
from middleware.text.embeddings.factory import open_encoder
from middleware.tuning.dataset import InstructionDataset
from middleware.tuning.rounds import PROMPT, Example

OPTIONS_HEAD = "\nOptions:\n"
OPTIONS_TAIL = "\nReply with one option"


def held_out(store: str, fold: int, limit: int) -> list[Example]:
    settings = Settings.load(
        overrides={"store": store, "eval_data_dir": str(DATASETS), "progress": False}
    )
    graph = open_graph(settings)
    chosen = QuestionArgs(
        ("metaqa-1hop", "metaqa-2hop"), "dev", None, limit, 7, False, 5, fold
    ).choose(settings, graph, held_out=True)
    builder = InstructionDataset(
        graph,
        encoder=open_encoder(settings),
        config=settings.table(KSLSettings),
        text=settings,
        seed=7,
    )
    return [e for q in chosen for item in q.items for e in builder.export(item).examples]


def split(example: Example) -> tuple[str, list[str]]:
    """The round (without its option list) and the options, as the walk sent them."""
    head, _, rest = example.input.rpartition(OPTIONS_HEAD)
    listed = rest.split(OPTIONS_TAIL)[0]
    return head, [line for line in listed.splitlines() if line.strip()]


def messages(example: Example, round_text: str, few_shot: bool) -> list[Message]:
    """The step as the walk sends it; without ``few_shot``, as the tuning examples read."""
    shots: list[Message] = []
    if few_shot:
        for asked, answered in load_template(PROMPT).examples:
            shots += [user(asked), {"role": "assistant", "content": answered}]
    return [system(example.instruction), *shots, user(round_text)]


def accuracy(
    llm: TransformersLLM, examples: list[Example], few_shot: bool = False
) -> tuple[float, float, list[int]]:
    """Share of right picks, seconds per step, and each step's pick."""
    picks, started = [], time.perf_counter()
    for example in examples:
        round_text, options = split(example)
        picks.append(llm.choose(messages(example, round_text, few_shot), options).index)
    right = sum(split(e)[1][i] == e.output for e, i in zip(examples, picks, strict=True))
    return right / len(examples), (time.perf_counter() - started) / len(examples), picks


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--store", required=True)
    parser.add_argument("--adapter")
    parser.add_argument(
        "--models", default="base,tuned", help="which to score: base, tuned or both (base,tuned)"
    )
    parser.add_argument("--base")
    parser.add_argument("--fold", type=int, default=0)
    parser.add_argument("--limit", type=int, default=100)
    parser.add_argument("--steps", type=int, default=0, help="score only the first N steps")
    parser.add_argument(
        "--few-shot", action="store_true", help="send the walk's few-shot examples too"
    )
    parser.add_argument("--out", default="results/ksl-tune.json")
    args = parser.parse_args()
    examples = held_out(args.store, args.fold, args.limit)
    if args.steps:
        examples = examples[: args.steps]
    first = sum(split(e)[1][0] == e.output for e in examples) / len(examples)
    base = Path(args.base) if args.base else bundled_model_path(cache_root(None))
    rows: dict[str, object] = {
        "steps": len(examples),
        "first_offered": round(first, 4),
        "few_shot": args.few_shot,
    }
    wanted = args.models.split(",")
    if "tuned" in wanted and not args.adapter:
        parser.error("--adapter is needed to score the tuned model")
    for name, adapter in (("base", None), ("tuned", args.adapter)):
        if name not in wanted:
            continue
        llm = TransformersLLM(base=base, adapter=adapter)
        llm.warm_up()  # loading is not a step
        share, seconds, picks = accuracy(llm, examples, args.few_shot)
        rows[name] = round(share, 4)
        rows[f"{name}_seconds_per_step"] = round(seconds, 3)
        rows[f"{name}_picks"] = picks
        print(name, rows[name], flush=True)
    print(json.dumps(rows, indent=1))
    Path(args.out).parent.mkdir(parents=True, exist_ok=True)
    Path(args.out).write_text(json.dumps(rows, indent=1) + "\n")


if __name__ == "__main__":
    main()
