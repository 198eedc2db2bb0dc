"""LLM fixtures: the embedded model, and llama-cpp-python's own OpenAI-compatible server."""

from __future__ import annotations

import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from middleware.llm.local import EmbeddedLLM, bundled_model_path
from middleware.support.cache_dir import cache_root
from tests.conftest import free_port, wait_until_up


@pytest.fixture(scope="session")
def model_file(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The bundled GGUF, assembled once per test session."""
    return bundled_model_path(cache_root(str(tmp_path_factory.getbasetemp() / "kgmw-cache")))


@pytest.fixture(scope="session")
def embedded(model_file: Path) -> EmbeddedLLM:
    llm = EmbeddedLLM(model_path=model_file, cache_dir=model_file.parent, context=2048)
    llm.warm_up()
    return llm


# llama_cpp.server loads the model itself: with weight repacking off where it crashes
# (AVX-512 machines), as the embedded backend loads it.
LAUNCH_SERVER = (
    "import runpy, sys\n"
    "from middleware.llm.local import safe_weight_repacking\n"
    "sys.argv[0] = 'llama_cpp.server'\n"
    "with safe_weight_repacking():\n"
    "    runpy.run_module('llama_cpp.server', run_name='__main__', alter_sys=True)\n"
)


def start_llama_server(model_file: Path) -> tuple[str, subprocess.Popen[bytes]]:
    """``python -m llama_cpp.server`` on a free port; returns its /v1 URL and process."""
    for _ in range(3):
        port = free_port()
        process = subprocess.Popen(
            [
                sys.executable,
                "-c",
                LAUNCH_SERVER,
                "--model",
                str(model_file),
                "--host",
                "127.0.0.1",
                "--port",
                str(port),
                "--n_ctx",
                "2048",
                "--verbose",
                "false",
            ],
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
        base = f"http://127.0.0.1:{port}/v1"
        if wait_until_up(f"{base}/models", process, seconds=90):
            return base, process
        process.kill()
        process.wait()
    pytest.fail("could not start llama_cpp.server")


@pytest.fixture(scope="session")
def llama_server(model_file: Path) -> Iterator[str]:
    """A real OpenAI-compatible server serving the embedded model; yields its base URL."""
    base, process = start_llama_server(model_file)
    try:
        yield base
    finally:
        process.terminate()
        process.wait(timeout=20)
