"""Pieces every ``kgmw`` command shares: source options, settings, tables and JSON."""

from __future__ import annotations

import functools
import json
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any, TypeVar, cast

import click
from pyoxigraph import NamedNode

from middleware.config import Settings
from middleware.errors import NotFound
from middleware.kg.open import open_graph
from middleware.kg.operations import GraphOperations
from middleware.kg.terms import looks_like_iri, to_iri
from middleware.text.linking import EntityLinker

F = TypeVar("F", bound=Callable[..., Any])
CELL_WIDTH = 70


@dataclass(frozen=True)
class SourceArgs:
    """The source options every graph command shares."""

    store: str | None
    endpoint: str | None
    profile: str | None
    timeout: float | None
    as_json: bool


def source_options(func: F) -> F:
    """Add --store/--endpoint/--profile/--timeout/--json, handed over as ``source``."""

    @functools.wraps(func)
    def wrapper(
        *args: Any,
        store: str | None,
        endpoint: str | None,
        profile: str | None,
        timeout: float | None,
        as_json: bool,
        **kwargs: Any,
    ) -> Any:
        return func(*args, source=SourceArgs(store, endpoint, profile, timeout, as_json), **kwargs)

    options = [
        click.option(
            "--store",
            type=click.Path(file_okay=False),
            help="Local store directory (default: the bundled sample graph).",
        ),
        click.option("--endpoint", help="SPARQL endpoint URL to query instead of a local store."),
        click.option("--profile", help="Source profile: a name in mappings/ or a YAML path."),
        click.option("--timeout", type=float, help="Seconds a SPARQL query may take."),
        click.option("--json", "as_json", is_flag=True, help="Print JSON instead of a table."),
    ]
    decorated: Any = wrapper
    for option in reversed(options):
        decorated = option(decorated)
    return cast(F, decorated)


def settings_for(ctx: click.Context, **overrides: Any) -> Settings:
    return Settings.load(config_path=ctx.obj.get("config") or True, overrides=overrides)


def graph_for(ctx: click.Context, source: SourceArgs) -> tuple[Settings, GraphOperations]:
    settings = settings_for(
        ctx,
        store=source.store,
        endpoint=source.endpoint,
        profile=source.profile,
        timeout=source.timeout,
    )
    return settings, open_graph(settings)


def resolve_entity(graph: GraphOperations, text: str, settings: Settings) -> NamedNode:
    """An IRI as given, or the best entity for a label."""
    if looks_like_iri(text):
        return to_iri(text)
    linker = EntityLinker(graph, fuzzy_cutoff=settings.fuzzy_cutoff)
    best = linker.best(text)
    if best is None:
        raise NotFound(
            f"no entity in {graph.name!r} matches {text!r}", hint="try `kgmw link` or give an IRI"
        )
    return best.iri


def _cut(text: str) -> str:
    return text if len(text) <= CELL_WIDTH else text[: CELL_WIDTH - 1] + "…"


def print_table(headers: Sequence[str], rows: Sequence[Sequence[object]]) -> None:
    """Aligned columns; long cells are cut."""
    cells = [[_cut(str(c)) for c in row] for row in rows]
    widths = [max([len(h), *(len(r[i]) for r in cells)]) for i, h in enumerate(headers)]
    line = "  ".join(h.ljust(w) for h, w in zip(headers, widths, strict=True)).rstrip()
    click.echo(line)
    click.echo("  ".join("-" * w for w in widths))
    for row in cells:
        click.echo("  ".join(c.ljust(w) for c, w in zip(row, widths, strict=True)).rstrip())


def echo_json(data: object) -> None:
    click.echo(json.dumps(data, ensure_ascii=False, indent=2))
