"""The only way out of an executor's network namespace: relays to a checking forwarder.

With ``sparql_service_allowlist`` set, an executor still has no route anywhere. For each
allowed endpoint it listens inside its own namespace on the address the engine will
connect to (the endpoint's IPv4 literal, or a private loopback address that the
namespace's own ``/etc/hosts`` gives its host name), and relays each connection over a
Unix socket to the ``Forwarder`` in the service. The forwarder, outside, decides:

- the (host, port) the relay names must be an allowed endpoint's;
- for ``http`` endpoints, the request line's target must be the endpoint's path;
- the host is resolved now, and an address that is not public (loopback, private,
  link-local, ...) is used only when the allowlist named it or it was the name's
  address when the forwarder started, so a name that re-resolves elsewhere later
  (DNS rebinding) reaches nothing new.

The query text decides nothing here: a connection is let through or not by where it
goes.

>>> plan = Target.parse("http://127.0.0.1:9911/allowed")
>>> plan.host, plan.port, plan.paths
('127.0.0.1', 9911, ('/allowed',))
"""

from __future__ import annotations

import contextlib
import ipaddress
import os
import shutil
import socket
import tempfile
import threading
from collections.abc import Sequence
from dataclasses import dataclass, field
from urllib.parse import urlsplit

from middleware.errors import ConfigError

HEADER_LIMIT = 512  # bytes of the relay's "host port" line
LINE_LIMIT = 8192  # bytes of an http request line
CONNECT_TIMEOUT = 10.0
_CHUNK = 65536


@dataclass(frozen=True)
class Target:
    """An allowed endpoint's host and port, and the request targets allowed there."""

    scheme: str
    host: str
    port: int
    paths: tuple[str, ...] = field(default=())

    @classmethod
    def parse(cls, url: str) -> Target:
        parts = urlsplit(url.strip())
        if parts.scheme not in ("http", "https") or not parts.hostname:
            raise ConfigError(
                f"sparql_service_allowlist entry {url!r} is not an http(s) URL",
                hint="list endpoint URLs such as https://query.example.org/sparql",
            )
        try:
            port = parts.port or (443 if parts.scheme == "https" else 80)
        except ValueError as err:
            raise ConfigError(f"sparql_service_allowlist entry {url!r}: {err}") from err
        host = parts.hostname.lower()
        with contextlib.suppress(ValueError):
            if ipaddress.ip_address(host).version == 6:
                raise ConfigError(
                    f"sparql_service_allowlist entry {url!r} names an IPv6 address",
                    hint="name the endpoint by a host name (it may resolve to IPv6)",
                )
        target = (parts.path or "/") + (f"?{parts.query}" if parts.query else "")
        return cls(parts.scheme, host, port, (target,))

    @property
    def literal(self) -> bool:
        """Whether the host is an IPv4 address, not a name."""
        try:
            ipaddress.IPv4Address(self.host)
        except ValueError:
            return False
        return True


def targets_of(allowlist: Sequence[str]) -> tuple[Target, ...]:
    """The allowlist's endpoints merged by (scheme, host, port)."""
    merged: dict[tuple[str, str, int], Target] = {}
    for url in allowlist:
        target = Target.parse(url)
        key = (target.scheme, target.host, target.port)
        known = merged.get(key)
        paths = (known.paths if known else ()) + target.paths
        merged[key] = Target(target.scheme, target.host, target.port, paths)
    return tuple(merged.values())


@dataclass(frozen=True)
class RelayPlan:
    """Where an executor listens for each target, and the hosts file that sends the
    targets' names there; handed to the executor process (picklable)."""

    forwarder: str  # the Unix socket path of the service's forwarder
    listens: tuple[tuple[str, int, str], ...]  # (address, port, "host port") per target
    hosts: str | None  # /etc/hosts text for named targets; None when all are literals


def plan_relays(targets: Sequence[Target], forwarder: str) -> RelayPlan:
    """Each literal target is listened for on its own address, each named one on a
    loopback address of its own (127.77.x.y), which the hosts text maps its name to."""
    listens: list[tuple[str, int, str]] = []
    names: dict[str, str] = {}
    for target in targets:
        if target.literal:
            address = target.host
        else:
            if target.host not in names:
                n = len(names) + 1
                names[target.host] = f"127.77.{n // 250}.{n % 250 + 1}"
            address = names[target.host]
        listens.append((address, target.port, f"{target.host} {target.port}"))
    hosts = None
    if names:
        lines = ["127.0.0.1 localhost", *(f"{a} {h}" for h, a in names.items())]
        hosts = "\n".join(lines) + "\n"
    return RelayPlan(forwarder, tuple(listens), hosts)


