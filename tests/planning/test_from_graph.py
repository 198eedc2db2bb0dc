"""A path memory learned from the graph alone: wordings, the census, resuming, errors."""

from __future__ import annotations

from pathlib import Path

import pytest

from middleware.config.methods import PlanSettings
from middleware.errors import ConfigError, EndpointError
from middleware.kg.backends.local import LocalStore
from middleware.planning import from_graph
from middleware.planning.from_graph import GraphLessons, census_path, learn_from_graph
from middleware.planning.learning import Lesson, learn
from middleware.planning.memory import FILE_NAME, MemoryEntry, PathMemory
from middleware.planning.mining import MinedPath
from middleware.planning.planner import Planner
from middleware.planning.relpaths import from_key, path_key
from middleware.planning.wordings import Reading, wordings
from middleware.testing.graphs import ex, films_path
from middleware.text.embeddings import HashEncoder
from middleware.text.linking import EntityLinker
from middleware.text.verbalize import Verbalizer
from tests.planning.test_junctions import collision_turtle

DIRECTED_BY = path_key(((ex("directedBy"), True),))


@pytest.fixture
def store(tmp_path: Path) -> LocalStore:
    store = LocalStore(tmp_path / "films", profile="generic")
    store.load([films_path()])
    return store


def learned(store: LocalStore, memory: PathMemory, where: Path, **config: object) -> object:
    return learn_from_graph(
        store,
        memory,
        path=where,
        verbalizer=Verbalizer(store),
        encoder=HashEncoder(),
        config=GraphLessons(**config),  # type: ignore[arg-type]
        progress=False,
    )


def learn_a_question(store: LocalStore, memory: PathMemory, where: Path) -> list[str]:
    """``learn`` of "Who directed Inception?" into ``memory``; the run's warnings."""
    lesson = Lesson("q/1", "Who directed Inception?", (ex("Inception"),), (ex("Nolan"),))
    report = learn(
        store,
        memory,
        [lesson],
        path=where,
        linker=EntityLinker(store),
        encoder=HashEncoder(),
        progress=False,
        workers=1,
    )
    return report.warnings


def planner(store: LocalStore, memory: PathMemory) -> Planner:
    return Planner(
        store,
        HashEncoder(),
        linker=EntityLinker(store),
        verbalizer=Verbalizer(store),
        config=PlanSettings(),
        memory=memory,
    )


def test_wordings_read_a_path_both_ways_and_ask_when_for_dates() -> None:
    one = [Reading(answer_side="directed", topic_side="directed by")]
    found = wordings(one)
    assert "who directed NE?" in found and "NE directed by what?" in found
    assert not any(w.startswith("when") for w in found)
    assert "when directed NE?" in wordings(one, dated=True)
    assert len(found) == len(set(found))


def test_a_step_out_and_back_over_one_relation_is_worded_as_sharing_it() -> None:
    same = [Reading("directed", "directed by"), Reading("directed by", "directed")]
    assert "which ones have the same directed by as NE?" in wordings(same)
    other = [Reading("directed", "directed by"), Reading("starring", "starred in")]
    assert not any("same" in w for w in wordings(other))


def test_a_memory_from_the_graph_answers_with_generated_entries(
    store: LocalStore, tmp_path: Path
) -> None:
    where = tmp_path / "memory.json"
    memory = PathMemory.new(store, "hash")
    report = learned(store, memory, where)
    saved = PathMemory.load(where)
    assert saved.entries and all(e.generated for e in saved.entries.values())
    assert any(e.paths[0].key == DIRECTED_BY for e in saved.entries.values())
    assert report.entries == len(saved.entries)  # type: ignore[attr-defined]
    assert not census_path(where).exists()  # the census goes once the memory is saved
    planning = planner(store, saved).plan("Who directed Inception?")
    assert planning.mode == "generated"
    best = planning.plans[0]
    assert path_key(best.candidate.path) == DIRECTED_BY and best.generated
    assert planning.answers()[0] == ex("Nolan")
    assert planning.to_dict()["plans"][0]["generated"] is True


