"""Settings of the service: where it listens, who may call it, its limits, and the
state its workers and hosts share."""

from __future__ import annotations

from dataclasses import dataclass

from middleware.config.fields import setting


@dataclass(frozen=True)
class ServerSettings:
    """The service: where it listens, who may call it, and its limits."""

    server_host: str = setting("127.0.0.1", "Address `kgmw serve` listens on.")
    server_port: int = setting(8000, "Port `kgmw serve` listens on.", minimum=0, maximum=65535)
    server_workers: int = setting(
        1,
        "Worker processes of `kgmw serve`: 1 runs the development server, more run gunicorn.",
        minimum=1,
    )
    server_api_keys: str | None = setting(
        None,
        "Comma-separated API keys the service accepts as `Authorization: Bearer KEY`; "
        "unset leaves the service open (bind it to loopback then).",
        secret=True,
    )
    server_max_body: int = setting(
        1_048_576, "Largest request body in bytes (413 past it).", minimum=1024
    )
    server_max_json_depth: int = setting(
        64,
        "Deepest nesting of arrays and objects in a JSON request body (400 past it), "
        "counted before the body is parsed: Python's parser recurses per level.",
        minimum=1,
        maximum=500,
    )
    server_head_timeout: float = setting(
        10.0,
        "Seconds from a connection's accept for its request line and headers to arrive "
        "(then 408, or a plain close if nothing came); the body gets as long again, plus "
        "a second per server_body_rate bytes. No serving thread waits meanwhile.",
        minimum=0.1,
        maximum=3600,
    )
    server_body_rate: int = setting(
        1024, "Least rate (bytes a second) a request body must keep up; 408 below it.", minimum=1
    )
    server_request_timeout: float = setting(
        60.0,
        "Most seconds from a connection's accept until its whole request has arrived (408).",
        minimum=0.1,
        maximum=3600,
    )
    server_send_timeout: float = setting(
        60.0,
        "Seconds a response write may wait on a client that reads nothing; then it is closed.",
        minimum=0.1,
        maximum=3600,
    )
    server_send_buffer_mb: int = setting(
        256,
        "Unsent response bytes one server process holds for clients that read slowly, in "
        "MB; a response that would go past it is dropped and its connection closed.",
        minimum=1,
        maximum=65_536,
    )
    server_rate_limit: int = setting(
        0,
        "Requests one API key (or client address) may send in any rolling minute; 0 turns "
        "the limit off.",
        minimum=0,
    )
    server_auth_failures: int = setting(
        10,
        "Failed authentications per minute one client address may make before it gets "
        "429 (even with a valid key) until the oldest is a minute old; 0 turns the limit off.",
        minimum=0,
    )
    server_refuse_at_connection: bool = setting(
        True,
        "Refuse an address in the /sparql penalty box, or past its failed "
        "authentications, at the connection, before its request is read (every route, "
        "/healthz too). Turn off behind a reverse proxy, where every caller shares the "
        "proxy's address: refusals are then 429s on /sparql (and 429s for failed "
        "authentications) only.",
    )
    server_refused_hold: float = setting(
        5.0,
        "Seconds a connection from a refused address (in the /sparql penalty box, or past "
        "its failed authentications) is held open, unread, before it is closed: a client "
        "that ignores Retry-After waits instead of flooding; 0 closes it at once.",
        minimum=0,
    )
    server_state_url: str | None = setting(
        None,
        "Redis that every worker and host of one service shares (redis://, or rediss:// "
        "for TLS; user and password in the URL; 'env:NAME' reads it from environment "
        "variable NAME): rate limits, failed authentications, the /sparql penalty box "
        "and kept chat answers. Unset keeps them per worker or per host.",
        secret=True,
    )
    server_state_prefix: str = setting(
        "kgmw:",
        "Prefix of every key the service writes in server_state_url's Redis; give each "
        "deployment that shares one Redis its own.",
    )
    server_state_outage: str = setting(
        "refuse",
        "While server_state_url's Redis cannot be reached: 'refuse' answers limited "
        "routes 503 with Retry-After (no caller goes past a shared limit); 'local' serves "
        "them with this worker's own limits until Redis is back. Kept answers are 503 "
        "either way.",
        choices=("refuse", "local"),
    )
    server_state_timeout: float = setting(
        0.5,
        "Seconds one call to server_state_url's Redis may take before Redis counts as unreachable.",
        minimum=0.01,
        maximum=30,
    )
    server_redact_steps: bool = setting(
        False,
        "Leave prompts and raw LLM output out of the steps of answers the service "
        "returns (names, timings and costs stay).",
    )
    server_cors_origins: str | None = setting(
        None,
        "Comma-separated origins allowed to call the service from a browser ('*' for any); "
        "unset sends no CORS headers.",
    )
