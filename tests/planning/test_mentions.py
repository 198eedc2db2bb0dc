"""Relations a question names: a plan that leaves one out comes after one that walks it."""

from __future__ import annotations

from pathlib import Path

import pytest
from pyoxigraph import NamedNode

from middleware import sample_store
from middleware.config.methods import PlanSettings
from middleware.kg.backends.local import LocalStore
from middleware.planning.mentions import MISSED, RelationMentions, shared_words, word_sequences
from middleware.planning.planner import Planner
from middleware.planning.plans import Candidate
from middleware.planning.relpaths import path_key
from middleware.testing.graphs import ex, films_path
from middleware.text.embeddings import HashEncoder
from middleware.text.linking import EntityLinker
from middleware.text.verbalize import Verbalizer

METAQA = "https://kgmw.dev/metaqa/relation/"
STARRED_IN = ((ex("starring"), False),)  # from an actor: the films they star in
THEIR_DIRECTORS = ((ex("starring"), False), (ex("directedBy"), True))


@pytest.fixture
def store(tmp_path: Path) -> LocalStore:
    store = LocalStore(tmp_path / "films", profile="generic")
    store.load([films_path()])
    return store


@pytest.fixture(scope="module")
def sample() -> LocalStore:
    return sample_store()


def test_word_sequences_leave_out_the_topic_and_function_words() -> None:
    found = word_sequences("who are the directors of NE")
    assert "directors" in found and "the" not in found and "ne" not in found


def test_a_relation_named_by_its_noun(sample: LocalStore) -> None:
    mentions = RelationMentions(HashEncoder(), Verbalizer(sample))
    written = NamedNode(METAQA + "written_by")
    named = mentions.named("which films share the screenwriter of NE", [written])
    assert named[written] > 0.99  # "screenwriter": the ontology's noun for it


@pytest.mark.parametrize(
    ("masked", "held", "path", "lacking"),
    [
        # a film with no writer, answered with the writers of the films that share its
        # director: the path reaches the relation asked for, but starts elsewhere
        (
            "which films share the screenwriter of NE",
            ("directed_by", "starred_actors"),
            (("directed_by", True), ("directed_by", False), ("written_by", True)),
            True,
        ),
        # an actor who wrote nothing, answered with his films
        ("NE wrote what", ("starred_actors",), (("starred_actors", False),), True),
        # a director's films' actors: the first hop goes unsaid
        ("who starred in NE movies", ("directed_by",), (("directed_by", False),), True),
        (
            "who starred in NE movies",
            ("directed_by",),
            (("directed_by", False), ("starred_actors", True)),
            False,
        ),
        # a writer's films' actors: the topic lacks starring, which the path takes
        (
            "who starred in the films written by NE",
            ("written_by",),
            (("written_by", False), ("starred_actors", True)),
            False,
        ),
        ("NE wrote what", ("written_by",), (("written_by", False),), False),
    ],
)
def test_a_question_that_names_a_relation_its_topic_lacks(
    sample: LocalStore,
    masked: str,
    held: tuple[str, ...],
    path: tuple[tuple[str, bool], ...],
    lacking: bool,
) -> None:
    mentions = RelationMentions(HashEncoder(), Verbalizer(sample))
    steps = tuple((NamedNode(METAQA + p), forward) for p, forward in path)
    topic_has = {NamedNode(METAQA + p) for p in held}
    peers_have = {NamedNode(METAQA + p) for p in ("written_by", "starred_actors", "directed_by")}
    assert mentions.names_lacking(masked, topic_has, peers_have, steps) is lacking


@pytest.mark.parametrize(
    ("masked", "shared"),
    [
        ("which films have the same screenwriter as NE", "screenwriter as"),
        ("which films share the same screenwriter as NE", "screenwriter as"),
        ("which films also share the same writer as NE", "writer as"),
        ("the movies that share directors with NE were written by who", "directors with"),
        ("who directed NE", ""),
    ],
)
def test_the_words_that_name_what_is_shared(masked: str, shared: str) -> None:
    """Past every word of sharing and article: "share the same screenwriter"."""
    assert shared_words(masked) == shared


def test_a_relation_no_peer_holds_is_not_the_topics_to_lack(sample: LocalStore) -> None:
    """ "Language" names a film's language; a country's peers have none."""
    mentions = RelationMentions(HashEncoder(), Verbalizer(sample))
    written, starring = NamedNode(METAQA + "written_by"), NamedNode(METAQA + "starred_actors")
    path = ((starring, False),)
    assert mentions.names_lacking("NE wrote what", {starring}, {written}, path)
    assert not mentions.names_lacking("NE wrote what", {starring}, set(), path)


