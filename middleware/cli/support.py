"""Pieces every ``kgmw`` command shares: source options, settings, tables and JSON."""

from __future__ import annotations

import dataclasses
import functools
import json
import os
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any, TypeVar, cast

import click
from pyoxigraph import NamedNode

from middleware.config import Settings
from middleware.config.settings import referenced_variables, unknown_variables
from middleware.errors import BadRequest, NotFound
from middleware.kg.backends.store_folder import remembered_name
from middleware.kg.operations import GraphOperations
from middleware.kg.terms import looks_like_iri, to_iri
from middleware.text.linking import EntityLinker
from middleware.workspace import Workspace

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
    name: str | None = None  # --source NAME, on the commands that read one graph


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


def named_source_option(func: F) -> F:
    """Add ``--source NAME`` (a ``[sources.NAME]`` table) to a command that reads one
    graph, handed over inside ``source``; put it below ``@source_options``."""

    @functools.wraps(func)
    def wrapper(*args: Any, source_name: str | None, source: SourceArgs, **kwargs: Any) -> Any:
        return func(*args, source=dataclasses.replace(source, name=source_name), **kwargs)

    option = click.option(
        "--source",
        "source_name",
        metavar="NAME",
        help="A source named in the config file ([sources.NAME]); not with --store/--endpoint.",
    )
    return cast(F, option(wrapper))


def settings_for(ctx: click.Context, **overrides: Any) -> Settings:
    settings = Settings.load(config_path=ctx.obj.get("config") or True, overrides=overrides)
    names = tuple(sorted(n for n in os.environ if n.startswith("KGMW_")))
    note_unknown_variables(names, frozenset(referenced_variables(settings)))
    return settings


@functools.cache
def note_unknown_variables(names: tuple[str, ...], referenced: frozenset[str]) -> None:
    """Note, once per process, each ``KGMW_*`` slip (``KGMW_METOD``); no value is read."""
    for line in unknown_variables(names, referenced):
        click.echo(f"kgmw: note: {line}", err=True)


def source_settings(ctx: click.Context, source: SourceArgs, **overrides: Any) -> Settings:
    """Settings for one graph: a named source's table, then the explicit flags."""
    if source.name and (source.store or source.endpoint):
        raise BadRequest("give --source NAME or --store/--endpoint, not both")
    settings = settings_for(ctx, **overrides)
    if source.name:
        settings = settings.for_source(source.name)
    return settings.replace(
        store=source.store, endpoint=source.endpoint, profile=source.profile, timeout=source.timeout
    )


def workspace_for(ctx: click.Context, source: SourceArgs) -> Workspace:
    """The workspace of a graph command: its source from the flags, no LLM opened."""
    work = Workspace(source_settings(ctx, source))
    warn_profile(work.graph())
    return work


def graph_for(ctx: click.Context, source: SourceArgs) -> tuple[Settings, GraphOperations]:
    work = workspace_for(ctx, source)
    return work.settings, work.graph()


def warn_profile(graph: GraphOperations) -> None:
    """A store remembers the profile it was loaded with; say so when another is used."""
    stored = graph.stored_profile
    remembered = remembered_name(stored) if stored else None
    if remembered and remembered != graph.profile.name:
        click.echo(
            f"kgmw: warning: {graph.name!r} was loaded with profile {remembered!r}; using "
            f"{graph.profile.name!r} as asked (leave out --profile and the profile setting "
            "to use the store's)",
            err=True,
        )


def resolve_entity(graph: GraphOperations, text: str, settings: Settings) -> NamedNode:
    """An IRI as given, or the best entity for a label."""
    if looks_like_iri(text):
        return to_iri(text)
    best = EntityLinker.from_settings(graph, settings).best(text)
    if best is None:
        raise NotFound(
            f"no entity in {graph.name!r} matches {text!r}", hint="try `kgmw link` or give an IRI"
        )
    return best.iri


def _cut(text: str) -> str:
    return text if len(text) <= CELL_WIDTH else text[: CELL_WIDTH - 1] + "…"


def print_table(
    headers: Sequence[str], rows: Sequence[Sequence[object]], *, whole: Sequence[int] = ()
) -> None:
    """Aligned columns; long cells are cut, except in the columns ``whole`` names (IRIs:
    a cut one names nothing)."""
    cells = [[str(c) if i in whole else _cut(str(c)) for i, c in enumerate(row)] for row in rows]
    widths = [max([len(h), *(len(r[i]) for r in cells)]) for i, h in enumerate(headers)]
    line = "  ".join(h.ljust(w) for h, w in zip(headers, widths, strict=True)).rstrip()
    click.echo(line)
    click.echo("  ".join("-" * w for w in widths))
    for row in cells:
        click.echo("  ".join(c.ljust(w) for c, w in zip(row, widths, strict=True)).rstrip())


def echo_json(data: object) -> None:
    click.echo(json.dumps(data, ensure_ascii=False, indent=2))


@dataclass(frozen=True)
class LLMArgs:
    """The LLM options a command shares, as settings overrides."""

    backend: str | None
    base_url: str | None
    model: str | None
    api: str | None
    no_cache: bool

    def overrides(self) -> dict[str, Any]:
        return {
            "llm": self.backend,
            "llm_base_url": self.base_url,
            "llm_model": self.model,
            "llm_api": self.api,
            "llm_cache": False if self.no_cache else None,
        }


def llm_options(func: F) -> F:
    """Add --llm/--llm-base-url/--llm-model/--llm-api/--no-cache, handed over as ``llm``."""

    @functools.wraps(func)
    def wrapper(
        *args: Any,
        llm_backend: str | None,
        llm_base_url: str | None,
        llm_model: str | None,
        llm_api: str | None,
        no_cache: bool,
        **kwargs: Any,
    ) -> Any:
        chosen = LLMArgs(llm_backend, llm_base_url, llm_model, llm_api, no_cache)
        return func(*args, llm=chosen, **kwargs)

    options = [
        click.option(
            "--llm",
            "llm_backend",
            type=click.Choice(["auto", "embedded", "openai", "transformers"]),
        ),
        click.option("--llm-base-url", help="OpenAI-compatible API base URL."),
        click.option("--llm-model", help="Model name for the OpenAI-compatible server."),
        click.option("--llm-api", type=click.Choice(["auto", "chat", "completions"])),
        click.option("--no-cache", is_flag=True, help="Bypass the LLM reply cache."),
    ]
    decorated: Any = wrapper
    for option in reversed(options):
        decorated = option(decorated)
    return cast(F, decorated)


def method_settings(
    ctx: click.Context, source: SourceArgs, name: str | None, llm: LLMArgs
) -> Settings:
    """Settings for a method run: the LLM flags, then a named source or --store/--endpoint."""
    return source_settings(ctx, dataclasses.replace(source, name=name), **llm.overrides())
