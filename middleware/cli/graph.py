"""``kgmw load``, ``query``, ``neighbors``, ``paths``, ``link``, ``describe``: the graph commands.

Every command takes its source from ``--store DIR``, ``--endpoint URL`` or, with
neither, the bundled sample graph; ``--json`` prints machine-readable output.
Errors print one line (``kgmw: error: ...``) and exit non-zero.
"""

from __future__ import annotations

import sys
import time
from pathlib import Path

import click
from pyoxigraph import NamedNode

from middleware.cli.support import (
    SourceArgs,
    echo_json,
    graph_for,
    named_source_option,
    print_table,
    resolve_entity,
    settings_for,
    source_options,
    workspace_for,
)
from middleware.errors import BadRequest, MiddlewareError, NotFound
from middleware.kg.backends.local import LocalStore
from middleware.kg.backends.store_folder import (
    check_profile,
    folder_kind,
    store_path,
    undo_first_load,
)
from middleware.kg.load_guard import LoadCaps
from middleware.kg.open import query_policy
from middleware.kg.recipes import RECIPES, recipe
from middleware.serialize.graph_json import (
    entity_json,
    path_json,
    result_json,
    term_json,
    triple_json,
)
from middleware.text.stored_labels import label_index
from middleware.text.verbalize import Verbalizer


@click.command()
@click.argument("files", nargs=-1, type=click.Path(dir_okay=False))
@click.option(
    "--store",
    required=True,
    type=click.Path(file_okay=False),
    help="Store directory to load into (created if missing).",
)
@click.option(
    "--format",
    "fmt",
    help="Input format for all files: nt, nq, ttl, trig, n3, rdfxml, jsonld, trix, hext, delimited (default: from the file name).",
)
@click.option(
    "--profile",
    help="Profile mapping delimited rows to IRIs and labels (default: the store's, else generic).",
)
@click.option(
    "--recipe",
    "recipe_name",
    type=click.Choice(list(RECIPES)),
    help="Load a published dataset's graph: its files under --data-dir, with its profile.",
)
@click.option(
    "--data-dir",
    type=click.Path(file_okay=False),
    help="Folder holding the recipe's dataset (default: setting eval_data_dir).",
)
@click.option(
    "--replace",
    is_flag=True,
    help="The files become the whole graph (swapped in when complete) instead of adding to it.",
)
@click.option("--progress/--no-progress", default=None, help="Show a progress bar (default: on).")
@click.pass_context
def load(
    ctx: click.Context,
    files: tuple[str, ...],
    store: str,
    fmt: str | None,
    profile: str | None,
    recipe_name: str | None,
    data_dir: str | None,
    replace: bool,
    progress: bool | None,
) -> None:
    """Load RDF or delimited triple files (or a --recipe) into a store, all or nothing."""
    paths: list[str | Path] = list(files)
    if recipe_name:
        if files:
            raise BadRequest("give FILES or --recipe, not both")
        chosen = recipe(recipe_name)
        profile = profile or chosen.profile
        folder = data_dir or settings_for(ctx).eval_data_dir
        if not folder:
            raise BadRequest(f"--recipe {recipe_name} needs --data-dir")
        paths = list(chosen.paths(Path(folder)))
    elif not files:
        raise BadRequest("nothing to load", hint="give FILES or --recipe NAME --data-dir DIR")
    settings = settings_for(ctx, store=store, profile=profile, progress=progress)
    folder_path = store_path(store)
    if not replace:
        check_profile(folder_path, settings.profile)
    made = [p for p in folder_path.parents if not p.exists()]  # the load may make them
    before = folder_kind(folder_path)
    target: LocalStore | None = None
    try:
        target = LocalStore(
            store,
            profile=settings.profile,
            progress=settings.progress,
            wait=settings.store_lock_wait,
            caps=LoadCaps.from_settings(settings),
        )
        report = target.load(paths, format=fmt, replace=replace)
    except BaseException:  # cleanup only: a failed first load leaves nothing behind
        if target is not None:
            target.close()
        if before in ("missing", "empty"):
            undo_first_load(folder_path, made, remove=before == "missing")
        raise
    click.echo(
        f"loaded {report.quads_read:,} triples from {len(report.files)} file(s) in "
        f"{report.seconds:.1f} s ({report.rate:,.0f} triples/s); "
        f"{target.name} now holds {len(target):,} triples (profile {target.profile.name})"
    )
    started = time.monotonic()
    if settings.progress:
        click.echo("indexing the labels for linking ...", err=True)
    index = label_index(target)  # kept beside the data: later processes open it
    index.prepare()
    counted = ""
    try:  # kept beside the data too: reading them is a scan of every triple
        predicates = target.relation_vocabulary()
        counted = (
            f" and {'too many' if predicates is None else f'{len(predicates):,}'} predicate(s)"
        )
    except MiddlewareError as err:  # the data is live: the first answer that needs them reads them
        click.echo(f"kgmw: note: the graph's predicates were not read ({err.message})", err=True)
    click.echo(f"indexed {len(index):,} label texts{counted} in {time.monotonic() - started:.1f} s")


