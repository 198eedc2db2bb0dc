"""Zero-shot plans: relation paths read as short questions, peers out and back."""

from __future__ import annotations

import numpy as np
import pytest

from middleware import sample_store
from middleware.config.methods import PlanSettings
from middleware.kg.backends.local import LocalStore
from middleware.planning.path_reading import (
    PEER_BONUS,
    PathReading,
    asks_for_peers,
    goes_out_and_back,
)
from middleware.planning.planner import Planner
from middleware.planning.relpaths import from_key
from middleware.text.embeddings import HashEncoder, SentenceEncoder
from middleware.text.linking import EntityLinker
from middleware.text.verbalize import Verbalizer

RELATION = "https://kgmw.dev/metaqa/relation/"


def path(*steps: str) -> tuple:  # type: ignore[type-arg]
    """A MetaQA relation path: ``directed_by`` forward, ``^directed_by`` backwards."""
    return from_key(
        "/".join(
            f"^<{RELATION}{s[1:]}>" if s.startswith("^") else f"<{RELATION}{s}>" for s in steps
        )
    )


@pytest.fixture(scope="module")
def sample() -> LocalStore:
    return sample_store()


@pytest.fixture(scope="module")
def zero_shot(sample: LocalStore) -> Planner:
    return Planner(
        sample,
        SentenceEncoder(),
        linker=EntityLinker(sample),
        verbalizer=Verbalizer(sample),
        config=PlanSettings(),
    )


@pytest.mark.parametrize(
    ("question", "peers"),
    [
        ("Which films share the same director as Titanic?", True),
        ("Who starred together with Kate Winslet?", True),
        ("Who are the co-stars of Kate Winslet?", True),
        ("The director of Heat also directed which films?", True),
        ("Who directed Titanic?", False),
        ("Which country is Heat from?", False),  # "co..." is not "co-"
        ("What comedy did the company make?", False),
        ("What else did Ben Franklin invent?", False),  # his other inventions: one hop
    ],
)
def test_questions_about_the_topics_peers(question: str, peers: bool) -> None:
    assert asks_for_peers(question) is peers


def test_a_path_out_and_back() -> None:
    assert goes_out_and_back(path("directed_by", "^directed_by"))
    assert goes_out_and_back(path("directed_by", "^directed_by", "has_genre"))
    assert not goes_out_and_back(path("directed_by", "directed_by"))  # onward, not back
    assert not goes_out_and_back(path("^directed_by", "starred_actors"))


def test_peer_words_move_only_paths_out_and_back(sample: LocalStore) -> None:
    reading = PathReading(HashEncoder(), Verbalizer(sample))
    paths = [path("directed_by"), path("directed_by", "^directed_by")]
    question = HashEncoder().encode(["which films share the director of NE"])[0]
    plain = reading.scores(paths, question, peers=False)
    peers = reading.scores(paths, question, peers=True)
    assert peers[0] == plain[0]
    assert peers[1] - plain[1] == pytest.approx(2 * PEER_BONUS)


def test_each_paths_questions_are_encoded_once(sample: LocalStore) -> None:
    encoder = HashEncoder()
    calls: list[int] = []
    encode = encoder.encode

    def counted(texts: list[str]) -> np.ndarray:
        calls.append(len(texts))
        return encode(texts)

    encoder.encode = counted  # type: ignore[method-assign,assignment]
    reading = PathReading(encoder, Verbalizer(sample))
    vector = encode(["who directed NE"])[0]
    reading.scores([path("directed_by")], vector, peers=False)
    reading.scores([path("directed_by"), path("written_by")], vector, peers=False)
    assert calls == [4, 4]  # the second call encodes only the new path's questions


@pytest.mark.parametrize(
    ("question", "first"),
    [
        # read as a bare phrase ("starred in NE"), each of these lost to a longer path
        ("What movies was Kate Winslet an actor in?", ("^starred_actors",)),
        ("what does Leonardo DiCaprio act in", ("^starred_actors",)),
        ("who is the director for Titanic", ("directed_by",)),
        ("what is a film written by James Cameron", ("^written_by",)),
        ("which films have the same director as Heat", ("directed_by", "^directed_by")),
        ("the director of Heat also directed which films", ("directed_by", "^directed_by")),
    ],
)
def test_zero_shot_plans_first_the_path_the_question_asks(
    zero_shot: Planner, question: str, first: tuple[str, ...]
) -> None:
    planning = zero_shot.plan(question)
    assert planning.mode == "zero-shot"
    assert planning.plans[0].candidate.path == path(*first)
