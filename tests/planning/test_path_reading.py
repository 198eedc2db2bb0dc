"""Zero-shot plans: relation paths read as short questions, peers out and back."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from middleware import sample_store
from middleware.config.methods import PlanSettings
from middleware.kg.backends.local import LocalStore
from middleware.planning.path_reading import (
    PEER_BONUS,
    QUESTION_PRIOR,
    PathReading,
    asks_for_peers,
    path_questions,
    starts_out_and_back,
)
from middleware.planning.planner import Planner
from middleware.planning.relpaths import from_key
from middleware.testing.graphs import ex, films_path
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


def zero_shot_over(store: LocalStore) -> Planner:
    """A planner with no memory over ``store``, with the real encoder."""
    return Planner(
        store,
        SentenceEncoder(),
        linker=EntityLinker(store),
        verbalizer=Verbalizer(store),
        config=PlanSettings(),
    )


@pytest.fixture(scope="module")
def zero_shot(sample: LocalStore) -> Planner:
    return zero_shot_over(sample)


@pytest.mark.parametrize(
    ("masked", "peers"),
    [
        ("Which films share the same director as NE?", True),
        ("Who starred together with NE?", True),
        ("Who are the co-stars of NE?", True),
        ("Who are the co\u2011stars of NE?", True),  # a non-breaking hyphen
        ("Who acted with NE?", True),
        ("The director of NE also directed which films?", True),
        ("Who directed NE?", False),
        ("Who co-wrote NE?", False),  # the film's writers: one hop
        ("Which country is NE from?", False),
        ("What comedy did the company make?", False),
        ("What else did NE invent?", False),  # his other inventions: one hop
        ("What is NE also known as?", False),
    ],
)
def test_questions_about_the_topics_peers(masked: str, peers: bool) -> None:
    assert asks_for_peers(masked) is peers


def test_a_path_that_starts_out_and_back() -> None:
    assert starts_out_and_back(path("directed_by", "^directed_by"))
    assert starts_out_and_back(path("directed_by", "^directed_by", "has_genre"))
    assert not starts_out_and_back(path("directed_by", "directed_by"))  # onward, not back
    assert not starts_out_and_back(path("^directed_by", "starred_actors"))
    # out and back later: not the topic's peers
    assert not starts_out_and_back(path("has_genre", "^has_genre", "written_by")[1:])
    assert not starts_out_and_back(path("^starred_actors", "written_by", "^written_by"))


def test_peer_words_move_only_paths_out_and_back(sample: LocalStore) -> None:
    """A path out and back gains where the question asks for peers, and loses nothing
    where it does not: MetaQA's 3-hop questions go out and back ("who directed the
    films written by the writer of NE") and name no peers."""
    reading = PathReading(HashEncoder(), Verbalizer(sample))
    paths = [
        path("directed_by"),
        path("directed_by", "^directed_by"),
        path("written_by", "^written_by", "directed_by"),
    ]
    question = HashEncoder().encode(["which films share the director of NE"])[0]
    plain = reading.scores(paths, question, peers=False)
    peers = reading.scores(paths, question, peers=True)
    assert peers[0] == plain[0]
    assert peers[1] - plain[1] == pytest.approx(PEER_BONUS)
    questions = np.stack(
        [HashEncoder().encode(path_questions(p, reading.verbalizer)) for p in paths]
    )
    unit = questions / np.linalg.norm(questions, axis=2, keepdims=True)
    query = question / np.linalg.norm(question)
    expected = (unit @ query).mean(axis=1) + np.array([QUESTION_PRIOR[len(p)] for p in paths])
    assert plain == pytest.approx(expected.tolist(), abs=1e-5)  # no penalty


def test_a_relation_without_an_inverse_label_reads_as_wordings_read_it(tmp_path: Path) -> None:
    store = LocalStore(tmp_path / "films", profile="generic")
    store.load([films_path()])
    asked = path_questions(((ex("spouse"), False),), Verbalizer(store))
    assert "NE spouse of what" in asked and not any("reversed" in q for q in asked)


