"""``kgmw learn``: mine relation paths from questions with known answers into a path memory."""

from __future__ import annotations

import functools
import math
import signal
import threading
from collections.abc import Callable
from typing import Any, TypeVar, cast

import click

from middleware.cli.learn_graph import learn_graph
from middleware.cli.questions import QuestionArgs, question_options
from middleware.cli.support import (
    LLMArgs,
    SourceArgs,
    echo_json,
    method_settings,
    print_table,
    source_options,
)
from middleware.config.methods import PlanSettings
from middleware.errors import BadRequest
from middleware.eval.items import EvalItem
from middleware.eval.selection import QuestionSet
from middleware.eval.topics import answer_iris, topic_iris
from middleware.kg.base import KnowledgeGraph
from middleware.kg.terms import to_iri
from middleware.planning.learning import Lesson, learn
from middleware.planning.memory import PathMemory, memory_location, open_memory
from middleware.text.linking import EntityLinker
from middleware.workspace import Workspace

FOLDED_MATCHES = ("exact", "alias", "folded", "folded-alias")


F = TypeVar("F", bound=Callable[..., Any])


def terminated_as_interrupt(func: F) -> F:
    """Run ``func`` with SIGTERM (a scheduler stopping the job) stopping it as Ctrl-C does,
    so what was learned is saved first. Only the main thread can set a handler."""

    @functools.wraps(func)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        if threading.current_thread() is not threading.main_thread():
            return func(*args, **kwargs)
        previous = signal.signal(signal.SIGTERM, signal.default_int_handler)
        try:
            return func(*args, **kwargs)
        finally:
            signal.signal(signal.SIGTERM, previous)

    return cast(F, wrapper)


def refuse_shared_names(chosen: list[QuestionSet]) -> None:
    """Two question sets of one name and split would share their questions' keys."""
    seen: dict[tuple[str, str], str] = {}
    for q in chosen:
        if (q.name, q.split) in seen:
            raise BadRequest(
                f"two question sets are both named {q.name!r} ({seen[(q.name, q.split)]} and "
                f"{q.source}): their questions' keys would clash in the path memory",
                hint="rename one of the files",
            )
        seen[(q.name, q.split)] = q.source


def lesson(
    dataset: str,
    split: str,
    item: EvalItem,
    graph: KnowledgeGraph,
    linker: EntityLinker,
    notes: list[str] | None = None,
) -> Lesson:
    """An eval item as a lesson: the dataset's topic keys and gold answers as IRIs (an
    answer name no label equals exactly is linked, up to case and accents). A topic key
    that names no IRI under the profile is noted in ``notes``: the question's topic is
    then linked from its text."""
    answers = [to_iri(i) for i in answer_iris(item, graph)]
    if len(answers) < len(item.answers):
        for name in item.answers:
            if name.strip():  # a blank answer (the WebQuestions file has some) names nothing
                # only label matches are kept: no typo search, no name variants
                found = linker.link(name, limit=3, typos=False, variants=False)
                answers += [e.iri for e in found if e.match in FOLDED_MATCHES]
    topics = tuple(to_iri(i) for i in topic_iris(item, graph.profile))
    key = f"{dataset}/{split}/{item.id}"
    if item.topic_entities and not topics and notes is not None:
        where = item.meta.get("where") or key
        named = ", ".join(repr(t) for t in item.topic_entities)
        notes.append(
            f"{where}: topic_entities {named} name no IRI under profile "
            f"{graph.profile.name!r}; its topic is linked from the question instead"
        )
    return Lesson(
        key=key,
        question=item.question,
        topics=topics,
        answers=tuple(dict.fromkeys(answers)),
        topic_names=tuple(
            n for n in (*item.meta.get("topic_names", "").split("|"), *item.topic_entities) if n
        ),
        hops=item.meta.get("hops"),
        where=item.meta.get("where", ""),
    )


