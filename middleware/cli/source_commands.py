"""``kgmw inspect`` (what an unknown source looks like) and ``kgmw export`` (a store
written back out as RDF)."""

from __future__ import annotations

import sys
from pathlib import Path

import click
from pyoxigraph import NamedNode

from middleware.cli.support import (
    SourceArgs,
    echo_json,
    graph_for,
    named_source_option,
    print_table,
    source_options,
)
from middleware.kg.export import EXPORT_FORMATS, export_format, export_store, exportable
from middleware.kg.inspect import inspect_graph
from middleware.kg.prefixes import compact
from middleware.text.verbalize import Verbalizer


@click.command()
@click.option(
    "--sample",
    type=click.IntRange(1, 10_000_000),
    default=100_000,
    show_default=True,
    help="Most triples each inspection query reads.",
)
@source_options
@named_source_option
@click.pass_context
def inspect(ctx: click.Context, sample: int, source: SourceArgs) -> None:
    """Sizes, label and type predicates, hub relations and label languages of a source,
    and the profile they suggest."""
    settings, graph = graph_for(ctx, source)
    report = inspect_graph(graph, sample=sample)
    verbalizer = Verbalizer(graph, literal_max_chars=settings.literal_max_chars)
    for entry in [*report.relations, *report.hubs]:  # Freebase's film.film.directed_by: directed by
        entry["label"] = verbalizer.relation(NamedNode(entry["predicate"]))
    if source.as_json:
        echo_json(report.to_json())
        return
    sizes = report.sizes
    bound = f" (the first {report.sample:,} triples)" if sizes["capped"] else ""
    click.echo(
        f"{report.source}: {sizes['triples']:,} triples, {sizes['subjects']:,} subjects, "
        f"{sizes['predicates']:,} predicates{bound}\n"
    )
    click.echo("Literal-valued predicates (label candidates):")
    print_table(
        ["predicate", "subjects", "uses", "mean length", "numbers", "label"],
        [
            [
                compact(c["predicate"]),
                c["subjects"],
                c["uses"],
                c["mean_length"],
                c["numbers"],
                "yes" if c["suggested"] else "",
            ]
            for c in report.label_candidates
        ],
        whole=(0,),
    )
    click.echo("\nRelations (IRI-valued predicates, most used first):")
    print_table(
        ["relation", "predicate", "uses", "objects"],
        [[r["label"], compact(r["predicate"]), r["uses"], r["objects"]] for r in report.relations],
        whole=(1,),
    )
    click.echo("\nHubs (most pointed-at objects):")
    print_table(
        ["relation", "predicate", "object", "count"],
        [
            [h["label"], compact(h["predicate"]), compact(h["object"]), h["count"]]
            for h in report.hubs
        ],
        whole=(1, 2),
    )
    languages = ", ".join(f"{x['language'] or '(none)'} {x['count']}" for x in report.languages)
    click.echo(f"\nLabel languages: {languages or '(no labels found)'}")
    click.echo("\nSuggested profile (save as mappings/NAME.yaml, or pass its path to --profile):")
    click.echo(report.profile_yaml().rstrip())


@click.command()
@click.option(
    "--store",
    type=click.Path(file_okay=False),
    help="Store directory to write out (default: the bundled sample graph).",
)
@click.option("--source", "source_name", metavar="NAME", help="A store named in the config file.")
@click.option(
    "--format",
    "fmt",
    type=click.Choice(list(EXPORT_FORMATS)),
    help="RDF format (default: from the --out file name).",
)
@click.option(
    "--out",
    type=click.Path(dir_okay=False, path_type=Path),
    help="File to write (default: standard output).",
)
@click.pass_context
def export(
    ctx: click.Context,
    store: str | None,
    source_name: str | None,
    fmt: str | None,
    out: Path | None,
) -> None:
    """Write a store back out as RDF (nt, nq, ttl, trig, rdfxml), to a file or stdout."""
    chosen = export_format(fmt, out)
    args = SourceArgs(store, None, None, None, as_json=False, name=source_name)
    _, opened = graph_for(ctx, args)
    graph = exportable(opened)
    if out is None:
        sys.stdout.flush()
        export_store(graph, chosen, sys.stdout.buffer)
        sys.stdout.buffer.flush()
        return
    written = export_store(graph, chosen, out)
    click.echo(f"wrote {written:,} triples from {graph.name!r} to {out} ({chosen})")
