"""The Knowledge Solver instruction dataset (``kgmw ksl-dataset``): the examples of a
small graph pinned, the node-removal rule, the cap keeping the correct step, the skip
reasons, multiple choice, the same prompts as the walk, and the command."""

from __future__ import annotations

import json
import re
from collections.abc import Sequence
from pathlib import Path

import pytest

from middleware.cli import main
from middleware.config.methods import KSLSettings
from middleware.eval.items import EvalItem
from middleware.kg.backends.local import LocalStore
from middleware.kg.walks import RelationPath
from middleware.llm.prompt_templates import flatten, load_template
from middleware.llm.scripted import ScriptedLLM
from middleware.methods.ksl import KnowledgeSolver
from middleware.methods.ksl.offer import neighbour_options
from middleware.text.embeddings import HashEncoder
from middleware.tuning.dataset import Counts, InstructionDataset
from middleware.tuning.rounds import Example
from tests.cli_helpers import run

FILMS = """\
Heat|directed_by|Michael Mann
Heat|starred_actors|Al Pacino
Heat|starred_actors|Robert De Niro
Heat|release_year|1995
Thief|directed_by|Michael Mann
Thief|starred_actors|Robert De Niro
Thief|release_year|1981
Top Gun|starred_actors|Tom Cruise
Top Gun|release_year|1986
"""
QUESTION = "which actors starred in films directed by Michael Mann"
ACTORS = EvalItem(
    "q1",
    QUESTION,
    answers=("Al Pacino", "Robert De Niro"),
    topic_entities=("Michael Mann",),
    meta={"hops": "2"},
)
INSTRUCTION = (
    "Answer the question by walking a knowledge graph. Each turn names the entity you are\n"
    'at and lists its neighbours as "entity (relation)". Step to the neighbour that leads\n'
    "to the answer. When the entity you are at answers the question, pick the option\n"
    '"... is the answer".'
)
ASK = "Reply with one option, copied exactly.\nChoice:"


@pytest.fixture
def films() -> LocalStore:
    kg = LocalStore(profile="metaqa", name="films")
    kg.load_text(FILMS, name="kb.txt")
    return kg


def builder(kg: LocalStore, seed: int = 0, **config: object) -> InstructionDataset:
    pinned = {"answers_per_question": 2, "max_options": 20, "max_relations": 2}
    settings = KSLSettings(**{**pinned, **config})  # type: ignore[arg-type]
    return InstructionDataset(kg, encoder=HashEncoder(), config=settings, seed=seed)


def paths(data: InstructionDataset, item: EvalItem) -> list[str]:
    return [data.verbalizer.path(p) for p in data.export(item).paths]


def test_a_two_hop_question_gives_one_example_per_round(films: LocalStore) -> None:
    done = builder(films).export(ACTORS)
    head = f"Question: {QUESTION}\nAt: Michael Mann"
    first = f"{head}\nOptions:\nHeat (directed)\nThief (directed)\n{ASK}"
    assert done.examples == [
        Example(INSTRUCTION, first, "Heat (directed)"),
        Example(
            INSTRUCTION,
            f"{head}\nChoice: Heat (directed)\n\nAt: Heat\nOptions:\nAl Pacino (starring)\n"
            f"Robert De Niro (starring)\nHeat is the answer\n1995 (released in)\n{ASK}",
            "Al Pacino (starring)",
        ),
        # the second answer's path: the first round again, another correct pick
        Example(INSTRUCTION, first, "Thief (directed)"),
        Example(
            INSTRUCTION,
            f"{head}\nChoice: Thief (directed)\n\nAt: Thief\nOptions:\n"
            f"Robert De Niro (starring)\nThief is the answer\n1981 (released in)\n{ASK}",
            "Robert De Niro (starring)",
        ),
        # at the answer: stopping is the correct pick
        Example(
            INSTRUCTION,
            f"{head}\nChoice: Thief (directed)\n\nAt: Thief\nChoice: Robert De Niro (starring)"
            f"\n\nAt: Robert De Niro\nOptions:\nRobert De Niro is the answer\n"
            f"Heat (starred in)\n{ASK}",
            "Robert De Niro is the answer",
        ),
    ]
    assert done.examples[0].to_dict() == {
        "instruction": INSTRUCTION,
        "input": first,
        "output": "Heat (directed)",
    }
    # at Al Pacino, stopping is the only option: the walk asks no model, so no example
    assert (done.lone, done.rescued, done.skipped) == (1, 0, None)


def test_a_paths_nodes_are_removed_but_its_answer(films: LocalStore) -> None:
    # seed 0 draws Al Pacino first: Heat is then used, so De Niro is reached over Thief
    assert paths(builder(films, seed=0), ACTORS) == [
        "Michael Mann | directed | Heat | starring | Al Pacino",
        "Michael Mann | directed | Thief | starring | Robert De Niro",
    ]
    # seed 2 draws De Niro first, over Heat; Al Pacino is reached only over Heat
    assert paths(builder(films, seed=2), ACTORS) == [
        "Michael Mann | directed | Heat | starring | Robert De Niro"
    ]
    # one answer per question: one path
    assert len(builder(films, answers_per_question=1).export(ACTORS).paths) == 1


