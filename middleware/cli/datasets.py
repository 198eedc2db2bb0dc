"""``kgmw datasets``: the benchmark datasets' files, where each comes from and its
SHA-256; ``kgmw datasets fetch NAME`` downloads, checks and lays one out."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import click

from middleware.cli.support import echo_json, print_table, settings_for
from middleware.errors import BadRequest
from middleware.eval.catalogue import CATALOGUE, DatasetSource, Download, used_by
from middleware.eval.fetch import fetch


@click.group("datasets", invoke_without_command=True)
@click.option("--json", "as_json", is_flag=True, help="Print the list as JSON.")
@click.pass_context
def datasets_command(ctx: click.Context, as_json: bool) -> None:
    """The benchmark datasets: each file's URL, its SHA-256 and where it goes."""
    if ctx.invoked_subcommand is not None:
        return
    if as_json:
        echo_json([_as_json(source) for source in CATALOGUE.values()])
        return
    rows = [
        (source.name, ", ".join(item.targets), item.sha256 or "none known", _where(item, source))
        for source in CATALOGUE.values()
        for item in source.downloads
    ]
    print_table(("DATASET", "FILES UNDER --data-dir", "SHA-256", "FROM"), rows, whole=(1, 2, 3))
    for source in CATALOGUE.values():
        click.echo(f"\n{source.name}: {source.title}")
        click.echo(f"  home      {source.homepage}")
        click.echo(f"  licence   {source.licence}")
        if source.official:
            sha256 = source.official.sha256 or "none published"
            click.echo(f"  official  {source.official.url}")
            click.echo(f"            sha256 {sha256}: {source.official.note}")
        click.echo(f"  read by   {', '.join(used_by(source))}")
        if source.note:
            click.echo(f"  by hand   {source.note}")


@datasets_command.command("fetch")
@click.argument("name", type=click.Choice(list(CATALOGUE)))
@click.option(
    "--data-dir",
    type=click.Path(file_okay=False),
    help="Folder to lay the files out in, as kgmw eval and kgmw load --recipe read them "
    "(default: setting eval_data_dir).",
)
@click.option(
    "--base-url",
    metavar="URL",
    help="Mirror to download from: each file at URL/ plus its mirror path (default: setting "
    "datasets_base_url, else each file's official URL).",
)
@click.option(
    "--unverified",
    is_flag=True,
    help="Also fetch files that have no recorded checksum (MetaQA's), printing the one they "
    "arrived with.",
)
@click.option("--progress/--no-progress", default=None, help="Show a progress bar (default: on).")
@click.pass_context
def fetch_command(
    ctx: click.Context,
    name: str,
    data_dir: str | None,
    base_url: str | None,
    unverified: bool,
    progress: bool | None,
) -> None:
    """Download dataset NAME, check each file's SHA-256 and lay it out under the data
    folder; all or nothing."""
    settings = settings_for(
        ctx, eval_data_dir=data_dir, datasets_base_url=base_url, progress=progress
    )
    if not settings.eval_data_dir:
        raise BadRequest(f"fetching {name} needs --data-dir")
    source = CATALOGUE[name]
    report = fetch(
        source,
        Path(settings.eval_data_dir).expanduser(),
        base_url=settings.datasets_base_url,
        unverified=unverified,
        progress=settings.progress,
    )
    if report.written:
        checked = "" if report.unverified else ", SHA-256 checked"
        click.echo(f"{name}: wrote {', '.join(report.written)} under {report.data_dir}{checked}")
    if report.present:
        click.echo(f"{name}: already there: {', '.join(report.present)}")
    for file, sha256 in report.unverified.items():
        click.echo(f"{name}: not verified (no recorded checksum): {file} sha256 {sha256}")
    click.echo(f"{name}: read by {', '.join(used_by(source))}")


def _where(item: Download, source: DatasetSource) -> str:
    return item.url or f"by hand, see {source.homepage}"


def _as_json(source: DatasetSource) -> dict[str, Any]:
    return {
        "name": source.name,
        "title": source.title,
        "homepage": source.homepage,
        "licence": source.licence,
        "official": None if source.official is None else vars(source.official),
        "note": source.note or None,
        "used_by": used_by(source),
        "downloads": [
            {
                "url": item.url,
                "sha256": item.sha256,
                "origin": item.origin,
                "mirror_path": item.mirror_path,
                **({"put_at": item.put_at} if item.put_at else {"members": dict(item.members)}),
            }
            for item in source.downloads
        ],
    }
