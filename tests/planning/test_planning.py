"""Planning over the films graph: mining, the path memory, learned and zero-shot plans."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from pyoxigraph import NamedNode

from middleware.config.methods import PlanSettings
from middleware.errors import ConfigError
from middleware.kg.backends.local import LocalStore
from middleware.kg.base import Hop, Triple
from middleware.kg.base import Path as Path_
from middleware.planning.learning import LearnReport, Lesson, learn
from middleware.planning.memory import FILE_NAME, PathMemory, open_memory
from middleware.planning.mining import mine
from middleware.planning.planner import Planner
from middleware.planning.plans import Candidate, Plan, Planning
from middleware.planning.relpaths import from_key
from middleware.testing.graphs import ex, films_path
from middleware.text.embeddings import HashEncoder
from middleware.text.linking import EntityLinker
from middleware.text.verbalize import Verbalizer

SAME_DIRECTOR = ((ex("directedBy"), True), (ex("directedBy"), False))


@pytest.fixture
def store(tmp_path: Path) -> LocalStore:
    store = LocalStore(tmp_path / "films", profile="generic")
    store.load([films_path()])
    return store


def lessons() -> list[Lesson]:
    return [
        Lesson(
            "films/dev/1",
            "Which film shares a director with Titanic?",
            (ex("Titanic"),),
            (ex("Avatar"),),
        ),
        Lesson("films/dev/2", "Who directed Inception?", (ex("Inception"),), (ex("Nolan"),)),
        Lesson("films/dev/3", "Who starred in Avatar?", (), (ex("Saldana"),)),  # topic linked
        Lesson("films/dev/4", "Who is Kate Winslet married to?", (ex("Winslet"),), ()),
    ]


def planner(store: LocalStore, memory: PathMemory | None, **config: object) -> Planner:
    return Planner(
        store,
        HashEncoder(),
        linker=EntityLinker(store),
        verbalizer=Verbalizer(store),
        config=PlanSettings(**config),  # type: ignore[arg-type]
        memory=memory,
    )


def learn_lessons(
    store: LocalStore, memory: PathMemory, taught: list[Lesson] | None = None, **extra: Any
) -> LearnReport:
    """``learn`` of ``taught`` (default: ``lessons()``) into ``memory`` with the hash
    encoder, saved in the store."""
    return learn(
        store,
        memory,
        lessons() if taught is None else taught,
        path=store.path / FILE_NAME,  # type: ignore[operator]
        linker=EntityLinker(store),
        encoder=HashEncoder(),
        progress=False,
        **extra,
    )


def learned(store: LocalStore, taught: list[Lesson]) -> PathMemory:
    """A memory learned from ``taught`` with the hash encoder, saved in the store."""
    memory = PathMemory.new(store, "hash")
    learn_lessons(store, memory, taught)
    return memory


def films_with(tmp_path: Path, name: str, label: str, relation: str, target: str) -> LocalStore:
    """The films graph and one more entity ``name`` (labelled ``label``) with one edge."""
    store = LocalStore(tmp_path / "films", profile="generic")
    extra = tmp_path / "extra.ttl"
    label_iri = "http://www.w3.org/2000/01/rdf-schema#label"
    extra.write_text(
        f'<{ex(name).value}> <{label_iri}> "{label}" .\n'
        f"<{ex(name).value}> <{ex(relation).value}> <{ex(target).value}> .\n",
        encoding="utf-8",
    )
    store.load([films_path(), extra])
    return store


def test_mining_keeps_the_path_that_reaches_the_answers(store: LocalStore) -> None:
    best = mine(store, [ex("Titanic")], [ex("Avatar")])
    assert [from_key(m.key) for m in best] == [SAME_DIRECTOR]
    assert (best[0].reached, best[0].others) == (1, 0)
    assert mine(store, [ex("Titanic")], [ex("Nobody")]) == []


def test_learning_writes_a_memory_that_resumes_and_replaces(store: LocalStore) -> None:
    where = store.path / FILE_NAME  # type: ignore[operator]
    memory = PathMemory.new(store, "hash")
    report = learn(
        store,
        memory,
        lessons(),
        path=where,
        linker=EntityLinker(store),
        encoder=HashEncoder(),
        progress=False,
    )
    assert (report.learned, report.without_answers, report.skipped) == (3, 1, 0)
    saved = json.loads(where.read_text())
    assert saved["format"] == "kgmw-path-memory" and saved["version"] == 1
    assert saved["source"]["profile"] == "generic" and saved["counts"]["with_paths"] == 3
    entry = next(e for e in saved["entries"] if e["key"] == "films/dev/3")
    assert entry["question"] == "who starred in NE?"  # the linked topic span is masked
    loaded = PathMemory.load(where)
    assert loaded.vectors is not None and loaded.vectors.shape[0] == 3
    again = learn(
        store,
        loaded,
        lessons()[:2],
        path=where,
        linker=EntityLinker(store),
        encoder=HashEncoder(),
        progress=False,
    )
    assert (again.learned, again.skipped) == (0, 2)
    assert len(PathMemory.load(where).entries) == 3


def test_a_memory_of_another_source_or_profile_is_refused(
    store: LocalStore, tmp_path: Path
) -> None:
    memory = PathMemory.new(store, "hash")
    where = tmp_path / "memory.json"
    memory.save(where)
    other = LocalStore(tmp_path / "other", profile="generic")
    other.load([films_path()])
    with pytest.raises(ConfigError, match="learned on store"):
        open_memory(other, where)
    memory.source["profile"] = "metaqa"  # as if learned through another profile
    memory.save(where)
    with pytest.raises(ConfigError, match="profile metaqa"):
        open_memory(store, where)
    where.write_text("{not json")
    with pytest.raises(ConfigError, match="cannot read the path memory"):
        open_memory(store, where)


def test_loading_the_store_again_makes_the_memory_stale(store: LocalStore, tmp_path: Path) -> None:
    where = tmp_path / "memory.json"
    PathMemory.new(store, "hash").save(where)
    assert open_memory(store, where)[1] == []
    extra = tmp_path / "extra.nt"
    extra.write_text(
        "<http://example.org/film/X> <http://example.org/film/directedBy> <http://example.org/film/Nolan> .\n"
    )
    store.load([extra])
    assert "may be stale" in open_memory(store, where)[1][0]


def test_a_learned_memory_plans_a_new_question(store: LocalStore) -> None:
    memory = learned(store, lessons())
    planning = planner(store, memory).plan("Which film shares a director with Avatar?")
    assert planning.mode == "learned" and planning.plans
    best = planning.plans[0]
    assert best.candidate.path == SAME_DIRECTOR and best.candidate.topic == ex("Avatar")
    assert {w.nodes[-1] for w in best.walks} == {ex("Titanic")}
    assert 0 < planning.confidence <= 1


def test_zero_shot_ranks_the_paths_that_exist(store: LocalStore) -> None:
    planning = planner(store, None, max_plans=3).plan("Who directed Titanic?")
    assert planning.mode == "zero-shot" and 1 <= len(planning.plans) <= 3
    assert all(p.walks for p in planning.plans)
    reached = {w.nodes[-1] for p in planning.plans for w in p.walks}
    assert ex("Cameron") in reached


def test_a_question_with_no_linked_entity_says_why(store: LocalStore) -> None:
    planning = planner(store, None).plan("What is the meaning of life?")
    assert planning.mode == "none" and not planning.plans
    assert "links to an entity" in planning.notes[0]


def test_walks_never_come_back_through_the_topic(store: LocalStore) -> None:
    walks = store.follow(ex("Titanic"), SAME_DIRECTOR)
    assert all(ex("Titanic") not in w.nodes[1:] for w in walks)
    assert isinstance(walks[0].nodes[-1], NamedNode)


def test_the_plan_method_without_a_linked_entity_says_why(store: LocalStore) -> None:
    from middleware.methods.plan import Plan
    from middleware.testing.llms import first_option_or

    llm = first_option_or("I do not know")
    answer = Plan(llm, store, encoder=HashEncoder()).run("What is the meaning of life?")
    step = next(s for s in answer.steps if s.name == "plan")
    assert step.parsed["mode"] == "none" and step.parsed["plans"] == []
    assert any("no planner evidence" in w and "links to an entity" in w for w in answer.warnings)
    # nothing to answer from: not in the graph, and no answer call is made
    assert not answer.evidence and not answer.grounded and answer.usage.llm_calls == 0
    assert not answer.found


def test_zero_shot_choose_lets_the_model_reorder_the_plans(store: LocalStore) -> None:
    from middleware.llm.scripted import ScriptedLLM
    from middleware.methods.plan import Plan

    def pick_last(prompt: str) -> str:
        if "Options:" not in prompt:
            return "?"
        listed = prompt.rsplit("Options:\n", 1)[1].split("\nReply with", 1)[0]
        return listed.splitlines()[-1]

    config = PlanSettings(zero_shot_choose=True, max_plans=3)
    method = Plan(ScriptedLLM(default=pick_last), store, encoder=HashEncoder(), config=config)
    answer = method.run("Who directed Titanic?")
    step = next(s for s in answer.steps if s.name == "choose_plan")
    assert step.llm_calls == 1 and step.parsed.startswith("Titanic: ")
    garbled = Plan(ScriptedLLM(default="%%%"), store, encoder=HashEncoder(), config=config)
    assert any("picked no plan" in w for w in garbled.run("Who directed Titanic?").warnings)


def test_a_learned_plan_may_take_a_spans_second_entity(tmp_path: Path) -> None:
    """ "nolan" names a film exactly and Christopher Nolan by a short form: the learned
    path (films directed by NE) exists only from the person, so the person is planned."""
    store = films_with(tmp_path, "NolanFilm", "Nolan", "starring", "Winslet")
    memory = PathMemory.new(store, "hash")
    lesson = Lesson(
        "films/dev/9",
        "Which films did Sam Mendes direct?",
        (ex("Mendes"),),
        (ex("RevolutionaryRoad"),),
    )
    learn(
        store,
        memory,
        [lesson],
        path=store.path / FILE_NAME,
        linker=EntityLinker(store),
        encoder=HashEncoder(),
        progress=False,
    )  # type: ignore[operator]
    linked = EntityLinker(store).span_entities("which films did nolan direct?", per_span=3)
    assert [[e.label for e in es] for _, es in linked] == [["Nolan", "Christopher Nolan"]]
    planning = planner(store, memory).plan("which films did nolan direct?")
    assert planning.plans and planning.plans[0].candidate.topic == ex("Nolan")
    assert {w.nodes[-1] for w in planning.plans[0].walks} == {ex("Inception"), ex("Quoted")}
    # zero-shot cannot tell the two apart by the path, so it keeps the best-linked one
    zero_shot = planner(store, None).plan("which films did nolan direct?")
    assert {p.candidate.topic for p in zero_shot.plans} == {ex("NolanFilm")}


def _walk(topic: NamedNode, relation: str, end: NamedNode) -> Path_:
    return Path_((Hop(Triple(topic, ex(relation), end)),))


def test_answers_put_what_other_plans_also_reach_first() -> None:
    topic = ex("Country")
    plans = [
        Plan(
            Candidate(topic, "x", ((ex(rel), True),), support),
            [_walk(topic, rel, ex(end)) for end in ends_],
            rel,
        )
        for rel, support, ends_ in [
            ("speaks", 0.6, ["A", "B", "C"]),
            ("officialLanguage", 0.3, ["C"]),
            ("spokenIn", 0.1, ["C", "B"]),
        ]
    ]
    planning = Planning("learned", plans=plans)
    assert planning.answers() == [ex("C"), ex("B"), ex("A")]  # the best plan's, agreed first
    assert Planning("none").answers() == []


def test_the_phrase_weight_lets_the_question_outvote_the_neighbours(store: LocalStore) -> None:
    """The nearest learned question voted for directedBy, but this question says
    "starring": with the phrase weight the path whose phrase reads like the question
    comes first; without it the vote decides."""
    memory = learned(
        store,
        [
            Lesson(
                "films/dev/1", "Who is in the film Inception?", (ex("Inception"),), (ex("Nolan"),)
            ),
            Lesson("films/dev/2", "Who was starring in Avatar?", (ex("Avatar"),), (ex("Saldana"),)),
        ],
    )
    question = "Who is starring in the film Titanic?"
    first = {
        weight: planner(store, memory, phrase_weight=weight).plan(question).plans[0]
        for weight in (0.0, 1.0)
    }
    assert first[0.0].candidate.path == ((ex("directedBy"), True),)
    assert first[1.0].candidate.path == ((ex("starring"), True),)


def test_a_wider_ring_of_neighbours_fills_the_plans_after_the_vote(store: LocalStore) -> None:
    """With one voting neighbour, the next neighbours' paths still fill the plans left,
    after every voted path, so they add evidence but never decide the answer."""
    memory = learned(
        store,
        [
            Lesson("films/dev/1", "Who directed Inception?", (ex("Inception"),), (ex("Nolan"),)),
            Lesson("films/dev/2", "Who starred in Avatar?", (ex("Avatar"),), (ex("Saldana"),)),
        ],
    )
    planning = planner(store, memory, neighbours=1, max_plans=3).plan("Who directed Titanic?")
    paths = [p.candidate.path for p in planning.plans if not p.backup]
    assert paths[:2] == [((ex("directedBy"), True),), ((ex("starring"), True),)]
    assert planning.plans[1].candidate.support < 0.01 < planning.plans[0].candidate.support


def test_the_wider_ring_comes_after_the_zero_shot_backup(
    store: LocalStore, monkeypatch: pytest.MonkeyPatch
) -> None:
    """An unsure vote is followed by the zero-shot backup plan; paths of the wider ring
    only fill what is left after it (a transfer memory's 1-hop paths must not push a
    3-hop backup out)."""
    memory = learned(store, lessons()[:1])
    plans = planner(store, memory, max_plans=5, backup_below=0.5)
    titanic = ex("Titanic")
    voted = Candidate(titanic, "Titanic", ((ex("directedBy"), True),), 0.3)
    wide = Candidate(titanic, "Titanic", ((ex("starring"), True),), 0.0003, wide=True)
    backup = Candidate(titanic, "Titanic", SAME_DIRECTOR, 0.9)
    monkeypatch.setattr(plans, "_vote", lambda spans, vectors, unheld, worded: [voted, wide])
    monkeypatch.setattr(plans, "_rank", lambda spans, vectors, peers: [backup])
    planning = plans.plan("Which film shares a director with Titanic?")
    kinds = [
        "backup" if p.backup else "wide" if p.candidate.wide else "voted" for p in planning.plans
    ]
    assert kinds == ["voted", "backup", "wide"]


def test_the_backup_grows_paths_only_from_the_topics_the_vote_liked(
    store: LocalStore, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Growing zero-shot paths is the costly part of planning; of the question's linked
    spans, the backup grows from those whose entity the vote's best paths start at."""
    memory = learned(store, lessons()[:1])
    plans = planner(store, memory, max_plans=3, backup_below=0.5)
    unsure = Candidate(ex("Titanic"), "Titanic", ((ex("directedBy"), True),), 0.3)
    grown: list[list[str]] = []

    def rank(spans: list[tuple[str, NamedNode]], vectors: object, peers: bool) -> list[Candidate]:
        grown.append([span for span, _ in spans])
        return []

    monkeypatch.setattr(plans, "_vote", lambda spans, vectors, unheld, worded: [unsure])
    monkeypatch.setattr(plans, "_rank", rank)
    plans.plan("Did Kate Winslet star in Titanic?")
    assert grown == [["Titanic"]]