WRITERS = """\
Heat|written_by|Walter Hill
Thief|written_by|Walter Hill
Alibi|written_by|Walter Hill
Thief|has_genre|Drama
Alibi|has_genre|Comedy
Heat|release_year|1995
Other|release_year|1995
Other|has_genre|Comedy
"""


@pytest.mark.parametrize("seed", range(4))
def test_a_detour_left_by_the_removal_is_refused(seed: int) -> None:
    kg = LocalStore(profile="metaqa", name="writers")
    kg.load_text(WRITERS, name="kb.txt")
    item = EvalItem(
        "w",
        "what genres are the films written by the writer of Heat",
        answers=("Drama", "Comedy"),
        topic_entities=("Heat",),
    )
    data = builder(kg, seed=seed)
    done = data.export(item)
    # Comedy is also 3 hops away over 1995, a route that fits the question worse: it is
    # never chosen over the writer, and once Walter Hill is removed it is refused
    first = data.question(item).golds[0].value.rsplit("/", 1)[-1]
    writer = "Heat | written by | Walter Hill | wrote | {} | has genre | {}"
    film = {"Drama": "Thief", "Comedy": "Alibi"}[first]
    assert [data.verbalizer.path(p) for p in done.paths] == [writer.format(film, first)]
    assert done.detours == (first == "Drama")


def test_the_correct_step_stays_when_the_cap_would_cut_it(films: LocalStore) -> None:
    data = builder(films, max_options=2, max_relations=1)
    heat = films.search("Heat")[0].iri
    options = neighbour_options(films, heat, data.verbalizer, visited=set(), limit=100).items
    gold = next(o.hop for o in options if o.text == "Robert De Niro (starring)")
    assert gold is not None

    def released_first(relation_paths: Sequence[RelationPath]) -> list[float]:
        return [float(bool(p) and "release_year" in p[-1][0].value) for p in relation_paths]

    shown, correct, rescued = data.rounds.offer(options, (), gold, "Heat", [], released_first)
    assert rescued and correct.text == "Robert De Niro (starring)"
    # two shown, as the cap allows: stopping always, the correct step instead of 1995,
    # in the order the walk ranks them
    assert [o.text for o in shown] == ["Robert De Niro (starring)", "Heat is the answer"]
    # one relation path offered (1995's): the correct step is added, nothing taken out
    pacino = options[2].hop
    shown, correct, rescued = data.rounds.offer(options, (), pacino, None, [], released_first)
    assert [o.text for o in shown] == ["1995 (released in)", "Al Pacino (starring)"]
    assert rescued and correct.text == "Al Pacino (starring)"
    shown, _, rescued = data.rounds.offer(options, (), options[1].hop, None, [], released_first)
    assert [o.text for o in shown] == ["1995 (released in)"] and not rescued
    # with room, the correct step comes with its relation's other neighbours, so its
    # relation is not the odd one out
    roomy = builder(films, max_options=3, max_relations=1)
    shown, _, rescued = roomy.rounds.offer(options, (), gold, None, [], released_first)
    assert rescued and [o.text for o in shown] == [
        "1995 (released in)",
        "Al Pacino (starring)",
        "Robert De Niro (starring)",
    ]


def test_questions_without_paths_are_counted_by_reason(films: LocalStore) -> None:
    data = builder(films)
    items = [
        EvalItem("a", "who directed Collateral", ("Michael Mann",), topic_entities=("Collateral",)),
        EvalItem("b", "who directed Heat", ("Nobody Here",), topic_entities=("Heat",)),
        EvalItem("c", "thief", ("1995",), topic_entities=("Thief",), meta={"hops": "1"}),
        ACTORS,
    ]
    counts = Counts()
    for item in items:
        counts.add(data.export(item))
    assert [data.export(i).skipped for i in items] == [
        "no-question-entity",
        "no-answer",
        "no-path",
        None,
    ]
    assert counts.to_dict() == {
        "questions": 4,
        "with_path": 1,
        "paths": 2,
        "detours_refused": 0,
        "examples": 5,
        "lone_option_rounds": 1,
        "correct_option_kept": 0,
        "skipped": {
            "no question entity in the graph": 1,
            "no gold answer entity in the graph": 1,
            "no path within the hop limit": 1,
        },
    }
    # without a hop count, open questions may take up to 3 hops: 1995 is reached
    farther = EvalItem("d", "thief", ("1995",), topic_entities=("Thief",))
    assert paths(data, farther) == [
        "Thief | starring | Robert De Niro | starred in | Heat | released in | 1995"
    ]


