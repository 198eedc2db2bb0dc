"""Knowledge Solver with a scripted LLM: what each round offers, the history, the stop
rules, the hub cap, the choice mapping and the call count."""

from __future__ import annotations

from collections.abc import Sequence

import pytest

from middleware.config.methods import KSLSettings
from middleware.kg.backends.local import LocalStore
from middleware.kg.terms import Term
from middleware.llm.scripted import ScriptedLLM
from middleware.methods.answer import Answer
from middleware.methods.ksl import KnowledgeSolver
from middleware.methods.ksl.walk import Guide, Walk
from middleware.methods.run import Run
from middleware.text.embeddings import HashEncoder

FILMS = """\
Heat|directed_by|Michael Mann
Heat|starred_actors|Al Pacino
Heat|release_year|1995
Collateral|directed_by|Michael Mann
Collateral|starred_actors|Tom Cruise
Top Gun|starred_actors|Tom Cruise
Top Gun|release_year|1986
"""
QUESTION = "Which actors starred in films directed by Michael Mann?"


@pytest.fixture
def films() -> LocalStore:
    kg = LocalStore(profile="metaqa", name="films")
    kg.load_text(FILMS, name="kb.txt")
    return kg


def solver(llm: ScriptedLLM, kg: LocalStore, **config: object) -> KnowledgeSolver:
    """The paper's offer (every relation path) unless a test narrows it."""
    config.setdefault("max_relations", 0)
    return KnowledgeSolver(llm, kg, encoder=HashEncoder(), config=KSLSettings(**config))  # type: ignore[arg-type]


def walks(answer: Answer) -> list[dict]:
    return [s.parsed for s in answer.steps if s.name == "walk"]


def walking_llm(*picks: tuple[str, str], final: str = "Tom Cruise") -> ScriptedLLM:
    rules = [(rf"At: {at}\nOptions", pick) for at, pick in picks]
    return ScriptedLLM([*rules, ("Knowledge:", final)])


def test_each_round_offers_real_neighbours_with_reversed_readings(films: LocalStore) -> None:
    llm = walking_llm(
        ("Michael Mann", "Collateral (directed)"),
        ("Collateral", "Tom Cruise (starring)"),
        ("Tom Cruise", "Tom Cruise is the answer"),
    )
    answer = solver(llm, films).run(QUESTION)
    rounds = walks(answer)
    # directed_by walked backwards reads by the profile's inverse label
    assert rounds[0]["offered"] == ["Collateral (directed)", "Heat (directed)"]
    assert rounds[0]["at"] == "Michael Mann"
    # no way back to a visited entity; stopping is offered from the second round on
    assert rounds[1]["offered"] == ["Tom Cruise (starring)", "Collateral is the answer"]
    # ranked by how the relation path reads like the question, the shorter path first
    assert rounds[2]["offered"] == ["Tom Cruise is the answer", "Top Gun (starred in)"]
    assert [r["picked"] for r in rounds] == [
        "Collateral (directed)",
        "Tom Cruise (starring)",
        "Tom Cruise is the answer",
    ]
    # the walk's pick first, then what the same relation path reaches from the start
    assert answer.answer == "Tom Cruise, Al Pacino"
    assert [e.label for e in answer.entities] == ["Tom Cruise", "Al Pacino"]
    assert answer.grounded
    assert [p.text for p in answer.evidence.paths] == [
        "Michael Mann | directed | Collateral | starring | Tom Cruise",
        "Michael Mann | directed | Heat | starring | Al Pacino",
    ]
    assert answer.usage.llm_calls == 4  # three rounds and the final choice


def test_answer_items_one_keeps_the_walks_entity_only(films: LocalStore) -> None:
    llm = walking_llm(
        ("Michael Mann", "Collateral (directed)"),
        ("Collateral", "Tom Cruise (starring)"),
        ("Tom Cruise", "Tom Cruise is the answer"),
    )
    answer = solver(llm, films, answer_items=1).run(QUESTION)
    assert answer.answer == "Tom Cruise" and len(answer.evidence.paths) == 1