def test_a_path_is_also_asked_with_its_relations_nouns(sample: LocalStore) -> None:
    """Where the profile names each relation as a noun, a path is asked as the noun
    phrase of its answer too ("the director of NE"); a step out and straight back
    reads as sharing ("the ones with the same screenwriter as NE"): an encoder reads
    "screenwriter" no closer to "written by" than to "directed by"."""
    verbalizer = Verbalizer(sample)
    assert "what is the director of NE" in path_questions(path("directed_by"), verbalizer)
    assert "the ones with director NE" in path_questions(path("^directed_by"), verbalizer)
    peers = path_questions(path("written_by", "^written_by"), verbalizer)
    assert "the ones with the same screenwriter as NE" in peers
    three = path_questions(path("directed_by", "^directed_by", "starred_actors"), verbalizer)
    assert "who is the actor of the ones with the same director as NE" in three
    onward = path_questions(path("^starred_actors", "directed_by"), verbalizer)
    assert "the director of the ones with actor NE" in onward


def test_no_noun_phrase_where_a_relation_has_no_noun(tmp_path: Path) -> None:
    store = LocalStore(tmp_path / "films", profile="generic")
    store.load([films_path()])
    assert len(path_questions(((ex("spouse"), True),), Verbalizer(store))) == 4


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
    assert calls == [7, 7]  # the second call encodes only the new path's questions


@pytest.mark.parametrize(
    ("question", "first"),
    [
        # read as a bare phrase ("starred in NE"), the first four lost to another path
        ("What movies was Kate Winslet an actor in?", ("^starred_actors",)),
        ("what does Leonardo DiCaprio act in", ("^starred_actors",)),
        ("who is the director for Titanic", ("directed_by",)),
        ("what is a film written by James Cameron", ("^written_by",)),
        ("which films have the same director as Heat", ("directed_by", "^directed_by")),
        ("the director of Heat also directed which films", ("directed_by", "^directed_by")),
        ("Who acted with Kate Winslet?", ("^starred_actors", "starred_actors")),
        # a title with a word of sharing does not ask for peers
        ("Who directed The Sun Also Rises?", ("directed_by",)),
        ("Who starred in Two Rode Together?", ("starred_actors",)),
    ],
)
def test_zero_shot_plans_first_the_path_the_question_asks(
    zero_shot: Planner, question: str, first: tuple[str, ...]
) -> None:
    planning = zero_shot.plan(question)
    assert planning.mode == "zero-shot"
    assert planning.plans[0].candidate.path == path(*first)


def test_a_title_in_another_span_does_not_ask_for_peers(zero_shot: Planner) -> None:
    """Every linked name is left out before the question is read for peers: "Two Rode
    Together" is a title, also when the plan starts from James Stewart."""
    planning = zero_shot.plan("Who directed Two Rode Together starring James Stewart?")
    assert not starts_out_and_back(planning.plans[0].candidate.path)


