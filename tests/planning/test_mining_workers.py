"""Mining in workers: processes over a store on disk mine what this process mines; a
question stuck in one query gets its worker killed and the next question a fresh one;
threads over any other graph."""

from __future__ import annotations

import functools
import time
from pathlib import Path

import pytest

from middleware.kg.backends.endpoint import SparqlEndpoint
from middleware.kg.backends.local import LocalStore
from middleware.kg.identity import reopener
from middleware.planning.mining_workers import (
    MinedQuestion,
    MiningJob,
    MiningLimits,
    mine_all,
    mine_question,
)
from middleware.testing.graphs import ex, films_path
from middleware.testing.observed import ObservedStore
from tests.planning.test_path_search import PAIRS

LIMITS = MiningLimits(max_hops=3, seconds=30.0)


def jobs() -> list[MiningJob]:
    return [
        MiningJob(i, (ex(a).value,), (ex(b).value,), check_topics=True)
        for i, (a, b) in enumerate(PAIRS)
    ]


@pytest.fixture(scope="module")
def films(tmp_path_factory: pytest.TempPathFactory) -> LocalStore:
    store = LocalStore(tmp_path_factory.mktemp("films") / "store", profile="generic")
    store.load([films_path()])
    return store


def by_index(outcomes: list[MinedQuestion]) -> list[MinedQuestion]:
    return sorted(outcomes, key=lambda o: o.index)


def test_processes_mine_what_this_process_mines(films: LocalStore) -> None:
    here = [mine_question(films, job, LIMITS) for job in jobs()]
    opener = reopener(films)
    assert opener is not None
    there = by_index(list(mine_all(films, jobs(), LIMITS, workers=2, opener=opener)))
    assert there == here
    assert [bool(o.paths) for o in here] == [True, True, True, False, True]


def test_threads_over_a_store_in_memory_mine_the_same() -> None:
    store = LocalStore(profile="generic")
    store.load([films_path()])
    assert reopener(store) is None
    here = [mine_question(store, job, LIMITS) for job in jobs()]
    assert by_index(list(mine_all(store, jobs(), LIMITS, workers=3))) == here


class StuckStore(ObservedStore):
    """A store whose queries about Stuck never end (an engine stuck in one query)."""

    def before(self, sparql: str) -> None:
        if "Stuck" in sparql:
            time.sleep(600)


def test_a_question_stuck_in_one_query_gets_its_worker_killed(films: LocalStore) -> None:
    assert films.path is not None
    opener = functools.partial(StuckStore, str(films.path), profile="generic", read_only=True)
    limits = MiningLimits(max_hops=2, seconds=1.0, grace=0.5)
    stuck = MiningJob(0, (ex("Stuck").value,), (ex("Avatar").value,), check_topics=True)
    todo = [stuck, *jobs()[1:3]]
    outcomes = by_index(list(mine_all(films, todo, limits, workers=1, opener=opener)))
    assert outcomes[0].kind == "over_budget"
    assert "its worker process was stopped" in outcomes[0].message
    # the next questions get a fresh worker and are mined
    assert [o.kind for o in outcomes[1:]] == ["mined", "mined"] and outcomes[1].paths


def test_a_topic_the_graph_lacks_is_no_topic(films: LocalStore) -> None:
    job = MiningJob(0, (ex("NoSuchFilm").value,), (ex("Avatar").value,), check_topics=True)
    assert mine_question(films, job, LIMITS).kind == "no_topic"


def test_a_budget_of_too_few_queries_is_over_budget(films: LocalStore, tmp_path: Path) -> None:
    outcome = mine_question(films, jobs()[0], MiningLimits(max_hops=3, queries=2))
    assert outcome.kind == "over_budget" and outcome.message.startswith("over budget:")


def test_an_endpoint_is_mined_with_requests_in_flight(
    oxigraph_server: str, films: LocalStore
) -> None:
    endpoint = SparqlEndpoint(oxigraph_server, profile="generic", name="films", timeout=10)
    here = [mine_question(films, job, LIMITS) for job in jobs()]
    there = by_index(list(mine_all(endpoint, jobs(), LIMITS, workers=3)))
    assert [(o.kind, o.paths) for o in there] == [(o.kind, o.paths) for o in here]