def test_the_walk_so_far_is_dialogue_history(films: LocalStore) -> None:
    llm = walking_llm(
        ("Michael Mann", "Collateral (directed)"),
        ("Collateral", "Tom Cruise (starring)"),
        ("Tom Cruise", "Tom Cruise is the answer"),
    )
    solver(llm, films).run(QUESTION)
    third = llm.calls[2].messages
    turns = [(m["role"], m["content"]) for m in third[-5:]]
    assert turns[0] == ("user", f"Question: {QUESTION}\nAt: Michael Mann\nChoice:")
    assert turns[1] == ("assistant", "Collateral (directed)")
    assert turns[2] == ("user", "At: Collateral\nChoice:")
    assert turns[3] == ("assistant", "Tom Cruise (starring)")
    assert turns[4][1].startswith("At: Tom Cruise\nOptions:\nTom Cruise is the answer\n")
    # the first round has no history: the question is in its own turn
    assert (
        llm.calls[0].messages[-1]["content"].startswith(f"Question: {QUESTION}\nAt: Michael Mann")
    )


def test_the_round_limit_stops_the_walk(films: LocalStore) -> None:
    llm = walking_llm(
        ("Michael Mann", "Collateral (directed)"),
        ("Collateral", "Tom Cruise (starring)"),
        final="Tom Cruise",
    )
    answer = solver(llm, films, rounds=2).run(QUESTION)
    assert len(walks(answer)) == 2
    assert answer.usage.llm_calls <= 2 + 1
    assert "round limit" in " ".join(n for s in answer.steps for n in s.notes)
    assert answer.answer.startswith("Tom Cruise")


def test_a_lone_option_is_taken_without_a_call(films: LocalStore) -> None:
    kg = LocalStore(profile="metaqa", name="one")
    kg.load_text("Heat|directed_by|Michael Mann\n", name="kb.txt")
    llm = ScriptedLLM([("Knowledge:", "Michael Mann")])
    answer = solver(llm, kg).run("Who directed Heat?")
    first = walks(answer)[0]
    assert first["offered"] == ["Michael Mann (directed by)"]
    assert answer.answer == "Michael Mann"
    # round 2 at Michael Mann: Heat is visited, only stopping is left: no call either
    assert answer.usage.llm_calls == 0
    assert answer.grounded


def test_a_dead_end_stops_the_walk(films: LocalStore) -> None:
    kg = LocalStore(profile="metaqa", name="two")
    kg.load_text("Heat|directed_by|Michael Mann\nHeat|release_year|1995\n", name="kb.txt")
    llm = ScriptedLLM([(r"At: Heat\nOptions", "1995 (released in)"), ("Knowledge:", "1995")])
    answer = solver(llm, kg).run("When was Heat released?")
    notes = " ".join(n for s in answer.steps for n in s.notes)
    assert "no unvisited neighbour" in notes or "is the answer" in notes
    assert answer.answer == "1995"


def test_a_reply_that_names_no_option_takes_the_first(films: LocalStore) -> None:
    llm = ScriptedLLM([("Options", "nonsense"), ("Knowledge:", "Heat")])
    answer = solver(llm, films, rounds=1).run(QUESTION)
    assert walks(answer)[0]["picked"] == "Collateral (directed)"
    assert any("picked no neighbour" in w for w in answer.warnings)


def hub() -> LocalStore:
    kg = LocalStore(profile="metaqa", name="hub")
    lines = [f"Film {i:02d}|has_genre|Drama" for i in range(30)]
    lines += ["Film 07|directed_by|Ann Hui", "Film 07|release_year|1999"]
    kg.load_text("\n".join(lines) + "\n", name="kb.txt")
    return kg


def test_the_hub_cap_ranks_relations_and_records_the_cut() -> None:
    llm = ScriptedLLM([(r"At: Drama\nOptions", "Film 07 (genre of)"), ("Knowledge:", "Ann Hui")])
    answer = solver(llm, hub(), max_options=5, rounds=1).run("Which films have the genre Drama?")
    first = walks(answer)[0]
    assert len(first["offered"]) == 5 and first["neighbours"] == 30 and first["cut"] == 25
    assert first["offered"][0] == "Film 00 (genre of)"  # graph order within the relation
    walk_notes = next(s.notes for s in answer.steps if s.name == "walk")
    assert any("offered 5 of 30" in n and "25 cut" in n for n in walk_notes)