@click.command()
@click.argument("sparql")
@source_options
@named_source_option
@click.pass_context
def query(
    ctx: click.Context,
    sparql: str,
    source: SourceArgs,
) -> None:
    """Run a read-only SPARQL query (SPARQL text, @FILE, or - for stdin)."""
    if sparql == "-":
        sparql = sys.stdin.read()
    elif sparql.startswith("@"):
        try:
            sparql = Path(sparql[1:]).read_text(encoding="utf-8")
        except OSError as err:
            raise BadRequest(f"cannot read query file {sparql[1:]}: {err.strerror}") from err
    settings, graph = graph_for(ctx, source)
    result = graph.query(sparql, policy=query_policy(settings))
    if result.truncated:
        size = len(result.rows) or len(result.triples)
        click.echo(
            f"kgmw: warning: {graph.name} cut the result at {size:,} rows (its row cap, "
            "e.g. Virtuoso's ResultSetMaxRows); there may be more: add a LIMIT and page",
            err=True,
        )
    if source.as_json:
        echo_json(result_json(result))
    elif result.kind == "ask":
        click.echo("yes" if result.boolean else "no")
    elif result.kind == "graph":
        for s, p, o in result.triples:
            click.echo(f"{s} {p} {o} .")
    else:
        iris = [
            i
            for i, v in enumerate(result.variables)
            if any(isinstance(row.get(v), NamedNode) for row in result.rows)
        ]
        print_table(
            result.variables,
            [[row[v].value if v in row else "" for v in result.variables] for row in result.rows],
            whole=iris,  # an IRI cut short names nothing
        )
        click.echo(f"({len(result.rows)} rows)")


@click.command()
@click.argument("entity")
@click.option(
    "--direction",
    type=click.Choice(["both", "out", "in"]),
    default="both",
    show_default=True,
    help="Which edges to follow.",
)
@click.option("--limit", type=int, help="Most triples to show (default: setting neighbors_limit).")
@source_options
@named_source_option
@click.pass_context
def neighbors(
    ctx: click.Context,
    entity: str,
    direction: str,
    limit: int | None,
    source: SourceArgs,
) -> None:
    """Triples around ENTITY (an IRI or a label)."""
    settings, graph = graph_for(ctx, source)
    node = resolve_entity(graph, entity, settings)
    triples = graph.neighbors(node, direction=direction, limit=limit)  # type: ignore[arg-type]
    verbalizer = Verbalizer(graph, literal_max_chars=settings.literal_max_chars)
    texts = verbalizer.triples(triples)
    if source.as_json:
        echo_json(
            {
                "entity": node.value,
                "triples": [triple_json(t, x) for t, x in zip(triples, texts, strict=True)],
            }
        )
        return
    rows = []
    for triple in triples:
        forward = triple.subject == node
        other = triple.object if forward else triple.subject
        rows.append(
            [
                "out" if forward else "in",
                verbalizer.relation(triple.predicate, forward=forward),
                verbalizer.name(other),
                other.value if isinstance(other, NamedNode) else "",
            ]
        )
    click.echo(f"{verbalizer.name(node)} <{node.value}>")
    print_table(["dir", "relation", "neighbour", "iri"], rows, whole=(3,))


@click.command()
@click.argument("a")
@click.argument("b")
@click.option(
    "--max-hops", type=click.IntRange(1, 3), help="Longest path, 1-3 (default: setting max_hops)."
)
@click.option("--limit", type=int, help="Most paths to show (default: setting paths_limit).")
@source_options
@named_source_option
@click.pass_context
def paths(
    ctx: click.Context,
    a: str,
    b: str,
    max_hops: int | None,
    limit: int | None,
    source: SourceArgs,
) -> None:
    """All simple paths between A and B (IRIs or labels), edges in either direction."""
    settings, graph = graph_for(ctx, source)
    start, end = resolve_entity(graph, a, settings), resolve_entity(graph, b, settings)
    found = graph.paths(start, end, max_hops=max_hops, limit=limit)
    verbalizer = Verbalizer(graph, literal_max_chars=settings.literal_max_chars)
    if source.as_json:
        echo_json(
            {
                "a": start.value,
                "b": end.value,
                "paths": [path_json(p, verbalizer.path(p)) for p in found],
            }
        )
        return
    click.echo(
        f"{len(found)} path(s) between {verbalizer.name(start)} and {verbalizer.name(end)} in {graph.name!r}:"
    )
    for path in found:
        click.echo("  " + verbalizer.path(path, style="arrows"))


@click.command()
@click.argument("text")
@click.option("--limit", type=int, help="Most candidates (default: setting link_limit).")
@source_options
@named_source_option
@click.pass_context
def link(
    ctx: click.Context,
    text: str,
    limit: int | None,
    source: SourceArgs,
) -> None:
    """Rank the entities that TEXT may name."""
    work = workspace_for(ctx, source)
    graph = work.graph()
    found = work.linker().link(text, limit=limit)
    if source.as_json:
        echo_json([entity_json(e) for e in found])
        return
    if not found:
        raise NotFound(f"no entity in {graph.name!r} matches {text!r}")
    rows = [
        [i + 1, f"{e.score:.2f}", e.match, e.label, graph.degree(e.iri), e.iri.value]
        for i, e in enumerate(found)
    ]
    print_table(["#", "score", "match", "label", "degree", "iri"], rows)


@click.command()
@click.argument("entity")
@source_options
@named_source_option
@click.pass_context
def describe(
    ctx: click.Context,
    entity: str,
    source: SourceArgs,
) -> None:
    """Label, aliases, description and degree of ENTITY."""
    settings, graph = graph_for(ctx, source)
    found = graph.describe(resolve_entity(graph, entity, settings))
    degree = graph.degree(found.iri)
    if source.as_json:
        echo_json({**entity_json(found), "degree": degree, "term": term_json(found.iri)})
        return
    print_table(
        ["field", "value"],
        [
            ["iri", found.iri.value],
            ["label", found.label or ""],
            ["aliases", ", ".join(found.aliases)],
            ["description", found.description or ""],
            ["degree", degree],
            ["source", found.source],
        ],
    )
