"""The kept answers behind GET /v1/answers/{id}: owners, time to live, size cap."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from middleware.server.answering.answer_store import (
    ID_PATTERN,
    AnswerStore,
    new_answer_id,
    owner_of,
)


class Clock:
    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


def store(
    tmp_path: Path, clock: Clock, *, ttl: float = 60.0, max_bytes: int = 10_000
) -> AnswerStore:
    return AnswerStore(tmp_path / "answers.sqlite", ttl=ttl, max_bytes=max_bytes, clock=clock)


def test_ids_are_random_and_shaped_like_completion_ids() -> None:
    ids = {new_answer_id() for _ in range(200)}
    assert len(ids) == 200
    assert all(re.fullmatch(ID_PATTERN, i) for i in ids)
    assert all(len(i) == len("chatcmpl-kgmw-") + 32 for i in ids)


def test_only_the_owner_reads_an_answer(tmp_path: Path) -> None:
    kept = store(tmp_path, Clock())
    alice, bob = owner_of("Bearer alice-key", keys=True), owner_of("Bearer bob-key", keys=True)
    assert alice != bob and "alice-key" not in alice
    answer_id = new_answer_id()
    assert kept.put(answer_id, alice, {"answer": "Titanic"})
    assert kept.get(answer_id, alice) == {"answer": "Titanic"}
    assert kept.get(answer_id, bob) is None
    assert kept.get(new_answer_id(), alice) is None


def test_an_open_service_keeps_answers_apart_from_keyed_ones(tmp_path: Path) -> None:
    """Without keys the id alone is the capability; an answer kept while keys were on
    is never readable once they are off, nor the reverse."""
    kept = store(tmp_path, Clock())
    open_owner = owner_of(None, keys=False)
    assert open_owner == owner_of("Bearer anything", keys=False)
    keyed, unkeyed = new_answer_id(), new_answer_id()
    kept.put(keyed, owner_of("Bearer k", keys=True), {"a": 1})
    kept.put(unkeyed, open_owner, {"a": 2})
    assert kept.get(keyed, open_owner) is None
    assert kept.get(unkeyed, owner_of("Bearer k", keys=True)) is None
    assert kept.get(unkeyed, open_owner) == {"a": 2}


def test_expired_answers_are_gone_and_removed(tmp_path: Path) -> None:
    clock = Clock()
    kept = store(tmp_path, clock, ttl=60)
    owner = owner_of(None, keys=False)
    old = new_answer_id()
    kept.put(old, owner, {"answer": "old"})
    clock.now += 61
    assert kept.get(old, owner) is None
    kept.put(new_answer_id(), owner, {"answer": "new"})  # writing sweeps expired rows
    assert old not in kept.ids()


def test_the_size_cap_evicts_the_oldest_first(tmp_path: Path) -> None:
    clock = Clock()
    kept = store(tmp_path, clock, max_bytes=600)
    owner = owner_of(None, keys=False)
    ids = []
    for n in range(5):
        clock.now += 1
        ids.append(new_answer_id())
        assert kept.put(ids[-1], owner, {"text": "x" * 180, "n": n})
    assert kept.size() <= 600
    assert kept.ids() == ids[-3:]
    assert kept.get(ids[0], owner) is None


def test_an_answer_larger_than_the_cap_is_not_kept(tmp_path: Path) -> None:
    kept = store(tmp_path, Clock(), max_bytes=100)
    owner = owner_of(None, keys=False)
    assert not kept.put(new_answer_id(), owner, {"text": "x" * 200})
    assert kept.ids() == []


def test_two_stores_on_one_file_share_answers(tmp_path: Path) -> None:
    """gunicorn's workers on one host each open the file: one worker's answer is
    readable through another's."""
    clock = Clock()
    first, second = store(tmp_path, clock), store(tmp_path, clock)
    owner = owner_of("Bearer k", keys=True)
    answer_id = new_answer_id()
    first.put(answer_id, owner, {"answer": "shared"})
    assert second.get(answer_id, owner) == {"answer": "shared"}


@pytest.mark.parametrize(
    "bad", ["", "chatcmpl-kgmw-xyz", "../etc/passwd", "chatcmpl-kgmw-" + "A" * 32]
)
def test_malformed_ids_find_nothing(tmp_path: Path, bad: str) -> None:
    assert store(tmp_path, Clock()).get(bad, owner_of(None, keys=False)) is None


def test_a_lower_time_to_live_applies_to_answers_kept_before(tmp_path: Path) -> None:
    clock = Clock()
    owner = owner_of(None, keys=False)
    answer_id = new_answer_id()
    store(tmp_path, clock, ttl=3600).put(answer_id, owner, {"answer": "kept"})
    clock.now += 120
    assert store(tmp_path, clock, ttl=3600).get(answer_id, owner) == {"answer": "kept"}
    shorter = store(tmp_path, clock, ttl=60)
    assert shorter.get(answer_id, owner) is None
    assert shorter.ids() == []  # opening the file swept it
