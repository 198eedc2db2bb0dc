"""``kgmw ask``: answer a question with a method over a graph, with its evidence and cost."""

from __future__ import annotations

from collections.abc import Sequence

import click

from middleware.cli.progress import step_printer
from middleware.cli.support import (
    LLMArgs,
    SourceArgs,
    echo_json,
    llm_options,
    method_settings,
    source_options,
)
from middleware.errors import BadRequest
from middleware.kg.base import Hop, KnowledgeGraph
from middleware.kg.base import Path as GraphPath
from middleware.methods.answer import Answer
from middleware.methods.registry import METHODS
from middleware.serialize.answer_json import answer_dict
from middleware.serialize.rdf import answer_turtle
from middleware.text.verbalize import Verbalizer
from middleware.workspace import Workspace


def print_answer(
    answer: Answer,
    graphs: Sequence[KnowledgeGraph],
    *,
    literal_max_chars: int = 80,
    show_guess: bool = False,
) -> None:
    """The answer (or that the graph does not hold it, and with ``show_guess`` the
    withheld guess), what supports it, its evidence one path per line, the entities,
    warnings and usage."""
    verbalizers = {g.name: Verbalizer(g, literal_max_chars=literal_max_chars) for g in graphs}
    names = ", ".join(verbalizers)
    several = len(verbalizers) > 1

    def verbalizer(source: str | None) -> Verbalizer:
        return verbalizers.get(source or "") or next(iter(verbalizers.values()))

    def tag(source: str | None) -> str:
        return f"  [{source}]" if several and source else ""

    if answer.found:
        click.echo(answer.answer or "(no answer)")
        click.echo(
            f"confidence {answer.confidence:g}"
            + ("" if answer.grounded else " · not grounded in the graph")
        )
    else:
        click.echo("The graph does not hold the answer.")
        guess = answer.guess
        if guess is not None and show_guess:
            click.echo(f"Best guess: {guess.answer} (confidence {guess.confidence:g}; {guess.why})")
        elif guess is not None:
            click.echo("(--guess shows what the method would have answered)")
    if answer.support:
        click.echo("")
        click.echo("Supported by:")
        for chain in answer.support:
            weak = f"  (weak link: {chain.weak})" if chain.weak else ""
            source = chain.triples[0].source if chain.triples else None
            facts = "; ".join(
                verbalizer(t.source).path(GraphPath((Hop(t),)), style="arrows")
                for t in chain.triples
            )
            click.echo(f"  {facts or chain.text}{weak}{tag(source)}")
    if answer.evidence.paths:
        click.echo("")
        click.echo(f"Evidence paths ({names}):")
        for item in answer.evidence.paths:
            source = item.path.hops[0].triple.source if item.path.hops else None
            click.echo("  " + verbalizer(source).path(item.path, style="arrows") + tag(source))
    if answer.evidence.triples:
        click.echo("")
        click.echo(f"Evidence facts ({names}):")
        for fact in answer.evidence.triples:
            source = fact.triple.source
            line = verbalizer(source).path(GraphPath((Hop(fact.triple),)), style="arrows")
            click.echo("  " + line + tag(source))
    if answer.entities:
        click.echo("")
        click.echo("Answer entities: " + ", ".join(f"{e.label} <{e.iri}>" for e in answer.entities))
    if answer.warnings:
        click.echo("")
    for warning in answer.warnings:
        click.echo(f"warning: {warning}")
    usage = answer.usage
    cached = f", {usage['cache_hits']} from cache" if usage.get("cache_hits") else ""
    calls = usage["llm_calls"]
    click.echo("")
    click.echo(
        f"usage: {answer.method} · {calls} LLM call{'s' if calls != 1 else ''}{cached} · "
        f"{usage['prompt_tokens']} prompt + {usage['completion_tokens']} completion tokens · "
        f"{usage['sparql_queries']} SPARQL queries · {usage['seconds']:.2f} s"
    )


@click.command("ask")
@click.argument("question")
@click.option(
    "--method",
    type=click.Choice(list(METHODS)),
    help="How to answer (default: setting method, rok).",
)
@click.option(
    "--source",
    "source_names",
    metavar="NAME",
    multiple=True,
    help="A source named in kgmw.toml ([sources.NAME]); repeat to ask several at once (pg, qsm, io, cot).",
)
@click.option("--choice", "choices", multiple=True, help="A possible answer (repeat for each).")
@click.option("--rdf", "as_rdf", is_flag=True, help="Print the answer as RDF Turtle (PROV-O).")
@click.option(
    "--guess",
    "show_guess",
    is_flag=True,
    help="When the graph does not hold the answer, also print the method's withheld best "
    "guess and its confidence (JSON always has it under guess).",
)
@click.option(
    "--max-calls",
    type=click.IntRange(min=1),
    metavar="N",
    help="Most LLM calls for this question (default: setting max_calls).",
)
@click.option(
    "--progress/--no-progress",
    "show_progress",
    default=None,
    help="Show each step (linking, retrieval, LLM call k of n) on standard error "
    "(default: when it is a terminal and setting progress is on).",
)
@source_options
@llm_options
@click.pass_context
def ask(
    ctx: click.Context,
    question: str,
    method: str | None,
    source_names: tuple[str, ...],
    choices: tuple[str, ...],
    as_rdf: bool,
    show_guess: bool,
    max_calls: int | None,
    show_progress: bool | None,
    source: SourceArgs,
    llm: LLMArgs,
) -> None:
    """Answer QUESTION from a graph (default: the sample graph and the embedded LLM)."""
    if as_rdf and source.as_json:
        raise BadRequest("give --json or --rdf, not both")
    if source_names and (source.store or source.endpoint):
        raise BadRequest("give --source NAME or --store/--endpoint, not both")
    settings = method_settings(ctx, source, None, llm)
    flags = {"profile": source.profile, "timeout": source.timeout, "max_calls": max_calls}
    settings = settings.replace(max_calls=max_calls)  # the user's own flag may raise it
    # each named source with its own table; facts are tagged with the source's name
    work = Workspace(settings, default=next(iter(source_names), None), overrides=flags)
    graphs = [work.graph(name) for name in source_names] or [work.graph()]
    runner = work.method(method)
    answer = runner.run(
        question,
        choices=list(choices) or None,
        sources=graphs if len(graphs) > 1 else None,
        budget=work.budget(),
        listener=step_printer(
            False if show_progress is None and not settings.progress else show_progress
        ),
    )
    if source.as_json:
        echo_json(answer_dict(answer))
    elif as_rdf:
        click.echo(answer_turtle(answer))
    else:
        print_answer(
            answer, graphs, literal_max_chars=settings.literal_max_chars, show_guess=show_guess
        )