def test_the_backup_reads_each_spans_question_for_peers(
    store: LocalStore, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The backup's zero-shot ranking learns whether the question asks for the topic's
    peers ("shares a director with NE")."""
    memory = learned(store, lessons()[:1])
    plans = planner(store, memory, max_plans=3, backup_below=0.5)
    unsure = Candidate(ex("Titanic"), "Titanic", ((ex("directedBy"), True),), 0.3)
    asked: list[bool] = []

    def rank(spans: list[tuple[str, NamedNode]], vectors: object, peers: bool) -> list[Candidate]:
        asked.append(peers)
        return []

    monkeypatch.setattr(plans, "_vote", lambda spans, vectors, unheld, worded: [unsure])
    monkeypatch.setattr(plans, "_rank", rank)
    plans.plan("Which film shares a director with Titanic?")
    plans.plan("Who directed Titanic?")
    assert asked == [True, False]


def test_a_span_the_learned_questions_keep_is_their_wording_not_the_topic(
    tmp_path: Path,
) -> None:
    """ "director" names an entity too, and its path is as well voted as Titanic's, but
    every learned question says "director" around its masked topic: Titanic is planned
    first, and the wording span's plan only follows."""
    store = films_with(tmp_path, "Director", "Director", "directedBy", "Mendes")
    taught = [
        Lesson(f"films/dev/{i}", f"Who was the director of {film}?", (ex(film),), (ex(who),))
        for i, (film, who) in enumerate([("Inception", "Nolan"), ("Avatar", "Cameron")] * 2)
    ]
    memory = learned(store, taught)
    words = planner(store, memory).question_words()
    assert words.common("director") and not words.common("titanic")
    planning = planner(store, memory).plan("who was the director of titanic?")
    assert [p.candidate.span for p in planning.plans[:2]] == ["titanic", "director"]
    assert planning.answers() == [ex("Cameron")]


def test_a_vote_for_a_relation_the_topic_lacks_is_measured(store: LocalStore) -> None:
    # the neighbours ask who directed a film; an actor has no director
    memory = learned(store, lessons())
    plans = planner(store, memory)
    held = plans.plan("Who directed Avatar?")
    assert held.plans and held.unheld_share < 0.1
    lacking = plans.plan("Who directed Kate Winslet?")
    assert lacking.unheld[("Kate Winslet", ex("Winslet").value)] > 0.5
    assert lacking.unheld_share == (
        lacking.unheld[(lacking.plans[0].candidate.span, lacking.plans[0].candidate.topic.value)]
        if lacking.plans
        else 0.0
    )
    assert lacking.to_dict()["unheld"] == round(lacking.unheld_share, 4)
    # zero-shot, the paths her peers hold and she lacks are read instead (peer_paths.py)
    assert planner(store, None).plan("Who directed Kate Winslet?").unheld_share > 0.5


def test_an_answer_planned_along_a_relation_the_topic_lacks_can_be_withheld(
    store: LocalStore, tmp_path: Path
) -> None:
    from middleware.methods.calibration import Calibration, Model
    from middleware.methods.plan import Plan
    from middleware.methods.run import AnswerPolicy
    from middleware.testing.llms import first_option_or

    learned(store, lessons())
    wary = tmp_path / "calibration.json"
    model = Model(("bias", "supported", "unheld"), (0.0, 2.0, -6.0))
    wary.write_text(Calibration({"plan:learned": model}).to_json())
    method = Plan(
        first_option_or("I do not know"),
        store,
        encoder=HashEncoder(),
        policy=AnswerPolicy(calibration=str(wary)),
    )
    held = method.run("Who directed Avatar?")
    assert held.found and held.basis is not None and held.basis.unheld < 0.1
    lacking = method.run("Who directed Kate Winslet?")
    assert lacking.basis is not None and lacking.basis.unheld > 0.5
    assert lacking.basis.mode == "learned"
    assert not lacking.found and lacking.guess is not None
    assert lacking.guess.confidence < 0.3


def test_one_question_never_stops_learning(store: LocalStore) -> None:
    memory = PathMemory.new(store, "hash")
    report = learn_lessons(store, memory, budget_queries=2)  # too few for the 2-hop question
    assert report.over_budget >= 1 and report.learned + report.over_budget == 4 - 1
    assert any(p.startswith("films/dev/1: over budget") for p in report.problems)
    assert "films/dev/1" not in memory.entries  # so a later run retries it


def test_a_failing_source_stops_learning_after_saving(
    store: LocalStore, monkeypatch: pytest.MonkeyPatch
) -> None:
    from middleware.errors import EndpointError
    from middleware.planning import learning, mining_workers

    real = mining_workers.mine
    calls = []

    def failing(*args: object, **kwargs: object) -> object:
        calls.append(1)
        if len(calls) == 2:
            raise EndpointError("connection refused")
        return real(*args, **kwargs)  # type: ignore[arg-type]

    monkeypatch.setattr(mining_workers, "mine", failing)
    monkeypatch.setattr(learning, "reopener", lambda graph: None)  # mine in this process
    where = store.path / FILE_NAME
    with pytest.raises(
        EndpointError, match=r"1 question\(s\) learned in this run, and 1 in all, are saved"
    ) as caught:
        learn_lessons(store, PathMemory.new(store, "hash"))
    assert "connection refused" in str(caught.value) and "resumes" in (caught.value.hint or "")
    saved = open_memory(store, where)[0]
    assert saved is not None and list(saved.entries) == ["films/dev/1"]


def test_an_interrupt_while_encoding_still_saves_every_question(store: LocalStore) -> None:
    from middleware.planning.learning import LearnInterrupted

    class Interrupted(HashEncoder):
        def encode(self, texts: Any, **kwargs: Any) -> Any:
            raise KeyboardInterrupt

    where = store.path / FILE_NAME  # type: ignore[operator]
    with pytest.raises(
        LearnInterrupted, match=r"3 question\(s\) learned in this run, and 3 in all"
    ):
        learn(
            store,
            PathMemory.new(store, "hash"),
            lessons(),
            path=where,
            linker=EntityLinker(store),
            encoder=Interrupted(),
            progress=False,
        )
    saved = open_memory(store, where)[0]
    assert saved is not None and len(saved.entries) == 3 and saved.vectors is None


def test_a_resumed_memory_is_the_memory_of_an_uninterrupted_run(
    store: LocalStore, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from middleware.planning import learning, mining_workers
    from middleware.planning.learning import LearnInterrupted

    whole = PathMemory.new(store, "hash")
    learn_lessons(store, whole)
    real = mining_workers.mine_question
    calls: list[int] = []

    def stop_at_the_third(*args: Any) -> Any:
        calls.append(1)
        if len(calls) == 3:
            raise KeyboardInterrupt
        return real(*args)

    monkeypatch.setattr(mining_workers, "mine_question", stop_at_the_third)
    monkeypatch.setattr(learning, "reopener", lambda graph: None)
    where = store.path / FILE_NAME  # type: ignore[operator]
    where.unlink()
    with pytest.raises(LearnInterrupted):
        learn_lessons(store, PathMemory.new(store, "hash"))
    monkeypatch.undo()
    resumed = open_memory(store, where)[0]
    assert resumed is not None and len(resumed.entries) == 2
    learn_lessons(store, resumed)
    assert list(resumed.entries) == list(whole.entries)
    assert resumed.to_dict()["entries"] == whole.to_dict()["entries"]
    assert resumed.vectors is not None and whole.vectors is not None
    assert (resumed.vectors == whole.vectors).all()