@click.command("learn")
@question_options
@click.option("--source", "source_name", metavar="NAME", help="A source named in kgmw.toml.")
@click.option(
    "--memory",
    "memory_path",
    type=click.Path(dir_okay=False),
    help="Path memory file (default: in the store folder, or the cache folder for an endpoint).",
)
@click.option("--progress/--no-progress", default=None, help="Show a progress bar (default: on).")
@click.option(
    "--from-graph",
    is_flag=True,
    help="Learn with no questions: word the relation paths the graph holds as questions.",
)
@click.option(
    "--topics-per-relation",
    type=click.IntRange(1, 1000),
    default=20,
    show_default=True,
    help="--from-graph: topics sampled from each side of each relation.",
)
@click.option(
    "--minutes",
    type=click.FloatRange(min=0.1, max=7 * 24 * 60),
    callback=lambda _ctx, _param, value: _finite(value),
    default=30.0,
    show_default=True,
    help="--from-graph: time allowed for growing paths (a later run continues).",
)
@click.option(
    "--workers",
    type=click.IntRange(1, 64),
    help="Questions mined at once (default: setting plan_learn_workers, 2).",
)
@source_options
@click.pass_context
@terminated_as_interrupt
def learn_command(
    ctx: click.Context,
    questions: QuestionArgs,
    source_name: str | None,
    memory_path: str | None,
    progress: bool | None,
    from_graph: bool,
    topics_per_relation: int,
    minutes: float,
    workers: int | None,
    source: SourceArgs,
) -> None:
    """Learn which relation paths answer the questions of a dataset, for the planner;
    with --from-graph, from the graph alone."""
    no_llm = LLMArgs(None, None, None, None, no_cache=False)
    settings = method_settings(ctx, source, source_name, no_llm).replace(
        progress=progress,
        eval_data_dir=questions.data_dir,
        plan_memory=memory_path,
        plan_learn_workers=workers,
    )
    work = Workspace(settings)
    graph = work.graph()
    config = settings.table(PlanSettings)
    where = memory_location(graph, config.memory, settings.cache_dir)
    if from_graph:
        if questions.datasets:
            raise click.UsageError(
                "--from-graph learns with no questions; learn from --dataset in another run "
                "(both kinds of entries are kept in one memory)"
            )
        unused = {
            "--limit": questions.limit,
            "--folds": questions.folds,
            "--fold": questions.fold,
            "--workers": workers,
            "--only-in-graph": questions.only_in_graph or None,
        }
        given = [name for name, value in unused.items() if value is not None]
        if given:
            raise click.UsageError(f"{', '.join(given)}: for --dataset, not --from-graph")
        learn_graph(
            work,
            where,
            per_role=topics_per_relation,
            minutes=minutes,
            seed=questions.seed,
            as_json=source.as_json,
        )
        return
    chosen = questions.choose(settings, graph, held_out=False, learning=True)
    refuse_shared_names(chosen)
    linker = work.linker()
    notes: list[str] = []
    lessons = [
        lesson(q.name, q.split, item, graph, linker, notes) for q in chosen for item in q.items
    ]
    memory, warnings = open_memory(graph, where)
    for warning in warnings:
        click.echo(f"kgmw: warning: {warning}", err=True)
    encoder = work.encoder
    memory = memory or PathMemory.new(graph, encoder.name)
    record = {
        "datasets": [{"name": q.name, "split": q.split, "questions": len(q.items)} for q in chosen],
        "folds": questions.folds,
        "held_out_fold": questions.fold,
        "limit": questions.limit,
        "seed": questions.seed,
    }
    if not memory.learned_from or memory.learned_from[-1] != record:  # a resumed run: once
        memory.learned_from.append(record)
    report = learn(
        graph,
        memory,
        lessons,
        path=where,
        linker=linker,
        encoder=encoder,
        max_hops=config.max_hops,
        progress=settings.progress,
        cap=config.mine_cap,
        budget_queries=config.learn_queries,
        budget_seconds=config.learn_seconds,
        workers=config.learn_workers,
    )
    report.warnings += notes
    counts = memory.counts()
    if source.as_json:
        malformed = [problem for q in chosen for problem in q.problems]
        echo_json(
            {
                "memory": str(where),
                "report": report.__dict__,
                "malformed": malformed,
                "counts": counts,
            }
        )
        return
    hops = sorted(counts["by_hops"])
    print_table(
        ["hops", "questions", "with a path", "share"],
        [
            [
                "not given" if h == "None" else h,  # a question file of your own has no hops
                counts["by_hops"][h],
                counts["with_paths_by_hops"].get(h, 0),
                f"{counts['with_paths_by_hops'].get(h, 0) / counts['by_hops'][h]:.1%}",
            ]
            for h in hops
        ],
    )
    click.echo(
        f"learned {report.learned} question(s) ({report.skipped} already in the memory, "
        f"{report.without_paths} without a path, {report.without_topic} without a topic, "
        f"{report.without_answers} without answers in the graph); {counts['entries']} "
        f"entries in {where}"
    )
    skipped = report.over_budget + report.refused
    if skipped:
        click.echo(
            f"skipped {skipped} question(s): {report.over_budget} over their budget of "
            f"{config.learn_queries} queries and {config.learn_seconds:g} s "
            f"(plan_learn_queries, plan_learn_seconds) or past a query's timeout, "
            f"{report.refused} with a query the "
            "source refused; run again to retry them after raising the budget"
        )
    if report.problems:
        click.echo(f"not learned ({len(report.problems)}):")
        retry_first = sorted(report.problems, key=lambda p: not _retryable(p))
        for problem in retry_first[:20]:
            click.echo(f"  {problem}")
        if len(report.problems) > 20:
            click.echo(f"  ... and {len(report.problems) - 20} more (--json lists all)")
    for warning in report.warnings:
        click.echo(f"kgmw: warning: {warning}", err=True)


def _finite(value: float) -> float:
    """A number of minutes that compares (NaN passes a range check, then never ends)."""
    if not math.isfinite(value):
        raise click.BadParameter("give a number of minutes, such as 30")
    return value


def _retryable(problem: str) -> bool:
    """A question skipped for its budget, a timeout or a refusal: another run may learn it."""
    return any(word in problem for word in (": over budget", "timeout", "was refused"))
