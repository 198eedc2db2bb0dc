"""``kgmw ask``'s progress: the step being run, one line per event, on standard error.

Shown when standard error is a terminal (``--progress`` forces it, ``--no-progress``
silences it), so pipes and logs get only the answer.
"""

from __future__ import annotations

import sys
from typing import TextIO

from middleware.methods.progress import StepEvent, StepListener


class StepPrinter:
    """Writes each ``StepEvent`` as ``kgmw: link ...``, ``kgmw: answer: LLM call 3 of at
    most 12``, ``kgmw: link done (0.12 s, 0 LLM calls)``."""

    def __init__(self, stream: TextIO) -> None:
        self.stream = stream

    def __call__(self, event: StepEvent) -> None:
        self.stream.write(f"kgmw: {event.describe()}\n")
        self.stream.flush()


def step_printer(show: bool | None, stream: TextIO | None = None) -> StepListener | None:
    """A printer on ``stream`` (default: standard error) when ``show`` is true, or when
    it is None and the stream is a terminal; else None."""
    target = stream or sys.stderr
    wanted = target.isatty() if show is None else show
    return StepPrinter(target) if wanted else None
