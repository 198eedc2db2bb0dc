"""MetaQA multiple-choice variants: choices built from the graph, seeded; the reach baseline."""

from __future__ import annotations

from pathlib import Path

import pytest

from middleware.errors import BadRequest
from middleware.eval.items import EvalItem
from middleware.eval.multiple_choice import Chooser, draw_with_choices
from middleware.eval.selection import choose
from middleware.kg.backends.local import LocalStore
from middleware.llm.scripted import ScriptedLLM
from middleware.methods.answer import NOT_FOUND
from middleware.methods.reachable import Reachable

KB = """\
Heat|directed_by|Michael Mann
Heat|written_by|Michael Mann
Heat|starred_actors|Al Pacino
Heat|starred_actors|Robert De Niro
Heat|starred_actors|Val Kilmer
Heat|starred_actors|Jon Voight
Heat|release_year|1995
Heat|has_genre|Crime
Collateral|directed_by|Michael Mann
Collateral|starred_actors|Tom Cruise
Collateral|starred_actors|Jamie Foxx
Collateral|release_year|2004
Ronin|starred_actors|Robert De Niro
Ronin|directed_by|John Frankenheimer
Ronin|starred_actors|Jean Reno
Ronin|has_genre|Crime
Miami Vice|starred_actors|Michael Mann
"""
PEOPLE = {
    "Michael Mann", "Al Pacino", "Robert De Niro", "Val Kilmer", "Jon Voight", "Tom Cruise",
    "Jamie Foxx", "John Frankenheimer", "Jean Reno",
}  # fmt: skip


@pytest.fixture
def kg() -> LocalStore:
    store = LocalStore(profile="metaqa", name="films")
    store.load_text(KB, name="kb.txt")
    return store


def one_hop() -> EvalItem:
    return EvalItem("q1", "who directed [Heat]", ("Michael Mann",), topic_entities=("Heat",))


def two_hop() -> EvalItem:
    return EvalItem(
        "q2",
        "who starred in the films directed by [Michael Mann]",
        ("Al Pacino", "Robert De Niro", "Val Kilmer", "Jon Voight", "Tom Cruise", "Jamie Foxx"),
        topic_entities=("Michael Mann",),
    )


def test_one_hop_choices_are_reachable_people_and_reproducible(kg: LocalStore) -> None:
    made = Chooser(kg, hops=1, seed=7).make(one_hop())
    assert isinstance(made, EvalItem)
    assert made.answer_key == "Michael Mann" and "Michael Mann" in made.choices
    assert len(made.choices) == 5 and set(made.choices) <= PEOPLE  # the gold's kind
    assert made.answers == ("Michael Mann",)
    again = Chooser(kg, hops=1, seed=7).make(one_hop())
    assert isinstance(again, EvalItem) and again.choices == made.choices
    other = {Chooser(kg, hops=1, seed=s).make(one_hop()).choices for s in range(8)}  # type: ignore[union-attr]
    assert len(other) > 1  # the seed draws and shuffles


def test_two_hop_distractors_are_never_gold(kg: LocalStore) -> None:
    made = Chooser(kg, hops=2, seed=1).make(two_hop())
    # six of the nine people are gold: fewer than 4 distractors are left
    assert made == "fewer than 4 distractors of the gold's kind within 2 hops"


def test_a_gold_out_of_reach_or_a_missing_topic_is_skipped(kg: LocalStore) -> None:
    far = EvalItem("q3", "who directed [Heat]", ("Jean Reno",), topic_entities=("Tom Cruise",))
    assert "no gold answer within" in str(Chooser(kg, hops=1, seed=0).make(far))
    none = EvalItem("q4", "who directed it", ("Michael Mann",))
    assert Chooser(kg, hops=1, seed=0).make(none) == "no topic entity"


def test_the_draw_walks_the_seeded_order_until_the_limit(kg: LocalStore) -> None:
    items = [one_hop(), two_hop(), EvalItem("q5", "x", ("Crime",), topic_entities=("Heat",))]
    made, notes = draw_with_choices(items, kg, hops=1, limit=5, seed=3)
    assert [i.id for i in made] == ["q1"]
    assert notes == [
        "2 questions skipped while building choices: "
        "fewer than 4 distractors of the gold's kind within 2 hops"
    ]
    twice = [
        one_hop(),
        EvalItem("q6", "who wrote [Heat]", ("Michael Mann",), topic_entities=("Heat",)),
    ]
    made, _ = draw_with_choices(twice, kg, hops=1, limit=1, seed=3)
    assert len(made) == 1


def test_choose_needs_the_graph_for_mc_sets(tmp_path: Path) -> None:
    folder = tmp_path / "metaqa" / "1-hop"
    folder.mkdir(parents=True)
    (folder / "qa_dev.txt").write_text("who directed [Heat]\tMichael Mann\n", encoding="utf-8")
    with pytest.raises(BadRequest, match="builds its choices from the graph"):
        choose(["metaqa-1hop-mc"], split="dev", data_dir=tmp_path, limit=None, seed=0)


def test_reach_picks_only_reachable_choices_reproducibly(kg: LocalStore) -> None:
    choices = ["Michael Mann", "Nobody At All", "Also Nobody"]
    llm = ScriptedLLM()
    answers = {
        Reachable(llm, kg).run("who directed Heat", choices=choices).answer for _ in range(3)
    }
    assert answers == {"Michael Mann"} and not llm.calls
    answer = Reachable(llm, kg).run("who directed Heat", choices=choices)
    assert answer.grounded and answer.evidence.paths and answer.usage.llm_calls == 0


def test_reach_answers_open_questions_not_found(kg: LocalStore) -> None:
    answer = Reachable(ScriptedLLM(), kg).run("who directed Heat")
    assert answer.answer == NOT_FOUND and "multiple-choice" in answer.warnings[0]