def test_a_path_that_leaves_out_a_named_relation_covers_less(store: LocalStore) -> None:
    mentions = RelationMentions(HashEncoder(), Verbalizer(store))
    named = mentions.named(
        "what was directed by the ones with NE", [ex("directedBy"), ex("starring")]
    )
    assert named[ex("directedBy")] > 0.99 > named[ex("starring")]
    assert mentions.coverage(STARRED_IN, named) == MISSED
    assert mentions.coverage(THEIR_DIRECTORS, named) == 1.0


def planner(store: LocalStore, monkeypatch: pytest.MonkeyPatch, **config: object) -> Planner:
    """A zero-shot planner whose ranking puts the films first, their directors second."""
    made = Planner(
        store,
        HashEncoder(),
        linker=EntityLinker(store),
        verbalizer=Verbalizer(store),
        config=PlanSettings(**config),  # type: ignore[arg-type]
    )

    def ranked(
        spans: list[tuple[str, object]],
        vectors: object,
        peers: bool,
        unheld: object = None,
        steps: object = None,
    ) -> list[Candidate]:
        span, topic = spans[0]
        return [
            Candidate(topic, span, STARRED_IN, 0.6),  # type: ignore[arg-type]
            Candidate(topic, span, THEIR_DIRECTORS, 0.4),  # type: ignore[arg-type]
        ]

    monkeypatch.setattr(made, "_rank", ranked)
    return made


def test_the_plan_that_walks_every_named_relation_comes_first(
    store: LocalStore, monkeypatch: pytest.MonkeyPatch
) -> None:
    question = "Which films starring Kate Winslet were directed by somebody?"
    best = planner(store, monkeypatch).plan(question).plans[0]
    assert best.candidate.path == THEIR_DIRECTORS
    off = planner(store, monkeypatch, relation_coverage=False).plan(question).plans[0]
    assert off.candidate.path == STARRED_IN


def test_in_a_learned_memory_only_paths_generated_entries_chose_are_covered(
    store: LocalStore,
) -> None:
    made = Planner(store, HashEncoder(), linker=EntityLinker(store), verbalizer=Verbalizer(store))
    topic = ex("Winslet")
    candidates = [
        Candidate(topic, "Kate Winslet", STARRED_IN, 0.6),
        Candidate(topic, "Kate Winslet", ((ex("marriedTo"), True),), 0.5),
        Candidate(topic, "Kate Winslet", THEIR_DIRECTORS, 0.4),
    ]
    question = "Which films starring Kate Winslet were directed by somebody?"
    users = made._cover(question, candidates, True, set())
    assert [c.support for c in users] == [0.6, 0.5, 0.4]
    worded = made._cover(question, candidates, True, {path_key(STARRED_IN)})
    assert [c.support for c in worded] == [0.5, 0.4, 0.6 * MISSED]


def test_a_full_cache_starts_again_without_losing_what_a_question_needs(
    store: LocalStore,
) -> None:
    mentions = RelationMentions(HashEncoder(), Verbalizer(store), cache=12)
    predicates = [ex("directedBy"), ex("starring")]
    mentions.named("who starred in NE", predicates)
    long = "who starred in the long list of films that NE made with many friends"
    assert set(mentions.named(long, predicates)) == set(predicates)


def test_coverage_keeps_a_wording_spans_paths_after_the_other_spans(
    store: LocalStore,
) -> None:
    """ "state" is wording in the memory's questions: covered or not, its paths come
    after those of the question's other span, as the vote put them."""
    from middleware.planning.memory import MemoryEntry, PathMemory
    from middleware.planning.mining import MinedPath

    memory = PathMemory.new(store, "hash")
    for i in range(5):
        memory.add(
            MemoryEntry(
                f"q/{i}", f"what state is NE in {i}?", [MinedPath(path_key(STARRED_IN), "", 1, 0)]
            )
        )
    made = Planner(
        store,
        HashEncoder(),
        linker=EntityLinker(store),
        verbalizer=Verbalizer(store),
        memory=memory,
    )
    worded = {path_key(STARRED_IN), path_key(THEIR_DIRECTORS)}
    candidates = [
        Candidate(ex("Winslet"), "Kate Winslet", STARRED_IN, 0.2),
        Candidate(ex("Titanic"), "state", THEIR_DIRECTORS, 0.8),
    ]
    ordered = made._cover("what state is Kate Winslet in?", candidates, True, worded)
    assert [c.span for c in ordered] == ["Kate Winslet", "state"]
