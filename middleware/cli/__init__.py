"""``kgmw``: the command-line shell over the Python API.

Every command takes its source from ``--store DIR``, ``--endpoint URL`` or, with
neither, the bundled sample graph; ``--json`` prints machine-readable output.
Errors print one line (``kgmw: error: ...``) and exit non-zero. One module per
command group: ``graph`` (load, query, neighbors, paths, link, describe),
``source_commands`` (inspect, export), ``ask``,
``eval`` (eval, report), ``datasets`` (datasets, datasets fetch), ``learn``, ``ksl_dataset``, ``ksl_tune``, ``llm`` (llm, doctor), ``serve``, ``mcp``,
``settings``; ``support`` holds the options and output helpers they share.
"""

from __future__ import annotations

import sys
from collections.abc import Sequence

import click

from middleware.cli import (
    ask,
    calibrate,
    datasets,
    graph,
    ksl_dataset,
    ksl_tune,
    learn,
    llm,
    mcp,
    serve,
    settings,
    source_commands,
)
from middleware.cli import eval as evaluation
from middleware.errors import MiddlewareError


@click.group(context_settings={"help_option_names": ["-h", "--help"]})
@click.option(
    "--config",
    type=click.Path(dir_okay=False),
    help="Settings file (default: $KGMW_CONFIG or ./kgmw.toml).",
)
@click.version_option(package_name="kg-middleware", prog_name="kgmw")
@click.pass_context
def cli(ctx: click.Context, config: str | None) -> None:
    """Ground LLM answers in knowledge graphs: load, query and explore RDF sources."""
    ctx.obj = {"config": config}


for _command in (
    graph.load,
    graph.query,
    graph.neighbors,
    graph.paths,
    graph.link,
    graph.describe,
    source_commands.inspect,
    source_commands.export,
    settings.show_settings,
    ask.ask,
    evaluation.eval_command,
    evaluation.report_command,
    calibrate.calibrate_command,
    datasets.datasets_command,
    learn.learn_command,
    ksl_dataset.ksl_dataset_command,
    ksl_tune.ksl_tune_command,
    llm.llm_command,
    llm.doctor,
    serve.serve,
    mcp.mcp_command,
):
    cli.add_command(_command)


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point: runs a command, prints errors as one line, returns the exit status."""
    try:
        cli.main(
            args=list(argv) if argv is not None else None, prog_name="kgmw", standalone_mode=False
        )
    except MiddlewareError as err:
        click.echo(f"kgmw: error: {err}", err=True)
        return 2 if 400 <= err.status < 500 else 1
    except click.ClickException as err:
        err.show()
        return err.exit_code
    except (click.exceptions.Abort, KeyboardInterrupt) as err:
        # a command that saved its work before stopping says what it kept (click wraps
        # the KeyboardInterrupt in an Abort)
        said = str(err) or str(err.__cause__ or err.__context__ or "")
        click.echo(f"kgmw: interrupted: {said}" if said else "kgmw: interrupted", err=True)
        return 130
    except BrokenPipeError:
        return 0
    return 0


if __name__ == "__main__":
    sys.exit(main())
