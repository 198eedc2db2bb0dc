"""Waiting in tests for what has to have happened, instead of sleeping a fixed time.

A fixed sleep ("the thread is waiting by now") holds on a quiet machine and fails on a
busy one; ``until`` polls the condition itself. Its ``seconds`` only stops a test that
would otherwise hang, so it is generous: the conditions waited for take milliseconds.
"""

from __future__ import annotations

import time
from collections.abc import Callable

# Seconds: far above the milliseconds a condition takes, and more than ten times the
# slowest single step seen on a busy 2-core machine (a gunicorn worker's first query,
# which starts its executors: about 4 s).
PATIENCE = 60.0


def until(condition: Callable[[], object], seconds: float = PATIENCE, step: float = 0.01) -> bool:
    """Whether ``condition()`` came true within ``seconds`` (checked every ``step``)."""
    deadline = time.monotonic() + seconds
    while True:
        if condition():
            return True
        if time.monotonic() >= deadline:
            return False
        time.sleep(step)