def test_the_hub_cap_never_cuts_a_choice() -> None:
    choices = ["Film 29", "Film 28", "Ann Hui"]
    llm = ScriptedLLM([(r"At: Drama\nOptions", "Film 29 (genre of)"), ("Knowledge:", "Film 29")])
    answer = solver(llm, hub(), max_options=2).run(
        "Which of these is a Drama film?", choices=choices
    )
    first = walks(answer)[0]
    # Film 07 leads to Ann Hui in two hops, but the two choices reached in one are kept
    assert sorted(first["offered"]) == ["Film 28 (genre of)", "Film 29 (genre of)"]
    assert first["cut"] == 1
    assert answer.answer == "Film 29" and answer.usage.llm_calls == 1


def test_multiple_choice_maps_the_end_entity_to_its_choice(films: LocalStore) -> None:
    choices = ["Al Pacino", "Tom Cruise", "1986"]
    llm = walking_llm(
        ("Michael Mann", "Collateral (directed)"),
        ("Collateral", "Tom Cruise (starring)"),
    )
    answer = solver(llm, films).run(QUESTION, choices=choices)
    rounds = walks(answer)
    # the walk stays inside the subgraph of ≤ 2-hop paths to the choices
    assert rounds[0]["offered"] == ["Heat (directed)", "Collateral (directed)"]
    assert (
        rounds[1]["offered"] == ["Tom Cruise (starring)"]
        or "Tom Cruise (starring)" in rounds[1]["offered"]
    )
    assert answer.answer == "Tom Cruise"
    assert answer.usage.llm_calls == 1  # round 2 had one option; the choice needs no call
    sub = next(s.parsed for s in answer.steps if s.name == "subgraph")
    assert sub["films"]["paths"] >= 2
    assert answer.grounded


def test_multiple_choice_without_reaching_a_choice_makes_one_final_call(films: LocalStore) -> None:
    llm = ScriptedLLM([("Options:\nHeat", "Heat (directed)"), ("Knowledge:", "Al Pacino")])
    answer = solver(llm, films, rounds=1).run(QUESTION, choices=["Al Pacino", "Tom Cruise"])
    # the walk never reached Al Pacino: a pick among choices stands, but is not grounded
    assert answer.answer == "Al Pacino" and answer.found and not answer.grounded
    assert answer.usage.llm_calls == 2


def test_random_start_is_seeded(films: LocalStore) -> None:
    question = "Did Al Pacino and Tom Cruise act together?"
    starts = set()
    for _ in range(3):
        llm = ScriptedLLM(default="x")
        answer = solver(llm, films, start="random", seed=3, rounds=1).run(question)
        starts.add(walks(answer)[0]["at"])
    assert len(starts) == 1
    seen = {
        walks(
            solver(ScriptedLLM(default="x"), films, start="random", seed=s, rounds=1).run(question)
        )[0]["at"]
        for s in range(12)
    }
    assert seen == {"Al Pacino", "Tom Cruise"}


class Planned(Guide):
    confident = True

    def planned(self, nodes: Sequence[Term]) -> dict[Term, float]:
        names = [str(n.value).rsplit("/", 1)[-1] for n in nodes]
        if names == ["Michael%20Mann"]:
            return {n: 1.0 for n in films_nodes(nodes, "Heat")}
        return {}

    def stops(self, nodes: Sequence[Term]) -> float:
        return 1.0 if len(nodes) == 2 else 0.0


def films_nodes(nodes: Sequence[Term], name: str) -> list[Term]:
    from pyoxigraph import NamedNode

    return [NamedNode(f"https://kgmw.dev/metaqa/entity/{name}")]


