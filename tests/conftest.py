"""Shared fixtures: the network is blocked, real SPARQL servers run on free local ports."""

from __future__ import annotations

import os
import shutil
import socket
import subprocess
import sys
import time
import urllib.request
from collections.abc import Iterator
from pathlib import Path

import pytest

from middleware.testing.graphs import films_path
from tests.redis_server import RedisServer
from tests.virtuoso_server import VirtuosoServer, start_virtuoso, write_hub
from tests.wdqs_replay import WdqsReplay, start_replay

DATA = Path(__file__).parent / "data"
WIKIDATA_MINI = DATA / "wikidata" / "mini.ttl"
FILMS = films_path()
_LOCAL_HOSTS = {"127.0.0.1", "::1", "localhost", "0.0.0.0", ""}
_real_connect = socket.socket.connect


def pytest_addoption(parser: pytest.Parser) -> None:
    parser.addoption(
        "--live", action="store_true", help="run tests that reach public SPARQL endpoints"
    )


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    if config.getoption("--live"):
        return
    skip = pytest.mark.skip(reason="reaches a public endpoint: run with --live")
    for item in items:
        if "live" in item.keywords:
            item.add_marker(skip)


@pytest.fixture(autouse=True)
def _block_network(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> None:
    """Only loopback connections are allowed unless a test is marked live."""
    if "live" in request.keywords:
        return

    def guarded(sock: socket.socket, address: object) -> None:
        host = address[0] if isinstance(address, tuple) else ""
        if (
            isinstance(address, tuple)
            and host not in _LOCAL_HOSTS
            and not str(host).startswith("127.")
        ):
            raise OSError(f"network access blocked in tests: {address!r}")
        _real_connect(sock, address)  # type: ignore[arg-type]

    monkeypatch.setattr(socket.socket, "connect", guarded)


@pytest.fixture(autouse=True)
def _isolated_cache(
    tmp_path_factory: pytest.TempPathFactory, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Keep every test's caches and config out of the user's home."""
    cache = os.environ.get("KGMW_TEST_CACHE") or str(tmp_path_factory.getbasetemp() / "kgmw-cache")
    monkeypatch.setenv("KGMW_CACHE_DIR", cache)
    for name in list(os.environ):
        if name.startswith("KGMW_") and name not in ("KGMW_CACHE_DIR",):
            monkeypatch.delenv(name, raising=False)


@pytest.fixture(autouse=True)
def _confidence_by_rule(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> None:
    """Method logic is tested against the fixed confidence rule, not the shipped fitted
    models (a refit must not move unit tests); ``@pytest.mark.shipped_calibration``
    keeps the shipped one."""
    from middleware.methods import calibration

    calibration._read.cache_clear()
    if request.node.get_closest_marker("shipped_calibration") is None:
        monkeypatch.setattr(calibration, "SHIPPED", Path("/nonexistent/calibration.json"))
    request.addfinalizer(calibration._read.cache_clear)


def free_port() -> int:
    """A port the OS hands out for port 0, released for the server to take."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def oxigraph_binary() -> str:
    found = shutil.which("oxigraph") or str(Path(sys.executable).parent / "oxigraph")
    if not Path(found).exists():
        pytest.fail("the oxigraph server is missing: pip install oxigraph")
    return found


def wait_until_up(url: str, process: subprocess.Popen[bytes], seconds: float = 20.0) -> bool:
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        if process.poll() is not None:
            return False
        try:
            with urllib.request.urlopen(url, timeout=1):
                return True
        except OSError:
            time.sleep(0.1)
    return False


def start_oxigraph(data: Path, location: Path) -> tuple[str, subprocess.Popen[bytes]]:
    """A read-only Oxigraph server over ``data`` (loaded into ``location``) on a free
    port; its query URL and process."""
    binary = oxigraph_binary()
    subprocess.run(
        [binary, "load", "--location", str(location), "--file", str(data)],
        check=True,
        capture_output=True,
    )
    for _ in range(5):
        port = free_port()
        process = subprocess.Popen(
            [binary, "serve-read-only", "--location", str(location), "--bind", f"127.0.0.1:{port}"],
            stdout=subprocess.DEVNULL,
            stderr=subprocess.PIPE,
        )
        base = f"http://127.0.0.1:{port}"
        if wait_until_up(f"{base}/query?query=ASK%7B%7D", process):
            return f"{base}/query", process
        process.kill()
        process.wait()
    pytest.fail("could not start the oxigraph server")


@pytest.fixture(scope="session")
def oxigraph_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """A real Oxigraph SPARQL server loaded with the films graph (middleware/data/films.ttl); yields its query URL."""
    url, process = start_oxigraph(FILMS, tmp_path_factory.mktemp("oxigraph"))
    try:
        yield url
    finally:
        process.terminate()
        process.wait(timeout=10)


@pytest.fixture(scope="session")
def sample_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """A real Oxigraph server holding the bundled sample graph; yields its query URL."""
    import pyoxigraph

    from middleware.kg.sample import sample_store, sample_store_dir

    folder = tmp_path_factory.mktemp("sample-server")
    sample_store()  # loads it into the cache on first use
    dump = folder / "sample.nq"
    pyoxigraph.Store.read_only(str(sample_store_dir() / "current")).dump(
        str(dump), pyoxigraph.RdfFormat.N_QUADS
    )
    url, process = start_oxigraph(dump, folder / "store")
    try:
        yield url
    finally:
        process.terminate()
        process.wait(timeout=10)


@pytest.fixture(scope="session")
def virtuoso_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[VirtuosoServer]:
    """A real Virtuoso server holding the films graph and a hub with more neighbours than
    its row cap (tests/virtuoso_server.py); skipped when Virtuoso is not installed, a
    failure under CI."""
    folder = tmp_path_factory.mktemp("virtuoso")
    server = start_virtuoso([FILMS, write_hub(folder / "hub.nt")], folder, free_port)
    try:
        yield server
    finally:
        server.stop()


@pytest.fixture(scope="session")
def _wdqs_server() -> Iterator[WdqsReplay]:
    state, server = start_replay(WIKIDATA_MINI)
    try:
        yield state
    finally:
        server.shutdown()
        server.server_close()


@pytest.fixture
def wdqs(_wdqs_server: WdqsReplay) -> Iterator[WdqsReplay]:
    """A WDQS replay server (tests/wdqs_replay.py) over tests/data/wikidata/mini.ttl on a
    free port, its throttle, time limit and seen agents reset for each test."""
    _wdqs_server.reset()
    yield _wdqs_server
    _wdqs_server.reset()


@pytest.fixture(scope="session")
def wdqs_films() -> Iterator[str]:
    """A WDQS replay server over the films graph (for the conformance suites); its URL."""
    state, server = start_replay(FILMS)
    try:
        yield state.url
    finally:
        server.shutdown()
        server.server_close()


@pytest.fixture
def redis_server(tmp_path: Path) -> Iterator[RedisServer]:
    """A fresh ``redis-server`` of this test alone (tests/redis_server.py); skipped when
    it is not installed, a failure under CI."""
    server = RedisServer(tmp_path)
    server.start()
    try:
        yield server
    finally:
        server.stop()
