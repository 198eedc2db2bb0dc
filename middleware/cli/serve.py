"""``kgmw serve``: run the Flask service, on the development server or under gunicorn."""

from __future__ import annotations

import ipaddress
import os
import shutil
import tempfile
from pathlib import Path
from typing import Any

import click

from middleware.cli.support import LLMArgs, llm_options, settings_for
from middleware.config import Settings
from middleware.kg.backends.endpoint_auth import ENV_PREFIX
from middleware.kg.executors.probe import isolation_line
from middleware.llm.factory import backend_name
from middleware.server.app import create_app
from middleware.server.connections.address_gate import AddressGate
from middleware.server.connections.arrival import Limits
from middleware.server.connections.tarpit import Tarpit
from middleware.server.metrics import MULTIPROC_ENV, mark_process_dead, use_multiprocess_dir
from middleware.server.shared.redis_state import SharedRedis, describe

GUNICORN_TIMEOUT = 300  # seconds a worker may stay silent: an answer with a slow LLM


@click.command("serve")
@click.option("--host", help="Address to listen on (default: setting server_host, 127.0.0.1).")
@click.option(
    "--port", type=click.IntRange(0, 65535), help="Port (default: setting server_port, 8000)."
)
@click.option(
    "--workers",
    type=click.IntRange(min=1),
    help="Worker processes: 1 runs the development server, more run gunicorn (default: setting server_workers).",
)
@click.option(
    "--store",
    type=click.Path(file_okay=False),
    help="Local store directory for the default source.",
)
@click.option("--endpoint", help="SPARQL endpoint URL for the default source.")
@click.option("--profile", help="Profile of the default source.")
@llm_options
@click.pass_context
def serve(
    ctx: click.Context,
    host: str | None,
    port: int | None,
    workers: int | None,
    store: str | None,
    endpoint: str | None,
    profile: str | None,
    llm: LLMArgs,
) -> None:
    """Serve /v1/answer, /v1/chat/completions, /sparql and the question page."""
    settings = settings_for(
        ctx,
        server_host=host,
        server_port=port,
        server_workers=workers,
        store=store,
        endpoint=endpoint,
        profile=profile,
        **llm.overrides(),
    )
    shared = SharedRedis.from_settings(settings)  # a bad URL fails here, before any worker
    if shared is not None:
        shared.close()
    _announce(settings)
    if _uses_gunicorn(settings):
        _run_gunicorn(settings)
    else:
        _run_development_server(settings)


def _announce(settings: Settings) -> None:
    keys = "on" if settings.server_api_keys or settings.key_grants else "off"
    sources = ", ".join(["default", *settings.source_names])
    click.echo(
        f"kgmw: serving http://{settings.server_host}:{settings.server_port}/ with "
        f"{settings.server_workers} worker(s) "
        f"({'gunicorn' if _uses_gunicorn(settings) else 'development server'}); sources: {sources}; LLM: {backend_name(settings)}; "
        f"API keys: {keys}",
        err=True,
    )
    isolated, line = isolation_line()
    click.echo(f"kgmw: {line}" if isolated else f"kgmw: warning: {line}", err=True)
    shared = state_line(settings)
    if shared:
        click.echo(f"kgmw: {shared}", err=True)
    if keys == "off" and not loopback(settings.server_host):
        click.echo(
            "kgmw: warning: listening beyond this machine without API keys; "
            "set KGMW_SERVER_API_KEYS",
            err=True,
        )


def state_line(settings: Settings) -> str | None:
    """One line on where limits and kept answers live, when it matters: shared in
    Redis, or per worker under gunicorn without it."""
    if settings.server_state_url:
        where = (
            f"the Redis named by {settings.server_state_url}"
            if settings.server_state_url.startswith(ENV_PREFIX)
            else describe(settings.server_state_url)
        )
        return (
            f"shared state in {where} (prefix {settings.server_state_prefix!r}): rate "
            "limits, failed authentications, the /sparql penalty box and kept answers; "
            f"while it is away: {settings.server_state_outage}"
        )
    if settings.server_workers > 1:
        return (
            f"rate limits, failed-authentication counts and /sparql strikes are per worker "
            f"({settings.server_workers} workers: a caller gets up to "
            f"{settings.server_workers}x each limit); refusals and kept answers are per "
            "host; set server_state_url to share them"
        )
    return None


def _uses_gunicorn(settings: Settings) -> bool:
    """Several workers, or any address beyond this machine: the production server
    (worker timeouts, request limits); the development server only on loopback."""
    return settings.server_workers > 1 or not loopback(settings.server_host)


def loopback(host: str) -> bool:
    """Whether ``host`` is this machine only (``localhost`` or a loopback address)."""
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


def _run_development_server(settings: Settings) -> None:
    from middleware.server.connections.loopback_server import LoopbackServer

    gate = AddressGate()
    server = LoopbackServer(
        settings.server_host,
        settings.server_port,
        create_app(settings, gate=gate),
        gate=gate if settings.server_refuse_at_connection else None,  # else 429s in the app
        pit=Tarpit(settings.server_refused_hold),
        limits=Limits.of(settings),
    )
    try:
        server.serve_forever()
    except KeyboardInterrupt:
        pass
    finally:
        server.server_close()


def _run_gunicorn(settings: Settings) -> None:
    from gunicorn.app.base import BaseApplication

    from middleware.server.connections.gunicorn_workers import use_gate, use_limits

    gate = AddressGate()  # made before the workers fork: one table for all of them
    use_gate(
        gate if settings.server_refuse_at_connection else None, Tarpit(settings.server_refused_hold)
    )
    use_limits(Limits.of(settings))

    chosen = os.environ.get(MULTIPROC_ENV)
    metrics_dir = Path(chosen) if chosen else Path(tempfile.mkdtemp(prefix="kgmw-metrics-"))
    use_multiprocess_dir(metrics_dir)  # /metrics sums every worker's figures

    class _Service(BaseApplication):  # type: ignore[misc]
        def load_config(self) -> None:
            options: dict[str, Any] = {
                "bind": _bind(settings.server_host, settings.server_port),
                "workers": settings.server_workers,
                "worker_class": "middleware.server.connections.gunicorn_workers.AcceptingThreadWorker",
                "threads": 4,  # each accepts its own connections, one request each
                "timeout": GUNICORN_TIMEOUT,
                "graceful_timeout": 30,
                "limit_request_line": 8190,
                "limit_request_fields": 100,
                "sendfile": False,  # writes, bounded by server_send_timeout
                # no control socket: one path per user, shared by every service it runs
                "control_socket_disable": True,
                "accesslog": "-",
                "child_exit": _child_exit,
            }
            for key, value in options.items():
                self.cfg.set(key, value)

        def load(self) -> Any:
            return create_app(settings, gate=gate)

    master = os.getpid()
    try:
        _Service().run()
    finally:
        # a worker leaves through this frame too (it is a fork of the master's stack)
        if not chosen and os.getpid() == master:
            shutil.rmtree(metrics_dir, ignore_errors=True)


def _bind(host: str, port: int) -> str:
    """gunicorn's bind address: an IPv6 host in brackets (``[::]:8000``, not ``:::8000``).

    >>> _bind("::", 8000), _bind("[::1]", 8000), _bind("0.0.0.0", 8000)
    ('[::]:8000', '[::1]:8000', '0.0.0.0:8000')
    """
    if ":" in host and not host.startswith("["):
        host = f"[{host}]"
    return f"{host}:{port}"


def _child_exit(server: Any, worker: Any) -> None:
    """gunicorn's hook in the master when a worker ended: its live-only figures go."""
    mark_process_dead(worker.pid)