def test_learning_from_the_graph_again_keeps_learned_entries(
    store: LocalStore, tmp_path: Path
) -> None:
    where = tmp_path / "memory.json"
    memory = PathMemory.new(store, "hash")
    mine = MemoryEntry(
        "films/dev/1", "who made NE?", [MinedPath(DIRECTED_BY, ex("Avatar").value, 1, 0)]
    )
    memory.add(mine)
    learned(store, memory, where, per_role=2)
    first = {k for k, e in memory.entries.items() if e.generated}
    learned(store, memory, where, per_role=5)
    saved = PathMemory.load(where)
    assert "films/dev/1" in saved.entries and not saved.entries["films/dev/1"].generated
    assert first <= {k for k, e in saved.entries.items() if e.generated}
    mixed = planner(store, saved).plan("Who directed Inception?")
    assert mixed.mode == "learned"  # a user's question is in it


def test_a_users_question_outvotes_a_generated_one_of_the_same_wording(
    store: LocalStore, tmp_path: Path
) -> None:
    starring = path_key(((ex("starring"), True),))
    memory = PathMemory.new(store, "hash")
    memory.add(
        MemoryEntry(
            "graph:x#0", "who is in NE?", [MinedPath(DIRECTED_BY, "", 1, 0)], "1", generated=True
        )
    )
    memory.add(MemoryEntry("mine/1", "who is in NE?", [MinedPath(starring, "", 1, 0)], "1"))
    best = planner(store, memory).plan("Who is in Inception?").plans[0]
    assert path_key(best.candidate.path) == starring and not best.generated


def test_a_graph_without_labels_is_refused_with_what_to_do(tmp_path: Path) -> None:
    data = tmp_path / "bare.nt"
    data.write_text(
        "<http://x/a> <http://x/knows> <http://x/b> .\n<http://x/b> <http://x/knows> <http://x/c> .\n",
        encoding="utf-8",
    )
    store = LocalStore(tmp_path / "bare", profile="generic")
    store.load([data])
    with pytest.raises(ConfigError, match="has a label") as err:
        learned(store, PathMemory.new(store, "hash"), tmp_path / "m.json")
    assert "label" in (err.value.hint or "")
    assert not (tmp_path / "m.json").exists()


def test_a_graph_without_relation_paths_gives_an_empty_memory_and_a_warning(
    tmp_path: Path,
) -> None:
    data = tmp_path / "labels.ttl"
    data.write_text(
        "@prefix rdfs: <http://www.w3.org/2000/01/rdf-schema#> .\n"
        '<http://x/a> rdfs:label "A" .\n<http://x/b> rdfs:label "B" .\n',
        encoding="utf-8",
    )
    store = LocalStore(tmp_path / "labels", profile="generic")
    store.load([data])
    memory = PathMemory.new(store, "hash")
    report = learned(store, memory, tmp_path / "m.json")
    assert report.entries == 0  # type: ignore[attr-defined]
    assert any("no relation path" in w for w in report.warnings)  # type: ignore[attr-defined]
    assert PathMemory.load(tmp_path / "m.json").entries == {}


