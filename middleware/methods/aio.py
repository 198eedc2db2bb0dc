"""Questions awaited from asyncio: ``await aask(method, question)`` and ``AsyncMethod``.

The methods are synchronous code (graph queries, then LLM calls, step by step), so a
question runs on a worker thread while the event loop stays free; the loop's other
tasks, and other questions, go on while it waits for its LLM. ``AsyncMethod`` keeps its
own pool of ``concurrency`` threads (asyncio's default executor has only a few, so
questions would queue behind each other): at most that many questions run at once, and
the rest wait their turn as coroutines, holding no thread.

Cancelling the awaiting task (``asyncio.wait_for``, a client that went away) sets the
budget's ``cancelled`` event: the question stops before its next LLM call with
``BudgetExceeded``, rather than spending calls nobody will read.

>>> import asyncio
>>> from middleware.methods.baselines import IO
>>> from middleware.llm.scripted import ScriptedLLM
>>> io = IO(ScriptedLLM(default="Paris"))
>>> asyncio.run(aask(io, "What is the capital of France?")).answer
'Paris'
"""

from __future__ import annotations

import asyncio
import dataclasses
import threading
from collections.abc import Callable, Iterable, Sequence
from concurrent.futures import ThreadPoolExecutor
from types import TracebackType

from middleware.kg.base import KnowledgeGraph
from middleware.llm.ledger import Budget
from middleware.methods.answer import Answer
from middleware.methods.method import Method

DEFAULT_CONCURRENCY = 32


class AsyncMethod:
    """``method`` awaited: ``await runner.arun(question)``, ``await runner.arun_many(...)``.

    Close it (or use ``async with`` / ``with``) to let its worker threads go.
    """

    def __init__(self, method: Method, *, concurrency: int = DEFAULT_CONCURRENCY) -> None:
        if concurrency < 1:
            raise ValueError(f"concurrency must be at least 1, not {concurrency}")
        self.method = method
        self.concurrency = concurrency
        self._pool = ThreadPoolExecutor(concurrency, thread_name_prefix="kgmw-ask")

    async def arun(
        self,
        question: str,
        *,
        choices: Sequence[str] | None = None,
        sources: Sequence[KnowledgeGraph] | None = None,
        budget: Budget | None = None,
    ) -> Answer:
        """The answer to ``question``, as ``method.run`` gives it."""
        return await _on_thread(
            self._pool, self.method, question, choices=choices, sources=sources, budget=budget
        )

    async def arun_many(
        self,
        questions: Iterable[str],
        *,
        budget: Callable[[], Budget] | None = None,
    ) -> list[Answer]:
        """Every question's answer, in the order asked; ``budget`` makes each one's.
        The first question to fail raises its error and cancels the others."""
        tasks = [
            asyncio.ensure_future(self.arun(q, budget=budget() if budget else None))
            for q in questions
        ]
        try:
            return list(await asyncio.gather(*tasks))
        except BaseException:  # also cancellation: the other calls stop too; re-raised
            for task in tasks:
                task.cancel()
            raise

    def close(self) -> None:
        self._pool.shutdown(wait=False, cancel_futures=True)

    def __enter__(self) -> AsyncMethod:
        return self

    def __exit__(
        self,
        kind: type[BaseException] | None,
        error: BaseException | None,
        trace: TracebackType | None,
    ) -> None:
        self.close()

    async def __aenter__(self) -> AsyncMethod:
        return self

    async def __aexit__(
        self,
        kind: type[BaseException] | None,
        error: BaseException | None,
        trace: TracebackType | None,
    ) -> None:
        self.close()


async def aask(
    method: Method,
    question: str,
    *,
    choices: Sequence[str] | None = None,
    sources: Sequence[KnowledgeGraph] | None = None,
    budget: Budget | None = None,
) -> Answer:
    """One question on asyncio's default executor; use ``AsyncMethod`` for many at once."""
    return await _on_thread(None, method, question, choices=choices, sources=sources, budget=budget)


async def _on_thread(
    pool: ThreadPoolExecutor | None,
    method: Method,
    question: str,
    *,
    choices: Sequence[str] | None,
    sources: Sequence[KnowledgeGraph] | None,
    budget: Budget | None,
) -> Answer:
    given = budget or Budget()
    cancelled = given.cancelled or threading.Event()
    mine = dataclasses.replace(given, cancelled=cancelled)

    def work() -> Answer:
        return method.run(question, choices=choices, sources=sources, budget=mine)

    try:
        return await asyncio.get_running_loop().run_in_executor(pool, work)
    except asyncio.CancelledError:
        cancelled.set()  # the thread stops at its next LLM call
        raise
