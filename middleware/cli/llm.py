"""``kgmw llm`` and ``kgmw doctor``: talk to the configured model, check the set-up."""

from __future__ import annotations

import time
from typing import Any

import click

from middleware.cli.support import (
    LLMArgs,
    SourceArgs,
    echo_json,
    llm_options,
    print_table,
    settings_for,
    source_settings,
)
from middleware.doctor import caches, run_checks, versions
from middleware.errors import MiddlewareError
from middleware.llm.base import Message, system, user
from middleware.llm.factory import open_llm
from middleware.llm.session import LLMSession


def _usage_line(summary: dict[str, Any], seconds: float) -> str:
    calls = summary["llm_calls"]
    cached = f", {summary['cache_hits']} from cache" if summary["cache_hits"] else ""
    return (
        f"usage: {calls} LLM call{'s' if calls != 1 else ''}{cached} · "
        f"{summary['prompt_tokens']} prompt + {summary['completion_tokens']} completion tokens"
        f" · {seconds:.2f} s"
    )


@click.command("llm")
@click.argument("prompt")
@click.option("--system", "system_text", help="A system message sent before the prompt.")
@click.option("--option", "options", multiple=True, help="Repeat to make the model choose one.")
@click.option("--max-tokens", type=int, help="Most tokens in the reply (default: llm_max_tokens).")
@click.option("--temperature", type=float, default=0.0, show_default=True)
@click.option("--stop", multiple=True, help="Stop generating at this text (repeatable).")
@click.option("--json", "as_json", is_flag=True, help="Print the reply and usage as JSON.")
@llm_options
@click.pass_context
def llm_command(
    ctx: click.Context,
    prompt: str,
    system_text: str | None,
    options: tuple[str, ...],
    max_tokens: int | None,
    temperature: float,
    stop: tuple[str, ...],
    as_json: bool,
    llm: LLMArgs,
) -> None:
    """One completion (or, with --option, one constrained choice) and what it cost."""
    settings = settings_for(ctx, **llm.overrides())
    session = LLMSession(open_llm(settings))
    messages: list[Message] = [system(system_text)] if system_text else []
    messages.append(user(prompt))
    started = time.perf_counter()
    if options:
        choice = session.choose("llm", messages, list(options), temperature=temperature)
        completion, text = choice.completion, choice.option
    else:
        completion = session.complete(
            "llm",
            messages,
            max_tokens=max_tokens or settings.llm_max_tokens,
            temperature=temperature,
            stop=list(stop),
        )
        text = completion.text
    seconds = time.perf_counter() - started
    summary = session.ledger.summary()
    if as_json:
        echo_json({"text": text, "completion": completion.to_dict(), "usage": summary})
        return
    click.echo(text.strip() if not options else text)
    click.echo("")
    click.echo(_usage_line(summary, seconds))
    click.echo(f"model: {completion.backend} {completion.model} (route: {completion.route})")


@click.command()
@click.option("--json", "as_json", is_flag=True, help="Print the report as JSON.")
@click.option("--no-llm", is_flag=True, help="Do not ask the LLM to answer (no model load).")
@click.option(
    "--store", type=click.Path(file_okay=False), help="Check this store, not the sample graph."
)
@click.option("--endpoint", help="Check this SPARQL endpoint.")
@click.option("--source", "source_name", metavar="NAME", help="Check a source named in kgmw.toml.")
@llm_options
@click.pass_context
def doctor(
    ctx: click.Context,
    as_json: bool,
    no_llm: bool,
    store: str | None,
    endpoint: str | None,
    source_name: str | None,
    llm: LLMArgs,
) -> None:
    """Which LLM, encoder and source are configured, whether each answers, versions, caches."""
    source = SourceArgs(store, endpoint, None, None, as_json, name=source_name)
    settings = source_settings(ctx, source, **llm.overrides())
    checks = run_checks(settings, answer=not no_llm)
    found_versions, cache_paths = versions(), caches(settings)
    report = {
        "checks": [c.to_dict() for c in checks],
        "versions": found_versions,
        "caches": cache_paths,
    }
    failed = [c for c in checks if c.ok is False]
    if as_json:
        echo_json(report)
    else:
        marks = {True: "ok", False: "FAIL", None: "-"}
        print_table(
            ["part", "status", "configured", "result"],
            [[c.part, marks[c.ok], c.detail, c.message] for c in checks],
            whole=(2, 3),  # a cut failure hides what to do about it
        )
        for check in checks:
            for key, value in check.extra.items():
                click.echo(f"{check.part} {key}: {value}")
        click.echo("")
        print_table(["package", "version"], list(found_versions.items()))
        click.echo("")
        print_table(["cache", "location"], list(cache_paths.items()))
    if failed:
        names = ", ".join(c.part for c in failed)
        raise MiddlewareError(f"doctor: {names} did not answer; see the report above")