def test_an_interrupted_run_resumes_from_its_census(
    store: LocalStore, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    where = tmp_path / "memory.json"
    real_grow = from_graph.grow
    grown: list[str] = []

    def grow_then_stop(graph: LocalStore, topic: object, **kwargs: object) -> object:
        if len(grown) == 3:
            raise KeyboardInterrupt
        grown.append(str(topic))
        return real_grow(graph, topic, **kwargs)  # type: ignore[arg-type]

    monkeypatch.setattr(from_graph, "grow", grow_then_stop)
    with pytest.raises(KeyboardInterrupt):
        learned(store, PathMemory.new(store, "hash"), where)
    assert census_path(where).is_file() and not where.exists()

    def grow_all(graph: LocalStore, topic: object, **kwargs: object) -> object:
        grown.append(str(topic))
        return real_grow(graph, topic, **kwargs)  # type: ignore[arg-type]

    monkeypatch.setattr(from_graph, "grow", grow_all)
    report = learned(store, PathMemory.new(store, "hash"), where)
    assert report.resumed  # type: ignore[attr-defined]
    assert len(grown) == report.topics  # type: ignore[attr-defined]  # none grown twice
    assert len(set(grown)) == len(grown)


def test_a_census_of_another_graph_version_is_not_resumed(
    store: LocalStore, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    where = tmp_path / "memory.json"
    real_grow = from_graph.grow
    calls = [0]

    def stop_after_one(graph: LocalStore, topic: object, **kwargs: object) -> object:
        calls[0] += 1
        if calls[0] > 1:
            raise KeyboardInterrupt
        return real_grow(graph, topic, **kwargs)  # type: ignore[arg-type]

    monkeypatch.setattr(from_graph, "grow", stop_after_one)
    with pytest.raises(KeyboardInterrupt):
        learned(store, PathMemory.new(store, "hash"), where)
    monkeypatch.setattr(from_graph, "grow", real_grow)
    extra = tmp_path / "more.ttl"
    extra.write_text(
        "<http://example.org/film/Heat> <http://example.org/film/directedBy> "
        "<http://example.org/film/Mann> .\n",
        encoding="utf-8",
    )
    store.load([extra])
    report = learned(store, PathMemory.new(store, "hash"), where)
    assert not report.resumed  # type: ignore[attr-defined]


def test_the_model_may_choose_among_generated_plans_too(store: LocalStore) -> None:
    from middleware.llm.scripted import ScriptedLLM
    from middleware.methods.plan import Plan

    learned(store, PathMemory.new(store, "hash"), store.path / FILE_NAME)

    def pick_last(prompt: str) -> str:
        if "Options:" not in prompt:
            return "?"
        return prompt.rsplit("Options:\n", 1)[1].split("\nReply with", 1)[0].splitlines()[-1]

    config = PlanSettings(zero_shot_choose=True, max_plans=3)
    method = Plan(ScriptedLLM(default=pick_last), store, encoder=HashEncoder(), config=config)
    answer = method.run("Who starred in Titanic?")
    plan = next(s for s in answer.steps if s.name == "plan")
    assert plan.parsed["mode"] == "generated"
    chosen = next(s for s in answer.steps if s.name == "choose_plan")
    assert chosen.llm_calls == 1 and chosen.parsed.startswith("Titanic: ")


def test_a_run_stopped_by_its_time_keeps_its_census_and_a_later_run_continues(
    store: LocalStore, tmp_path: Path
) -> None:
    where = tmp_path / "memory.json"
    first = learned(store, PathMemory.new(store, "hash"), where, seconds=-1.0)
    assert first.grown == 0 and any("continues" in w for w in first.warnings)  # type: ignore[attr-defined]
    assert census_path(where).is_file()
    later = learned(store, PathMemory.load(where), where, seconds=60.0)
    assert later.resumed and later.grown == later.topics > 0  # type: ignore[attr-defined]
    assert not census_path(where).exists()


def test_a_relation_few_entities_have_is_still_worded(store: LocalStore, tmp_path: Path) -> None:
    memory = PathMemory.new(store, "hash")
    learned(store, memory, tmp_path / "m.json", min_share=0.9)  # longer paths: none kept
    kept = {e.paths[0].key for e in memory.entries.values()}
    assert path_key(((ex("marriedTo"), True),)) in kept  # one triple in the whole graph
    assert all(len(from_key(k)) == 1 for k in kept)


def test_unlabeled_entities_first_do_not_refuse_a_labeled_graph(
    store: LocalStore, tmp_path: Path
) -> None:
    rows = [
        f"<http://a.org/s{i}_{j}> <http://a.org/aaa{i}> <http://a.org/o{i}_{j}> ."
        for i in range(1, 7)
        for j in range(30)
    ]
    extra = tmp_path / "unlabeled.nt"
    extra.write_text("\n".join(rows) + "\n", encoding="utf-8")
    store.load([extra])
    report = learned(store, PathMemory.new(store, "hash"), tmp_path / "m.json")
    assert report.entries > 0  # type: ignore[attr-defined]


def test_stale_learned_entries_stay_stale_after_learning_from_the_graph(
    store: LocalStore, tmp_path: Path
) -> None:
    memory = PathMemory.new(store, "hash")
    memory.add(MemoryEntry("q/1", "who made NE?", [MinedPath(DIRECTED_BY, "", 1, 0)]))
    memory.fingerprint = {"generation": "an older one"}
    report = learned(store, memory, tmp_path / "m.json")
    assert memory.fingerprint == {"generation": "an older one"}
    assert any("learn --dataset again" in w for w in report.warnings)  # type: ignore[attr-defined]
    assert memory.check(store)  # the stale warning stays


def test_learning_questions_on_a_reloaded_graph_drops_generated_entries(
    store: LocalStore, tmp_path: Path
) -> None:
    where = tmp_path / "m.json"
    memory = PathMemory.new(store, "hash")
    learned(store, memory, where)
    extra = tmp_path / "more.nt"
    extra.write_text(f"<{ex('Heat').value}> <{ex('directedBy').value}> <{ex('Mann').value}> .\n")
    store.load([extra])
    warnings = learn_a_question(store, memory, where)
    assert not any(e.generated for e in memory.entries.values())
    assert any("learn --from-graph again" in w for w in warnings)


def test_a_relation_with_no_inverse_label_reads_its_other_way_by_its_form() -> None:
    from pyoxigraph import NamedNode

    from middleware.kg.relations import RelationCatalog, RelationInfo
    from middleware.planning.wordings import readings

    catalog = {
        "http://x/partOf": RelationInfo("http://x/partOf", "part of"),
        "http://x/directedBy": RelationInfo("http://x/directedBy", "directed by"),
        "http://x/nationality": RelationInfo("http://x/nationality", "nationality"),
    }
    verbalizer = Verbalizer(relations=RelationCatalog(catalog))
    part, directed, nation = (NamedNode(k) for k in catalog)
    assert readings(((part, True),), verbalizer)[0].answer_side == "has part"
    assert readings(((nation, True),), verbalizer)[0].answer_side == "nationality of"
    assert readings(((directed, True),), verbalizer)[0].answer_side == "directed by (reversed)"


def test_plans_from_the_wider_ring_of_generated_entries_say_so(
    store: LocalStore, tmp_path: Path
) -> None:
    where = tmp_path / "m.json"
    learned(store, PathMemory.new(store, "hash"), where)
    made = Planner(
        store,
        HashEncoder(),
        linker=EntityLinker(store),
        verbalizer=Verbalizer(store),
        config=PlanSettings(neighbours=1, backup_below=0.0),
        memory=PathMemory.load(where),
    )
    planning = made.plan("Who directed Inception?")
    wide = [c for c in planning.considered if c.wide]
    assert wide and all(path_key(c.path) in planning.worded for c in wide)


def test_the_index_is_shared_only_once_it_is_full(
    store: LocalStore, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from middleware.text.embeddings.index import VectorIndex

    where = tmp_path / "m.json"
    learned(store, PathMemory.new(store, "hash"), where)
    made = planner(store, PathMemory.load(where))
    seen: list[object] = []
    real_add = VectorIndex.add

    def add(self: VectorIndex[int], *args: object, **kwargs: object) -> None:
        seen.append(made._index)  # what another thread would read meanwhile
        real_add(self, *args, **kwargs)  # type: ignore[arg-type]

    monkeypatch.setattr(VectorIndex, "add", add)
    made.index()
    assert seen == [None]


def test_generated_entries_worded_after_a_reload_survive_learning_questions(
    store: LocalStore, tmp_path: Path
) -> None:
    where = tmp_path / "m.json"
    memory = PathMemory.new(store, "hash")

    def learn_questions() -> list[str]:
        return learn_a_question(store, memory, where)

    learn_questions()
    extra = tmp_path / "more.nt"
    extra.write_text(f"<{ex('Heat').value}> <{ex('directedBy').value}> <{ex('Mann').value}> .\n")
    store.load([extra])
    learned(store, memory, where)  # after the reload, over stale learned entries
    assert memory.check(store)  # the learned entries are still from before
    warnings = learn_questions()
    assert any(e.generated for e in memory.entries.values())
    assert not any("dropped" in w for w in warnings)
    assert memory.check(store) == []


def test_a_run_stopped_early_has_grown_topics_of_many_relations(
    store: LocalStore, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Topics are grown shuffled: the first few come from several predicates and sides."""
    topics = from_graph.sample_topics(store, GraphLessons(per_role=20))
    first = topics[: len(topics) // 3]
    kinds = {tuple(sorted(str(p) for p, _ in store.relation_steps([t]))) for t in first}
    assert len(kinds) > 1


def test_one_labeled_relation_among_many_unlabeled_is_enough(tmp_path: Path) -> None:
    rows = [
        f"<http://a.org/s{i}_{j}> <http://a.org/aaa{i}> <http://a.org/o{i}_{j}> ."
        for i in range(30)
        for j in range(30)
    ]
    rows += [
        "<http://a.org/heat> <http://a.org/zDirectedBy> <http://a.org/mann> .",
        '<http://a.org/heat> <http://www.w3.org/2000/01/rdf-schema#label> "Heat" .',
    ]
    data = tmp_path / "mostly.nt"
    data.write_text("\n".join(rows) + "\n", encoding="utf-8")
    store = LocalStore(tmp_path / "mostly", profile="generic")
    store.load([data])
    report = learned(store, PathMemory.new(store, "hash"), tmp_path / "m.json")
    assert report.entries > 0  # type: ignore[attr-defined]


def test_a_path_through_a_name_collision_is_left_out(tmp_path: Path) -> None:
    """A genre that is also a film's title (``collision_turtle``): the path genre →
    directed by leaves most films, yet one genre of nine has a director. Same-director
    films (directed by → directed by⁻¹) stay."""
    data = tmp_path / "collide.ttl"
    data.write_text(collision_turtle(), encoding="utf-8")
    store = LocalStore(tmp_path / "store", profile="generic")
    store.load([data])
    collision = path_key(((ex("genre"), True), (ex("directedBy"), True)))
    same_director = path_key(((ex("directedBy"), True), (ex("directedBy"), False)))

    def kept(**config: object) -> tuple[set[str], object]:
        memory = PathMemory.new(store, "hash")
        report = learned(store, memory, tmp_path / "m.json", min_share=0.01, **config)
        return {e.paths[0].key for e in memory.entries.values()}, report

    paths, report = kept()
    assert same_director in paths and collision not in paths
    assert report.incoherent >= 1  # type: ignore[attr-defined]
    # the mechanism, not the sample: with no least share the collision is worded too
    paths, report = kept(min_junction=0.0)
    assert collision in paths and report.incoherent == 0  # type: ignore[attr-defined]


def test_junctions_that_cannot_be_read_keep_every_path_with_a_warning(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    store = LocalStore(tmp_path / "films", profile="generic")
    store.load([films_path()])

    def refused(*_: object, **__: object) -> dict[object, float]:
        raise EndpointError("the endpoint answered 503")

    monkeypatch.setattr(store, "step_shares", refused)
    memory = PathMemory.new(store, "hash")
    report = learned(store, memory, tmp_path / "m.json", min_share=0.01)
    assert any("could not be read" in w and "503" in w for w in report.warnings)  # type: ignore[attr-defined]
    assert report.incoherent == 0 and report.kept_paths == report.common  # type: ignore[attr-defined]
    assert (tmp_path / "m.json").is_file()