def test_the_kept_vectors_stay_under_their_cap(
    sample: LocalStore, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr("middleware.planning.path_reading.KEPT_PATHS", 2)
    reading = PathReading(HashEncoder(), Verbalizer(sample))
    vector = HashEncoder().encode(["who directed NE"])[0]
    many = [path("directed_by"), path("written_by"), path("has_genre"), path("in_language")]
    first = reading.scores(many, vector, peers=False)
    assert len(reading._kept) <= 2
    assert reading.scores(many[:2], vector, peers=False) == pytest.approx(first[:2])
    assert reading.scores(many, vector, peers=False) == pytest.approx(first)


def test_only_a_shortlist_is_asked_as_questions(
    sample: LocalStore, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The paths whose phrase reads best, in their order, and where the question asks
    for peers every path that starts out and back too."""
    monkeypatch.setattr("middleware.planning.path_reading.SHORTLIST", 2)
    reading = PathReading(HashEncoder(), Verbalizer(sample))
    vector = HashEncoder().encode(["who directed NE"])[0]
    many = [
        path("has_genre"),
        path("directed_by"),
        path("written_by", "^written_by"),
        path("^directed_by"),
    ]
    short = reading.shortlist(many, vector, peers=False)
    assert len(short) == 2 and path("directed_by") in short
    assert short == [p for p in many if p in short]
    with_peers = reading.shortlist(many, vector, peers=True)
    assert path("written_by", "^written_by") in with_peers
    assert reading.shortlist(many[:2], vector, peers=False) == many[:2]


KB = """Heat|directed_by|Michael Mann
Heat|starred_actors|Al Pacino
Heat|starred_actors|Robert De Niro
Heat|release_year|1995
The Insider|directed_by|Michael Mann
The Insider|starred_actors|Al Pacino
The Insider|release_year|1999
Honey|starred_actors|Jessica Alba
Honey|release_year|2003
Sin City|directed_by|Robert Rodriguez
Sin City|starred_actors|Jessica Alba
Sin City|release_year|2005
Sin City|written_by|Frank Miller
Sin City|starred_actors|Mickey Rourke
Homeboy|starred_actors|Mickey Rourke
Homeboy|written_by|Mickey Rourke
The Insider|written_by|Eric Roth
"""


@pytest.fixture(scope="module")
def lacking_director() -> Planner:
    """Films with directors, and Honey, whose director the graph does not hold."""
    store = LocalStore(profile="metaqa")
    store.load_text(KB, name="kb.txt")
    return zero_shot_over(store)


def test_a_relation_the_topic_lacks_but_its_peers_hold_is_unheld(
    lacking_director: Planner,
) -> None:
    """Honey's peers (films that share its actors) have directors and Honey has none:
    asked who directed it, a path it lacks reads better than any it holds."""
    lacking = lacking_director.plan("who directed Honey")
    assert lacking.mode == "zero-shot" and lacking.plans  # a detour is still found
    assert lacking.unheld_share > 0.0
    assert lacking.to_dict()["unheld"] == round(lacking.unheld_share, 4)
    held = lacking_director.plan("who directed Heat")
    assert held.plans[0].candidate.path == path("directed_by")
    assert held.unheld_share == 0.0
    # what Honey holds reads best: nothing is unheld
    assert lacking_director.plan("who starred in Honey").unheld_share == 0.0


def test_a_relation_the_question_names_and_the_topic_lacks_is_unheld(
    lacking_director: Planner,
) -> None:
    """Heat has no writer, the films that share its director do. The question names
    the relation by its noun ("screenwriter"), and the path answered by starts out and
    back over another: a detour. Jessica Alba's peers (who star with her) write and she
    does not; the writers of her films reach the relation after a step the question
    leaves unsaid, as "who starred in NE movies" does, so only the paths her peers
    hold read against them."""
    alba = lacking_director.plan("what film did Jessica Alba write")
    assert 0.0 < alba.unheld_share < 1.0
    peers = lacking_director.plan("which films have the same screenwriter as Heat")
    assert peers.unheld_share == 1.0
    worded = lacking_director.plan("which films share the same screenwriter as Heat")
    assert worded.unheld_share == 1.0
    assert lacking_director.plan("what films did Jessica Alba star in").unheld_share < 1.0
    assert lacking_director.plan("who directed Heat").unheld_share == 0.0


@pytest.mark.parametrize(
    "question",
    [
        # the first hop goes unsaid ("James Cameron movies": the films he directed)
        "who starred in James Cameron movies",
        "what genres are Michael Mann films",
        "when were Michael Mann's movies released",
        "who directed Kate Winslet's movies",
        "who acted in Michael Mann films",
        "what movies did Michael Mann write and direct",
    ],
)
def test_a_right_answer_whose_first_hop_goes_unsaid_is_not_unheld(
    zero_shot: Planner, question: str
) -> None:
    assert zero_shot.plan(question).unheld_share < 1.0


FREEBASE = "http://rdf.freebase.com/ns/"
FACTS = [
    ("france", "location.country.official_language", "french"),
    ("france", "location.country.capital", "paris"),
    ("amelie", "film.film.language", "french"),
    ("amelie", "film.film.genre", "comedy"),
    ("amelie", "film.film.directed_by", "jeunet"),
    ("bieber", "music.artist.genre", "pop"),
    ("bieber", "people.person.place_of_birth", "london"),
    ("jeunet", "people.person.place_of_birth", "roanne"),
]
NAMES = {"france": "France", "french": "French", "paris": "Paris", "amelie": "Amelie"}
NAMES |= {"comedy": "Comedy", "jeunet": "Jean-Pierre Jeunet", "bieber": "Justin Bieber"}
NAMES |= {"pop": "Pop music", "london": "London Ontario", "roanne": "Roanne"}


@pytest.fixture(scope="module")
def freebase_shaped() -> Planner:
    label = "http://www.w3.org/2000/01/rdf-schema#label"
    text = "".join(f"<{FREEBASE}m.{s}> <{FREEBASE}{p}> <{FREEBASE}m.{o}> .\n" for s, p, o in FACTS)
    text += "".join(f'<{FREEBASE}m.{k}> <{label}> "{v}"@en .\n' for k, v in NAMES.items())
    store = LocalStore(profile="freebase")
    store.load_text(text, name="kb.nt")
    return zero_shot_over(store)


@pytest.mark.parametrize(
    "question",
    [
        # a film's language is named too, but France holds the relation asked about
        "what language do they speak in France",
        "what is the official language of France",
        "what genre of music does Justin Bieber sing",
        "what is the genre of Amelie",
        # the ontology declares film.director.film the inverse of film.film.directed_by
        "who directed Amelie",
    ],
)
def test_a_relation_named_no_better_than_one_the_topic_holds_is_not_unheld(
    freebase_shaped: Planner, question: str
) -> None:
    assert freebase_shaped.plan(question).unheld_share < 1.0


def test_across_sources_the_answering_sources_unheld_counts(tmp_path: Path) -> None:
    """One source holds Heat's director, another lacks it but its other films have one:
    the answer comes from the first, and the second's reading of the paths Heat lacks
    there must not withhold it."""
    from middleware.llm.scripted import ScriptedLLM
    from middleware.methods.calibration import Calibration, Model
    from middleware.methods.plan import Plan
    from middleware.methods.run import AnswerPolicy

    complete = LocalStore(profile="metaqa", name="complete")
    complete.load_text(KB, name="kb.txt")
    partial = LocalStore(profile="metaqa", name="partial")
    partial.load_text(
        KB.replace("Heat|directed_by|Michael Mann\n", "") + "Ronin|starred_actors|Robert De Niro\n"
        "Ronin|directed_by|John Frankenheimer\n",
        name="kb.txt",
    )
    wary = tmp_path / "calibration.json"
    model = Model(("bias", "supported", "unheld"), (0.0, 2.0, -6.0))
    wary.write_text(Calibration({"plan:zero-shot": model}).to_json())
    method = Plan(
        ScriptedLLM(default="I do not know"),
        encoder=SentenceEncoder(),
        config=PlanSettings(),
        policy=AnswerPolicy(calibration=str(wary)),
    )
    alone = method.run("who directed Heat", sources=[partial])
    assert alone.basis is not None and alone.basis.unheld > 0.0 and not alone.found
    both = method.run("who directed Heat", sources=[complete, partial])
    assert both.found and "Michael Mann" in both.answer
    assert both.basis is not None and both.basis.unheld == 0.0


@pytest.mark.shipped_calibration
def test_the_shipped_calibration_withholds_an_answer_along_a_detour() -> None:
    """With the shipped model for zero-shot plans, Honey's director (a detour through the
    films that share its actors) is not given; Heat's is."""
    from middleware.llm.scripted import ScriptedLLM
    from middleware.methods.plan import Plan

    store = LocalStore(profile="metaqa", name="films")
    store.load_text(KB, name="kb.txt")
    method = Plan(ScriptedLLM(default="I do not know"), store, encoder=SentenceEncoder())
    lacking = method.run("who directed Honey")
    assert lacking.basis is not None and lacking.basis.unheld > 0.0
    assert not lacking.found and lacking.guess is not None
    held = method.run("who directed Heat")
    assert held.found and held.answer == "Michael Mann"
