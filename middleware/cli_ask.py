"""``kgmw ask``: answer a question with a method over a graph, with its evidence and cost."""

from __future__ import annotations

import click

from middleware.cli_llm import LLMArgs, llm_options
from middleware.cli_support import SourceArgs, echo_json, settings_for, source_options
from middleware.errors import BadRequest
from middleware.kg.base import Hop, KnowledgeGraph
from middleware.kg.base import Path as GraphPath
from middleware.llm.factory import open_llm
from middleware.llm.ledger import Budget
from middleware.methods.base import Answer
from middleware.methods.registry import METHODS, build_method
from middleware.settings import Settings
from middleware.sources import open_graph
from middleware.verbalize import Verbalizer


def method_settings(
    ctx: click.Context, source: SourceArgs, name: str | None, llm: LLMArgs
) -> Settings:
    """Settings for a method run: the LLM flags, then a named source or --store/--endpoint."""
    if name and (source.store or source.endpoint):
        raise BadRequest("give --source NAME or --store/--endpoint, not both")
    settings = settings_for(ctx, **llm.overrides())
    if name:
        settings = settings.for_source(name)
    return settings.replace(
        store=source.store, endpoint=source.endpoint, profile=source.profile, timeout=source.timeout
    )


def print_answer(answer: Answer, graph: KnowledgeGraph, *, literal_max_chars: int = 80) -> None:
    """The answer, its evidence one path per line, the entities, warnings and usage."""
    verbalizer = Verbalizer(graph, literal_max_chars=literal_max_chars)
    click.echo(answer.answer or "(no answer)")
    if answer.evidence.paths:
        click.echo("")
        click.echo(f"Evidence paths ({graph.name}):")
        for item in answer.evidence.paths:
            click.echo("  " + verbalizer.path(item.path, style="arrows"))
    if answer.evidence.triples:
        click.echo("")
        click.echo(f"Evidence facts ({graph.name}):")
        for fact in answer.evidence.triples:
            click.echo("  " + verbalizer.path(GraphPath((Hop(fact.triple),)), style="arrows"))
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
    "--source", "source_name", metavar="NAME", help="A source named in kgmw.toml ([sources.NAME])."
)
@click.option("--choice", "choices", multiple=True, help="A possible answer (repeat for each).")
@click.option("--rdf", "as_rdf", is_flag=True, help="Print the answer as RDF Turtle (PROV-O).")
@click.option(
    "--max-calls",
    type=click.IntRange(min=1),
    metavar="N",
    help="Most LLM calls for this question (default: setting max_calls).",
)
@source_options
@llm_options
@click.pass_context
def ask(
    ctx: click.Context,
    question: str,
    method: str | None,
    source_name: str | None,
    choices: tuple[str, ...],
    as_rdf: bool,
    max_calls: int | None,
    source: SourceArgs,
    llm: LLMArgs,
) -> None:
    """Answer QUESTION from a graph (default: the sample graph and the embedded LLM)."""
    if as_rdf and source.as_json:
        raise BadRequest("give --json or --rdf, not both")
    settings = method_settings(ctx, source, source_name, llm)
    graph = open_graph(settings)
    name = method or settings.method
    runner = build_method(name, settings, open_llm(settings), graph)
    budget = Budget(
        max_calls=max_calls if max_calls is not None else settings.max_calls,
        max_tokens=settings.max_tokens,
    )
    answer = runner.run(question, choices=list(choices) or None, budget=budget)
    if source.as_json:
        echo_json(answer.to_dict())
    elif as_rdf:
        click.echo(answer.to_turtle())
    else:
        print_answer(answer, graph, literal_max_chars=settings.literal_max_chars)
