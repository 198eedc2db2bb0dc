"""An answer worked out in a thread, so a stream can send keep-alives and step events
while it waits.

>>> from middleware.methods.answer import Answer
>>> worker = AnswerWorker(lambda listener: Answer("q", "Paris", "io"))
>>> item = worker.next(5)
>>> isinstance(item, Outcome) and item.answer is not None and item.answer.answer
'Paris'
"""

from __future__ import annotations

import queue
import threading
from collections.abc import Callable
from dataclasses import dataclass

from middleware.methods.answer import Answer
from middleware.methods.progress import StepEvent, StepListener


@dataclass(frozen=True)
class Outcome:
    """How the job ended: its answer, or what it raised."""

    answer: Answer | None
    failure: BaseException | None


class AnswerWorker:
    """Runs ``job(listener)`` in a daemon thread; ``next`` hands out the step events the
    listener heard, then the ``Outcome``, in order."""

    def __init__(self, job: Callable[[StepListener], Answer]) -> None:
        self._items: queue.Queue[StepEvent | Outcome] = queue.Queue()

        def work() -> None:
            try:
                self._items.put(Outcome(job(self._items.put), None))
            except BaseException as err:  # handed to the stream, which reports it
                self._items.put(Outcome(None, err))

        threading.Thread(target=work, name="kgmw-answer", daemon=True).start()

    def next(self, seconds: float) -> StepEvent | Outcome | None:
        """The next event or the outcome; None when nothing came within ``seconds``."""
        try:
            return self._items.get(timeout=seconds)
        except queue.Empty:
            return None
