"""Service fixtures: the app on a real HTTP server on a free port, in a thread."""

from __future__ import annotations

import os
import threading
from collections.abc import Callable, Iterator
from typing import Any

import pytest
from flask import Flask

from middleware.config import Settings
from middleware.kg.backends.local import LocalStore
from middleware.kg.sample import sample_store
from middleware.llm.local import EmbeddedLLM, bundled_model_path
from middleware.llm.scripted import ScriptedLLM
from middleware.server import create_app
from middleware.server.connections.loopback_server import LoopbackServer
from middleware.server.context import STATE_KEY
from middleware.support.cache_dir import cache_root
from tests.cli_helpers import rok_script


class LiveServer:
    """An app served on 127.0.0.1 at a port the OS picked, by ``kgmw serve``'s
    development server."""

    def __init__(self, app: Flask) -> None:
        self.app = app
        self._server = LoopbackServer("127.0.0.1", 0, app)
        self.url = f"http://127.0.0.1:{self._server.server_port}"
        self._thread = threading.Thread(target=self._server.serve_forever, daemon=True)
        self._thread.start()

    def stop(self) -> None:
        self._server.shutdown()
        self._thread.join(timeout=10)
        self.app.config[STATE_KEY].close()  # its query executors too


@pytest.fixture(scope="session")
def sample_graph(tmp_path_factory: pytest.TempPathFactory) -> LocalStore:
    return sample_store(cache_dir=str(tmp_path_factory.getbasetemp() / "kgmw-cache"))


@pytest.fixture(scope="session")
def embedded_llm(tmp_path_factory: pytest.TempPathFactory) -> EmbeddedLLM:
    """The bundled model, loaded once for the service tests."""
    cache = cache_root(str(tmp_path_factory.getbasetemp() / "kgmw-cache"))
    llm = EmbeddedLLM(model_path=bundled_model_path(cache), cache_dir=cache, context=4096)
    llm.warm_up()
    return llm


def settings(**values: Any) -> Settings:
    """Defaults and ``values`` only; the cache folder stays the test session's own
    (kept chat answers are written there)."""
    isolated = {"cache_dir": os.environ.get("KGMW_CACHE_DIR")}
    return Settings.load(
        config_path=None, env={}, overrides={"progress": False, **isolated, **values}
    )


@pytest.fixture
def serve() -> Iterator[Callable[[Flask], LiveServer]]:
    """Start apps on free ports; every one is stopped after the test."""
    started: list[LiveServer] = []

    def start(app: Flask) -> LiveServer:
        server = LiveServer(app)
        started.append(server)
        return server

    yield start
    for server in started:
        server.stop()


@pytest.fixture
def scripted_server(serve: Callable[[Flask], LiveServer], sample_graph: LocalStore) -> LiveServer:
    """The service over the sample graph with RoK's scripted replies."""
    return serve(create_app(settings(), llm=rok_script(), graphs={"sample": sample_graph}))


def rich_script() -> ScriptedLLM:
    """RoK's replies keeping every fact it is offered: an evidence graph of a dozen nodes."""
    return ScriptedLLM(
        [
            ("Key entities:$", "Titanic; Kate Winslet; James Cameron; Leonardo DiCaprio"),
            ("Useful facts:$", "1, 2, 3, 4, 5, 6, 7, 8"),
            ("Answer:$", "James Cameron"),
        ],
        default="James Cameron",
    )


@pytest.fixture
def rich_server(serve: Callable[[Flask], LiveServer], sample_graph: LocalStore) -> LiveServer:
    """The service over the sample graph with RoK keeping many facts."""
    return serve(create_app(settings(), llm=rich_script(), graphs={"sample": sample_graph}))
