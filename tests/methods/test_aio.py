"""The async method API: questions awaited together, bounded, cancellable."""

from __future__ import annotations

import asyncio
import threading
from collections.abc import Sequence
from typing import Any

import pytest

from middleware.errors import BudgetExceeded, LLMError
from middleware.kg.sample import sample_store
from middleware.llm.ledger import Budget
from middleware.llm.scripted import ScriptedLLM
from middleware.methods.aio import AsyncMethod, aask
from middleware.methods.answer import Answer
from middleware.methods.baselines import IO
from middleware.methods.method import Method
from middleware.methods.rok import RoK
from tests.cli_helpers import rok_script

WAIT = 30.0  # seconds a barrier waits before the test fails instead of hanging


class Recording:
    """A method that says when its ``run`` ended, and how."""

    def __init__(self, inner: Method) -> None:
        self.inner = inner
        self.done = threading.Event()
        self.error: BaseException | None = None

    def run(self, question: str, **kwargs: Any) -> Answer:
        try:
            return self.inner.run(question, **kwargs)
        except BaseException as err:
            self.error = err
            raise
        finally:
            self.done.set()


def test_aask_answers_one_question() -> None:
    answer = asyncio.run(aask(IO(ScriptedLLM(default="Paris")), "Capital of France?"))
    assert answer.answer == "Paris" and answer.method == "io"


def test_many_questions_keep_their_order_over_the_sample_graph() -> None:
    async def main() -> list[Answer]:
        async with AsyncMethod(RoK(rok_script(), sample_store()), concurrency=4) as runner:
            return await runner.arun_many(
                ["Who directed Titanic?"] * 6, budget=lambda: Budget(max_calls=8)
            )

    answers = asyncio.run(main())
    assert [a.answer for a in answers] == ["James Cameron"] * 6
    assert all(a.evidence.paths or a.evidence.triples for a in answers)


def test_questions_wait_on_the_llm_together() -> None:
    """Four questions' LLM calls meet at a barrier of four: only if all are in flight at
    once does any of them get past it."""
    barrier = threading.Barrier(4, timeout=WAIT)

    def reply(prompt: str) -> str:
        barrier.wait()
        return prompt.rsplit("Q:", 1)[-1].split("?")[0].strip()

    async def main() -> list[Answer]:
        with AsyncMethod(IO(ScriptedLLM(default=reply)), concurrency=4) as runner:
            return await runner.arun_many([f"Q: city {n}?" for n in range(4)])

    answers = asyncio.run(main())
    assert len(answers) == 4 and not barrier.broken


def test_concurrency_bounds_the_questions_in_flight() -> None:
    lock, active, most = threading.Lock(), [0], [0]
    barrier = threading.Barrier(2, timeout=WAIT)

    def reply(prompt: str) -> str:
        with lock:
            active[0] += 1
            most[0] = max(most[0], active[0])
        barrier.wait()  # two at a time get through
        with lock:
            active[0] -= 1
        return "ok"

    async def main() -> list[Answer]:
        with AsyncMethod(IO(ScriptedLLM(default=reply)), concurrency=2) as runner:
            return await runner.arun_many([f"question {n}?" for n in range(6)])

    assert len(asyncio.run(main())) == 6
    assert most[0] == 2


def test_cancelling_stops_the_question_before_its_next_llm_call() -> None:
    entered, release = threading.Event(), threading.Event()

    def first_call(prompt: str) -> str:
        entered.set()
        release.wait(WAIT)
        return "Titanic; Kate Winslet; James Cameron"

    llm = ScriptedLLM([("Key entities:$", first_call)], default="1")
    method = Recording(RoK(llm, sample_store()))

    async def main() -> None:
        with AsyncMethod(method) as runner:
            task = asyncio.create_task(runner.arun("Who directed Titanic?"))
            await asyncio.get_running_loop().run_in_executor(None, entered.wait, WAIT)
            task.cancel()
            with pytest.raises(asyncio.CancelledError):
                await task

    asyncio.run(main())
    release.set()
    assert method.done.wait(WAIT)
    assert isinstance(method.error, BudgetExceeded) and "went away" in str(method.error)
    asked = [c.prompt.rstrip().rsplit("\n", 1)[-1] for c in llm.calls]
    assert asked[-1] == "Key entities:", asked  # the call in flight was the last one made


def test_a_failing_question_fails_the_batch() -> None:
    def reply(prompt: str) -> str:
        if "bad" in prompt:
            raise LLMError("scripted failure")
        return "ok"

    async def main(questions: Sequence[str]) -> list[Answer]:
        with AsyncMethod(IO(ScriptedLLM(default=reply))) as runner:
            return await runner.arun_many(questions)

    with pytest.raises(LLMError, match="scripted failure"):
        asyncio.run(main(["good?", "bad?", "good?"]))


def test_concurrency_must_be_positive() -> None:
    with pytest.raises(ValueError, match="concurrency"):
        AsyncMethod(IO(ScriptedLLM(default="x")), concurrency=0)