def test_multiple_choice_shows_the_choices_and_stops_on_the_answer(films: LocalStore) -> None:
    item = EvalItem(
        "mc",
        "which actor starred in a film directed by Michael Mann",
        choices=("Al Pacino", "Tom Cruise", "Robert De Niro"),
        answer_key="Al Pacino",
        topic_entities=("Michael Mann",),
    )
    done = builder(films).export(item)
    head = f"Question: {item.question}\nChoices: Al Pacino; Tom Cruise; Robert De Niro\n"
    assert [(e.input, e.output) for e in done.examples] == [
        (
            f"{head}At: Michael Mann\nOptions:\nHeat (directed)\nThief (directed)\n{ASK}",
            "Heat (directed)",
        ),
        (
            f"{head}At: Michael Mann\nChoice: Heat (directed)\n\nAt: Heat\nOptions:\n"
            f"Al Pacino (starring)\nRobert De Niro (starring)\n{ASK}",
            "Al Pacino (starring)",
        ),
    ]


@pytest.mark.parametrize("produced", [0, 2_100], ids=["plain", "topic-is-a-hub"])
def test_examples_are_the_rounds_the_walk_sends(produced: int) -> None:
    """A walk that picks each example's output sends each example's prompt, few-shot
    examples aside; also where the topic is a hub, whose neighbours both read spread
    over its relations (``ksl_spread_hubs``)."""
    films = LocalStore(profile="metaqa", name="films")
    made = "".join(f"Made {i:05d}|produced_by|Michael Mann\n" for i in range(produced))
    films.load_text(FILMS + made, name="kb.txt")
    data = builder(films, seed=2)
    done = data.export(ACTORS)  # one path: Heat, then De Niro
    picks = [(e.input.rsplit("At: ", 1)[1].split("\n", 1)[0], e.output) for e in done.examples]
    llm = ScriptedLLM(
        [(rf"At: {at}\nOptions", pick) for at, pick in picks], default="Robert De Niro"
    )
    solver = KnowledgeSolver(llm, films, encoder=HashEncoder(), config=data.config)
    solver.run(QUESTION)
    shots = 2 * len(load_template("ksl_step").examples)
    sent = [flatten([c.messages[0], *c.messages[1 + shots :]]) for c in llm.calls if c.options]
    assert len(done.examples) == 3
    assert sent[:3] == [f"{e.instruction}\n\n{e.input}" for e in done.examples]


def test_the_command_writes_alpaca_json(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("KGMW_ENCODER", "hash")
    (tmp_path / "kb.txt").write_text(FILMS)
    store = str(tmp_path / "store")
    assert main(["load", str(tmp_path / "kb.txt"), "--store", store, "--profile", "metaqa"]) == 0
    folder = tmp_path / "data" / "metaqa" / "2-hop"
    folder.mkdir(parents=True)
    (folder / "qa_dev.txt").write_text(
        "which actors starred in films directed by [Michael Mann]\tAl Pacino|Robert De Niro\n"
        "which films share actors with [Nobody]\tHeat\n"
    )
    out = tmp_path / "train.json"
    args = ["ksl-dataset", "--dataset", "metaqa-2hop", "--data-dir", str(tmp_path / "data")]
    code, stdout, err = run(capsys, *args, "--store", store, "--out", str(out), "--no-progress")
    assert code == 0, err
    assert "metaqa-2hop (dev): 2 of 2 questions" in err
    rows = json.loads(out.read_text())
    # this question's id draws De Niro first: one path, over Heat (see the removal test)
    assert len(rows) == 3 and all(set(r) == {"instruction", "input", "output"} for r in rows)
    assert [r["output"] for r in rows] == [
        "Heat (directed)",
        "Robert De Niro (starring)",
        "Robert De Niro is the answer",
    ]
    assert re.search(r"\nquestions with a path +1\n", stdout)
    assert re.search(r"\nskipped: no question entity in the graph +1\n", stdout)
    assert "3 examples written to" in stdout and '"instruction":' in stdout
    code, stdout, _ = run(capsys, *args, "--store", store, "--out", str(out), "--json")
    summary = json.loads(stdout)
    assert (summary["examples"], summary["paths"], summary["questions"]) == (3, 1, 2)
    assert summary["sample"]["output"] in {r["output"] for r in rows}
    assert not list(tmp_path.glob(".train.json.*"))  # no temporary file left behind


def test_the_command_reports_bad_input(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    out = str(tmp_path / "train.json")
    for dataset, message in [
        ("nope", "kgmw: error: unknown dataset 'nope'"),
        ("metaqa-2hop", "kgmw: error: metaqa-2hop needs --data-dir"),
    ]:
        code, _, err = run(capsys, "ksl-dataset", "--dataset", dataset, "--out", out)
        assert code == 2 and message in err
    assert not Path(out).exists()