def guided_walk(
    kg: LocalStore,
    llm: ScriptedLLM,
    question: str,
    span: str,
    guide: Guide,
    *,
    rounds: int,
    options: int,
) -> tuple[Run, Walk]:
    """One ``ksl+plan`` walk from the question's first linked entity, with ``guide``."""
    from middleware.methods.ksl.walk import Walker
    from middleware.text.verbalize import Verbalizer

    method = solver(llm, kg)
    run = Run(question, "ksl+plan", llm, graphs=[kg])
    item = method.link(run)[0]
    verbalizer = Verbalizer(kg)
    walker = Walker(
        run,
        verbalizer,
        method.neighbours(item, verbalizer),
        method.score(question, span, verbalizer),
        rounds=rounds,
        max_options=options,
        guide=guide,
    )
    return run, walker.walk(item.question[0])


def test_a_confident_plan_offers_only_its_steps(films: LocalStore) -> None:
    llm = ScriptedLLM(default="x")
    run, walk = guided_walk(films, llm, QUESTION, "Michael Mann", Planned(), rounds=5, options=20)
    rounds = [s.parsed for s in run.steps if s.name == "walk"]
    assert rounds[0]["offered"] == ["Heat (directed)"]
    assert rounds[1]["offered"] == ["Heat is the answer"]
    assert walk.stop == "answered" and len(llm.calls) == 0


def test_plan_guide_reads_next_steps_and_ends_from_the_planned_walks(films: LocalStore) -> None:
    from middleware.methods.ksl.guide import PlanGuide
    from middleware.planning.plans import Candidate, Plan, Planning
    from middleware.planning.relpaths import walked

    mann = films.search("Michael Mann")[0].iri
    walks = [w for w in films.paths(mann, films.search("Tom Cruise")[0].iri, max_hops=2)]
    path = walked(walks[0])
    plan = Plan(Candidate(mann, "Michael Mann", path, 0.8), walks, "directed⁻¹ → starring")
    guide = PlanGuide(Planning("learned", plans=[plan]), min_confidence=0.5)
    collateral, cruise = walks[0].nodes[1], walks[0].nodes[2]
    assert guide.confident and guide.topic == mann
    assert guide.planned([mann]) == {collateral: 0.8}
    assert guide.planned([mann, collateral]) == {cruise: 0.8}
    assert guide.stops([mann, collateral]) == 0.0
    assert guide.stops([mann, collateral, cruise]) == 0.8
    # zero-shot, a backup, or support below the threshold: ranked first, never alone
    assert not PlanGuide(Planning("zero-shot", plans=[plan]), min_confidence=0.0).confident
    assert not PlanGuide(Planning("learned", plans=[plan]), min_confidence=0.9).confident


def test_the_relation_focus_offers_the_best_relation_paths_only(films: LocalStore) -> None:
    kg = LocalStore(profile="metaqa", name="focus")
    kg.load_text(
        "Heat|directed_by|Michael Mann\nHeat|starred_actors|Al Pacino\n"
        "Heat|starred_actors|Robert De Niro\nHeat|release_year|1995\n",
        name="kb.txt",
    )
    llm = ScriptedLLM([("Options", "Al Pacino (starring)"), ("Knowledge:", "Al Pacino")])
    answer = solver(llm, kg, max_relations=1).run("Who starred in Heat?")
    first = walks(answer)[0]
    assert first["offered"] == ["Al Pacino (starring)", "Robert De Niro (starring)"]
    assert first["cut"] == 2
    notes = next(s.notes for s in answer.steps if s.name == "walk")
    assert any("1 relation paths" in n and "2 other relation paths left out" in n for n in notes)


def test_with_choices_the_planned_walks_that_reach_a_choice_guide(films: LocalStore) -> None:
    from middleware.methods.ksl.guide import PlanGuide
    from middleware.planning.plans import Candidate, Plan, Planning
    from middleware.planning.relpaths import walked

    mann = films.search("Michael Mann")[0].iri
    cruise, pacino = films.search("Tom Cruise")[0].iri, films.search("Al Pacino")[0].iri
    walks = films.paths(mann, cruise, max_hops=2) + films.paths(mann, pacino, max_hops=2)
    plan = Plan(Candidate(mann, "Michael Mann", walked(walks[0]), 0.8), walks, "")
    guide = PlanGuide(Planning("learned", plans=[plan]), min_confidence=0.0, targets={pacino})
    heat = walks[-1].nodes[1]
    assert guide.planned([mann]) == {heat: 0.8}  # Collateral leads to no choice


