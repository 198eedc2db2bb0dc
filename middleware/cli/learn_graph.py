"""``kgmw learn --from-graph``: a path memory worded from the graph, with no questions."""

from __future__ import annotations

from dataclasses import asdict
from pathlib import Path

import click

from middleware.cli.support import echo_json
from middleware.config.methods import PlanSettings
from middleware.errors import StoreBusy
from middleware.planning.from_graph import GraphLessons, census_path, learn_from_graph
from middleware.planning.learning import LearnInterrupted
from middleware.planning.memory import PathMemory, open_memory
from middleware.support.locks import LockTimeout, file_lock
from middleware.workspace import Workspace


def learn_graph(
    work: Workspace,
    where: Path,
    *,
    per_role: int,
    minutes: float,
    seed: int,
    as_json: bool,
) -> None:
    """Learn ``where``'s generated entries from ``work``'s graph and report them."""
    graph = work.graph()
    plan = work.settings.table(PlanSettings)
    config = GraphLessons(
        per_role=per_role,
        max_hops=plan.max_hops,
        min_junction=plan.min_junction,
        seconds=minutes * 60.0,
        seed=seed,
    )
    # a stale memory needs no warning here: this run words it anew, and says itself
    # when learned entries in it are from before the graph was loaded again
    memory, _ = open_memory(graph, where)
    encoder = work.encoder
    memory = memory or PathMemory.new(graph, encoder.name)
    real = where.resolve()
    lock = real.with_name(real.name + ".lock")
    try:
        with file_lock(lock, timeout=0):
            try:
                report = learn_from_graph(
                    graph,
                    memory,
                    path=real,
                    verbalizer=work.verbalizer(),
                    encoder=encoder,
                    config=config,
                    progress=work.settings.progress,
                )
            except KeyboardInterrupt:
                if not census_path(real).is_file():
                    raise LearnInterrupted(
                        "stopped before any relation path was found; nothing was saved"
                    ) from None
                raise LearnInterrupted(
                    f"the relation paths found so far are saved beside {where} "
                    "(.census.json); run the same command again to resume"
                ) from None
    except LockTimeout as err:
        raise StoreBusy(
            f"another run is writing the path memory {where} (its lock {lock} is held)",
            hint="wait for it to finish, or give this run its own file with --memory",
        ) from err
    if as_json:
        echo_json({"memory": str(where), "report": asdict(report), "counts": memory.counts()})
        return
    resumed = " (resumed)" if report.resumed else ""
    click.echo(
        f"sampled {report.topics} topics{resumed}, grew {report.grown}: {report.paths} "
        f"relation paths found, {report.common} common, {report.incoherent} of them left "
        f"out as incoherent, {report.kept_paths} kept, worded as {report.entries} "
        f"generated entries; {len(memory.entries)} entries in {where}"
    )
    for warning in report.warnings:
        click.echo(f"kgmw: warning: {warning}", err=True)
