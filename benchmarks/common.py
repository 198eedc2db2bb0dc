"""Helpers shared by the benchmarks: timing, percentiles, data paths, result files."""

from __future__ import annotations

import json
import os
import platform
import socket
import statistics
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
DATASETS = ROOT.parent / "shared" / "datasets"
RESULTS = Path(__file__).resolve().parent / "results"


def percentile(values: list[float], q: float) -> float:
    ordered = sorted(values)
    if not ordered:
        return float("nan")
    index = min(len(ordered) - 1, max(0, round(q / 100 * (len(ordered) - 1))))
    return ordered[index]


def latency(fn: Callable[[], Any], repeats: int = 1) -> float:
    """Milliseconds for one call (best of ``repeats``)."""
    best = float("inf")
    for _ in range(repeats):
        start = time.perf_counter()
        fn()
        best = min(best, (time.perf_counter() - start) * 1000)
    return best


def summary(ms: list[float]) -> dict[str, float]:
    return {
        "n": len(ms),
        "p50_ms": round(percentile(ms, 50), 3),
        "p95_ms": round(percentile(ms, 95), 3),
        "mean_ms": round(statistics.fmean(ms), 3) if ms else float("nan"),
    }


def save(name: str, data: dict[str, Any]) -> Path:
    RESULTS.mkdir(exist_ok=True)
    data = {"machine": f"{platform.machine()} {platform.python_version()}", **data}
    path = RESULTS / f"{name}.json"
    path.write_text(json.dumps(data, indent=2))
    return path


def free_port() -> int:
    """A TCP port on 127.0.0.1 that nothing listens on now."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def start_kgmw_serve(
    store: str, port: int, *, workers: int = 1, env: dict[str, str] | None = None
) -> subprocess.Popen[bytes]:
    """``kgmw serve --store STORE`` in its own process (``workers`` > 1: gunicorn), with
    ``env`` added to this process's environment; its output is dropped."""
    kgmw = Path(sys.executable).parent / "kgmw"
    command = [str(kgmw), "serve", "--store", store, "--port", str(port)]
    return subprocess.Popen(
        [*command, "--workers", str(workers)],
        env={**os.environ, **(env or {})},
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
