"""The async API against a slow OpenAI-compatible LLM: N questions awaited together
beside the sync API one at a time.

    python bench_async.py [--n 32] [--delay 0.5] [--concurrency 32]

The LLM is a stub server (``tests/openai_stub.py``, RoK's scripted replies) in its own
process that sleeps ``--delay`` seconds before every reply, so the figures measure
waiting, not a model. Four rows:

- RoK over the sample graph, sync: ``method.run`` for each question in turn;
- RoK, async: ``AsyncMethod(..., concurrency).arun_many`` (a worker thread per
  question in flight);
- one LLM call per question, sync: ``OpenAICompatLLM.complete`` in turn;
- one LLM call per question, async: ``acomplete`` gathered on one event loop (no
  thread per call).

Each row gives the wall time, the LLM calls made and the most threads
this process had while it ran.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import subprocess
import sys
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any

from common import ROOT, save

sys.path.insert(0, str(ROOT))

from middleware.kg.sample import sample_store
from middleware.llm import OpenAICompatLLM, user
from middleware.llm.ledger import Budget
from middleware.methods.aio import AsyncMethod
from middleware.methods.rok import RoK
from tests.cli_helpers import rok_script
from tests.openai_stub import OpenAIStub

QUESTION = "Who directed Titanic?"


def serve_stub(delay: float) -> None:
    """The stub in this process until stdin closes; its URL is the first stdout line."""
    with OpenAIStub(rok_script(), delay=delay) as stub:
        print(stub.url, flush=True)
        sys.stdin.read()


@contextmanager
def stub_process(delay: float) -> Iterator[str]:
    process = subprocess.Popen(
        [sys.executable, __file__, "--serve-stub", "--delay", str(delay)],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
    )
    assert process.stdout is not None and process.stdin is not None
    try:
        yield process.stdout.readline().strip()
    finally:
        process.stdin.close()
        process.wait(timeout=30)


class PeakThreads:
    """The most threads this process had, sampled every 5 ms."""

    def __init__(self) -> None:
        self.peak = threading.active_count()
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._sample, daemon=True)

    def _sample(self) -> None:
        while not self._stop.wait(0.005):
            self.peak = max(self.peak, threading.active_count() - 1)  # not the sampler

    def __enter__(self) -> PeakThreads:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._stop.set()
        self._thread.join()


def measure(name: str, work: Callable[[], int], calls: Callable[[], int]) -> dict[str, Any]:
    deadline = time.monotonic() + 10
    while threading.active_count() > 1 and time.monotonic() < deadline:
        time.sleep(0.05)  # the last row's worker threads are still on their way out
    started = time.perf_counter()
    with PeakThreads() as threads:
        answered = work()
    seconds = time.perf_counter() - started
    row = {"run": name, "seconds": round(seconds, 2), "answers": answered}
    row["peak_threads"] = threads.peak
    row["llm_calls"] = calls()
    print(f"{name:<34} {seconds:7.2f} s  {answered:3d} answers  peak threads {threads.peak}")
    return row


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--n", type=int, default=32, help="questions (default 32)")
    parser.add_argument("--delay", type=float, default=0.5, help="seconds per LLM reply")
    parser.add_argument("--concurrency", type=int, default=32, help="AsyncMethod's threads")
    parser.add_argument("--serve-stub", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.serve_stub:
        serve_stub(args.delay)
        return
    print(f"load average before: {os.getloadavg()[0]:.2f}")
    graph = sample_store()
    rows = []
    with stub_process(args.delay) as url:
        llm = OpenAICompatLLM(base_url=url, api="chat", retries=0)
        rok = RoK(llm, graph)
        rok.run(QUESTION)  # warm: the label index, the templates, the first connection
        counted = [0]

        def sync_rok() -> int:
            answers = [rok.run(QUESTION, budget=Budget(max_calls=8)) for _ in range(args.n)]
            counted[0] = sum(a.usage["llm_calls"] for a in answers)
            return sum(a.answer == "James Cameron" for a in answers)

        def async_rok() -> int:
            async def run() -> list[Any]:
                async with AsyncMethod(rok, concurrency=args.concurrency) as runner:
                    questions = [QUESTION] * args.n
                    return await runner.arun_many(questions, budget=lambda: Budget(max_calls=8))

            answers = asyncio.run(run())
            counted[0] = sum(a.usage["llm_calls"] for a in answers)
            return sum(a.answer == "James Cameron" for a in answers)

        prompt = [user("Titanic\nAnswer:")]

        def sync_llm() -> int:
            replies = [llm.complete(prompt, max_tokens=16) for _ in range(args.n)]
            counted[0] = len(replies)
            return sum(r.text == "James Cameron" for r in replies)

        def async_llm() -> int:
            async def run() -> list[Any]:
                try:
                    calls = [llm.acomplete(prompt, max_tokens=16) for _ in range(args.n)]
                    return list(await asyncio.gather(*calls))
                finally:
                    await llm.aclose()

            replies = asyncio.run(run())
            counted[0] = len(replies)
            return sum(r.text == "James Cameron" for r in replies)

        for name, work in [
            ("RoK, sync one at a time", sync_rok),
            (f"RoK, AsyncMethod x{args.concurrency}", async_rok),
            ("one LLM call, complete() in turn", sync_llm),
            ("one LLM call, acomplete() gathered", async_llm),
        ]:
            row = measure(name, work, lambda: counted[0])
            rows.append(row)
    print(f"load average after: {os.getloadavg()[0]:.2f}")
    path = save("async", {"n": args.n, "delay_s": args.delay, "rows": rows})
    print(f"wrote {path}")


if __name__ == "__main__":
    main()
