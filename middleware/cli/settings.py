"""``kgmw settings``: every setting, its value and where it came from."""

from __future__ import annotations

import click

from middleware.cli.support import echo_json, print_table, settings_for
from middleware.config.docs import settings_markdown
from middleware.methods.registry import method_spec


@click.command("settings")
@click.option("--json", "as_json", is_flag=True, help="Print JSON instead of a table.")
@click.option(
    "--markdown",
    is_flag=True,
    help="Print the settings reference (docs/settings.md) from the declarations.",
)
@click.pass_context
def show_settings(ctx: click.Context, as_json: bool, markdown: bool) -> None:
    """Every setting with its value and where the value came from."""
    if markdown:
        click.echo(settings_markdown(), nl=False)
        return
    settings = settings_for(ctx)
    method_spec(settings.method)  # an unknown method fails here, naming the known ones
    values = settings.as_dict(mask_secrets=True)
    if as_json:
        echo_json({k: {"value": v, "from": settings.source_of(k)} for k, v in values.items()})
        return
    print_table(
        ["setting", "value", "from"], [[k, v, settings.source_of(k)] for k, v in values.items()]
    )
