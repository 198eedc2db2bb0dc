"""Executor processes, forked from a fork server, that never run the caller's main script.

A fork server is one single-threaded process that has imported the executor's modules
once; each executor is forked from it (milliseconds, not the second a fresh
interpreter takes), and never from the caller's threaded process. Python's own
forkserver start also runs the caller's ``__main__`` again in every child, so that
objects defined there can be unpickled: a library user's script without an
``if __name__ == "__main__"`` guard would start executors from its executors, and a
script that imports heavy libraries would load them into each one, under its memory
cap. An executor needs nothing from ``__main__`` (its store opener and tasks are
functions of this package), so ``ExecutorProcess`` leaves it out.
"""

from __future__ import annotations

import multiprocessing
import threading
from multiprocessing import popen_forkserver, spawn
from multiprocessing.context import ForkServerProcess
from multiprocessing.process import BaseProcess
from typing import Any

CONTEXT = multiprocessing.get_context("forkserver")
CONTEXT.set_forkserver_preload(
    [
        "middleware.kg.backends.local",
        "middleware.kg.executors.process",
        "middleware.kg.executors.tasks",
        "middleware.serialize.written_results",
    ]
)
_MAIN_KEYS = ("init_main_from_name", "init_main_from_path")
_launching = threading.Lock()  # the preparation data is swapped for one launch at a time


class _Popen(popen_forkserver.Popen):
    def _launch(self, process_obj: BaseProcess) -> None:
        plain = spawn.get_preparation_data

        def without_main(name: str) -> dict[str, Any]:
            data: dict[str, Any] = plain(name)
            for key in _MAIN_KEYS:
                data.pop(key, None)
            return data

        with _launching:
            spawn.get_preparation_data = without_main
            try:
                super()._launch(process_obj)  # type: ignore[misc]
            finally:
                spawn.get_preparation_data = plain


class ExecutorProcess(ForkServerProcess):
    """A fork server's child that starts without re-running ``__main__``."""

    @staticmethod
    def _Popen(process_obj: BaseProcess) -> _Popen:
        return _Popen(process_obj)
