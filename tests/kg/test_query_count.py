"""Query counting per graph and per thread; read-only checks from several threads at once."""

from __future__ import annotations

import threading

from middleware.kg.sample import sample_store


def test_each_thread_counts_its_own_queries() -> None:
    graph = sample_store()
    before = graph.query_count
    seen: dict[str, int] = {}

    def work(name: str, queries: int) -> None:
        for _ in range(queries):
            graph.query("ASK { ?s ?p ?o }")
        seen[name] = graph.thread_query_count

    threads = [threading.Thread(target=work, args=(f"t{n}", n * 10)) for n in (1, 2, 3)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert seen == {"t1": 10, "t2": 20, "t3": 30}
    assert graph.query_count - before == 60
