"""A real ``redis-server`` (Debian's package) on a free port with its own folder, never
the system service on 6379: skipped when it is not installed, a failure under CI."""

from __future__ import annotations

import os
import shutil
import socket
import subprocess
import time
from pathlib import Path

import pytest

INSTALL = "apt-get install redis-server"


def redis_binary() -> str:
    found = shutil.which("redis-server")
    if not found:
        message = f"redis-server is not installed ({INSTALL})"
        if os.environ.get("CI"):
            pytest.fail(message)
        pytest.skip(message)
    return found


def _free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


class RedisServer:
    """One ``redis-server`` in ``folder``; ``stop`` and ``start`` again keep its port
    (an outage and a recovery), not its data (nothing is saved)."""

    def __init__(self, folder: Path, *, password: str | None = None, tls: bool = False) -> None:
        self.folder = folder
        self.password = password
        self.tls = tls
        self.port = _free_port()
        self.process: subprocess.Popen[bytes] | None = None
        if tls:
            self._certificate()

    @property
    def url(self) -> str:
        scheme = "rediss" if self.tls else "redis"
        secret = f":{self.password}@" if self.password else ""
        query = f"?ssl_ca_certs={self.folder / 'cert.pem'}" if self.tls else ""
        return f"{scheme}://{secret}127.0.0.1:{self.port}/0{query}"

    def start(self) -> None:
        args = [redis_binary(), "--bind", "127.0.0.1", "--save", "", "--appendonly", "no"]
        args += ["--dir", str(self.folder), "--daemonize", "no", "--loglevel", "warning"]
        if self.password:
            args += ["--requirepass", self.password]
        if self.tls:
            cert, key = self.folder / "cert.pem", self.folder / "key.pem"
            args += ["--port", "0", "--tls-port", str(self.port), "--tls-auth-clients", "no"]
            args += ["--tls-cert-file", str(cert), "--tls-key-file", str(key)]
            args += ["--tls-ca-cert-file", str(cert)]
        else:
            args += ["--port", str(self.port)]
        self.process = subprocess.Popen(
            args, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, cwd=self.folder
        )
        deadline = time.monotonic() + 20
        while time.monotonic() < deadline:
            if self.process.poll() is not None:
                error = self.process.stderr.read().decode() if self.process.stderr else ""
                raise RuntimeError(f"redis-server did not start: {error}")
            try:
                socket.create_connection(("127.0.0.1", self.port), timeout=0.5).close()
                return
            except OSError:
                time.sleep(0.05)
        raise RuntimeError("redis-server did not open its port in 20 s")

    def stop(self) -> None:
        if self.process is not None and self.process.poll() is None:
            self.process.terminate()
            self.process.wait(timeout=10)
        self.process = None

    def _certificate(self) -> None:
        openssl = shutil.which("openssl")
        if not openssl:
            message = "openssl is not installed (apt-get install openssl)"
            if os.environ.get("CI"):
                pytest.fail(message)
            pytest.skip(message)
        subprocess.run(
            [
                openssl, "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-days", "1",
                "-keyout", str(self.folder / "key.pem"), "-out", str(self.folder / "cert.pem"),
                "-subj", "/CN=127.0.0.1", "-addext", "subjectAltName=IP:127.0.0.1",
            ],
            check=True,
            capture_output=True,
        )  # fmt: skip