class Forwarder:
    """The service's end: takes relayed connections and lets through only allowed ones."""

    def __init__(self, targets: Sequence[Target]) -> None:
        self.targets = {(t.host, t.port): t for t in targets}
        self.pinned = {t.host: _addresses(t.host, t.port) for t in targets}
        self.forwarded = 0  # connections let through
        self.refused = 0  # connections turned away
        self._folder = tempfile.mkdtemp(prefix="kgmw-outlets-")
        os.chmod(self._folder, 0o700)
        self.path = os.path.join(self._folder, "forwarder.sock")
        self._listener = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        self._listener.bind(self.path)
        self._listener.listen(64)
        self._closed = False
        threading.Thread(target=self._accept, daemon=True, name="kgmw-outlets").start()

    def close(self) -> None:
        self._closed = True
        with contextlib.suppress(OSError):
            self._listener.close()
        shutil.rmtree(self._folder, ignore_errors=True)

    def _accept(self) -> None:
        while not self._closed:
            try:
                relay, _ = self._listener.accept()
            except OSError:
                return
            threading.Thread(target=self._forward, args=(relay,), daemon=True).start()

    def _forward(self, relay: socket.socket) -> None:
        upstream = None
        try:
            relay.settimeout(CONNECT_TIMEOUT)
            header, rest = _read_line(relay, b"", HEADER_LIMIT)
            host, _, port = header.decode("ascii", "replace").strip().partition(" ")
            target = self.targets.get((host, int(port) if port.isdigit() else -1))
            if target is None:
                raise PermissionError(f"{header!r} is not an allowed endpoint")
            if target.scheme == "http":
                line, after = _read_line(relay, rest, LINE_LIMIT)
                _check_request_line(line, target)
                rest = line + b"\n" + after
            upstream = self._connect(target)
            relay.settimeout(None)
            upstream.sendall(rest)
            self.forwarded += 1
            _pump_both(relay, upstream)
            with contextlib.suppress(OSError):  # the executor is done (or was killed):
                upstream.shutdown(socket.SHUT_RDWR)  # so is the endpoint's answer
        except (OSError, ValueError):
            self.refused += 1
        finally:
            for sock in (relay, upstream):
                if sock is not None:
                    with contextlib.suppress(OSError):
                        sock.close()

    def _connect(self, target: Target) -> socket.socket:
        pinned = self.pinned.get(target.host, set())
        for address in _addresses(target.host, target.port) or pinned:
            ip = ipaddress.ip_address(address)
            if address not in pinned and not ip.is_global:
                continue  # a name that now resolves inwards: not where it pointed at start
            family = socket.AF_INET6 if ip.version == 6 else socket.AF_INET
            sock = socket.socket(family, socket.SOCK_STREAM)
            try:
                sock.settimeout(CONNECT_TIMEOUT)
                sock.connect((address, target.port))
            except OSError:
                sock.close()
                continue
            sock.settimeout(None)
            return sock
        raise PermissionError(f"no allowed address of {target.host} answered")


def _addresses(host: str, port: int) -> set[str]:
    try:
        found = socket.getaddrinfo(host, port, type=socket.SOCK_STREAM)
    except OSError:
        return set()
    return {str(info[4][0]) for info in found}


def _read_line(sock: socket.socket, buffered: bytes, limit: int) -> tuple[bytes, bytes]:
    """The bytes up to the first line break (read as needed, at most ``limit``) and
    everything after it (the line's break included in neither)."""
    data = buffered
    while b"\n" not in data:
        if len(data) > limit:
            raise ValueError("line too long")
        chunk = sock.recv(4096)
        if not chunk:
            raise ValueError("closed before a whole line")
        data += chunk
    line, _, after = data.partition(b"\n")
    return line, after if after else b""


def _check_request_line(line: bytes, target: Target) -> None:
    parts = line.decode("latin-1").strip().split(" ")
    if len(parts) != 3 or parts[1] not in target.paths:
        raise PermissionError(f"request {line[:100]!r} is not for an allowed endpoint")


def _pump_both(a: socket.socket, b: socket.socket) -> None:
    """Copy bytes both ways; back once ``a`` has nothing more to send (the other way
    ends when ``b`` closes, or when the caller closes ``b``)."""
    threading.Thread(target=_pump, args=(b, a), daemon=True).start()
    _pump(a, b)


def _pump(source: socket.socket, sink: socket.socket) -> None:
    try:
        while chunk := source.recv(_CHUNK):
            sink.sendall(chunk)
    except OSError:
        pass
    finally:
        with contextlib.suppress(OSError):
            sink.shutdown(socket.SHUT_WR)


def open_relays(plan: RelayPlan) -> None:
    """In the executor, inside its namespace: listen where the plan says and relay every
    connection to the forwarder, prefixed with its "host port" line."""
    for address, port, name in plan.listens:
        listener = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        listener.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        listener.bind((address, port))
        listener.listen(16)
        threading.Thread(
            target=_relay_loop, args=(listener, plan.forwarder, name), daemon=True
        ).start()


def _relay_loop(listener: socket.socket, forwarder: str, name: str) -> None:
    while True:
        try:
            engine, _ = listener.accept()
        except OSError:
            return
        threading.Thread(target=_relay, args=(engine, forwarder, name), daemon=True).start()


def _relay(engine: socket.socket, forwarder: str, name: str) -> None:
    out = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    try:
        out.connect(forwarder)
        out.sendall(f"{name}\n".encode("ascii"))
        _pump_both(engine, out)
    except OSError:
        pass
    finally:
        for sock in (engine, out):
            with contextlib.suppress(OSError):
                sock.close()