def test_several_sources_walk_in_the_one_whose_subgraph_reaches_the_choices(
    films: LocalStore,
) -> None:
    other = LocalStore(profile="metaqa", name="other")
    other.load_text("Alien|directed_by|Ridley Scott\n", name="kb.txt")
    llm = walking_llm(("Michael Mann", "Collateral (directed)"))
    answer = solver(llm, films).run(
        QUESTION, choices=["Al Pacino", "Tom Cruise"], sources=[other, films]
    )
    sub = next(s.parsed for s in answer.steps if s.name == "subgraph")
    assert sub["other"]["paths"] == 0 and sub["films"]["paths"] > 0
    assert answer.answer == "Tom Cruise" and answer.sources == ["other", "films"]
    assert all(p.source == "films" for p in answer.evidence.paths)


def test_few_shot_off_sends_the_instruction_and_the_rounds_only(films: LocalStore) -> None:
    """A tuned model was trained on rounds without the prompt's worked examples."""
    picks = (
        ("Michael Mann", "Collateral (directed)"),
        ("Collateral", "Tom Cruise (starring)"),
        ("Tom Cruise", "Tom Cruise is the answer"),
    )
    shown = walking_llm(*picks)
    solver(shown, films).run(QUESTION)
    plain = walking_llm(*picks)
    solver(plain, films, few_shot="off").run(QUESTION)
    with_examples, without = shown.calls[1].messages, plain.calls[1].messages
    assert [m["role"] for m in without] == ["system", "user", "assistant", "user"]
    assert with_examples[0] == without[0]  # the same instruction
    assert with_examples[-3:] == without[-3:]  # the same rounds
    assert len(with_examples) > len(without)


@pytest.mark.parametrize(
    ("overrides", "expected"),
    [
        ({}, "on"),
        ({"llm": "transformers", "llm_adapter": "run/adapter"}, "off"),
        ({"llm": "transformers"}, "on"),
        ({"llm": "transformers", "llm_adapter": "run/adapter", "ksl_few_shot": "on"}, "on"),
        ({"ksl_few_shot": "off"}, "off"),
    ],
)
def test_few_shot_auto_is_off_for_a_tuned_adapter_only(
    films: LocalStore, overrides: dict[str, str], expected: str
) -> None:
    from middleware.config import Settings
    from middleware.methods.registry import build_method

    settings = Settings.load(overrides={"encoder": "hash", **overrides})
    method = build_method("ksl", settings, ScriptedLLM(default="x"), films)
    assert isinstance(method, KnowledgeSolver)
    assert method.config.few_shot == expected


class PlansEveryFilm(Guide):
    """A plan that steps from Drama to each of its 30 films (as a hub's planned walks
    can), confident or not."""

    def __init__(self, confident: bool) -> None:
        self.confident = confident

    def planned(self, nodes: Sequence[Term]) -> dict[Term, float]:
        from pyoxigraph import NamedNode

        if len(nodes) != 1:
            return {}
        films = [f"https://kgmw.dev/metaqa/entity/Film%20{i:02d}" for i in range(30)]
        return {NamedNode(iri): 1.0 for iri in films}  # all equally supported


@pytest.mark.parametrize("confident", [True, False])
def test_planned_steps_are_capped_too(confident: bool) -> None:
    llm = ScriptedLLM(default="Film 03 (genre of)")
    question = "Which films have the genre Drama?"
    guide = PlansEveryFilm(confident)
    run, _ = guided_walk(hub(), llm, question, "Drama", guide, rounds=1, options=5)
    first = next(s for s in run.steps if s.name == "walk")
    # the best-supported planned steps, no more than the cap, and the cut is recorded
    assert first.parsed["offered"] == [f"Film {i:02d} (genre of)" for i in range(5)]
    assert first.parsed["cut"] == 25
    assert any("25 cut" in n for n in first.notes)
