"""The generated unanswerable set: reproducible, valid against the KB, kinds balanced."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from middleware.errors import BadRequest, LoadError
from middleware.eval.datasets import load_dataset
from middleware.eval.items import Dataset, EvalItem
from middleware.eval.selection import choose
from middleware.eval.unanswerable import KINDS, build, sample_by_kind
from middleware.text.folding import fold
from tests.eval.tiny_metaqa import ONE_HOP, TWO_HOP, triples, write_metaqa

PER_KIND = 6


@pytest.fixture(scope="module")
def data_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return write_metaqa(tmp_path_factory.mktemp("datasets"))


def made(data_dir: Path, seed: int = 0, per_kind: int = PER_KIND) -> Dataset:
    return build(data_dir / "metaqa/1-hop/qa_dev.txt", split="dev", seed=seed, per_kind=per_kind)


def shown(items: list[EvalItem]) -> list[tuple[str, str, dict[str, str]]]:
    return [(i.id, i.question, i.meta) for i in items]


def of_kind(items: list[EvalItem], kind: str) -> list[EvalItem]:
    return [i for i in items if i.meta["kind"] == kind]


def test_kinds_are_balanced_unanswerable_and_tagged(data_dir: Path) -> None:
    data = made(data_dir)
    assert data.name == "unanswerable-metaqa" and data.split == "dev"
    assert [i.meta["kind"] for i in data.items[:4]] == [*KINDS, *KINDS]  # alternating
    assert all(len(of_kind(data.items, k)) == PER_KIND for k in KINDS)
    assert all(i.answers == () and not i.answerable for i in data.items)
    assert len({i.id for i in data.items}) == len(data.items)
    assert data.items[0].id == "unans-dev-made-up-entity-001"
    assert {i.meta["hops"] for i in data.items} <= {"1", "2"}


def test_the_same_seed_gives_the_same_set_and_another_seed_another(data_dir: Path) -> None:
    assert shown(made(data_dir).items) == shown(made(data_dir).items)
    assert shown(made(data_dir, seed=1).items) != shown(made(data_dir).items)


def test_the_set_does_not_depend_on_hash_randomization(data_dir: Path) -> None:
    """One run in a process with another string hash seed than this one."""
    code = (
        "import json, sys; from pathlib import Path; from middleware.eval.unanswerable import build;"
        f"d = build(Path(sys.argv[1]), split='dev', seed=0, per_kind={PER_KIND});"
        "print(json.dumps([[i.id, i.question, i.meta] for i in d.items]))"
    )
    env = {**os.environ, "PYTHONHASHSEED": "4242"}
    path = str(data_dir / "metaqa/1-hop/qa_dev.txt")
    out = subprocess.run(
        [sys.executable, "-c", code, path], env=env, capture_output=True, text=True, check=True
    ).stdout
    assert json.loads(out) == [list(row) for row in shown(made(data_dir).items)]


def test_made_up_names_are_not_in_the_kb(data_dir: Path) -> None:
    labels = {fold(name) for s, _, o in triples() for name in (s, o)}
    words = {w for label in labels for w in label.split()}
    items = of_kind(made(data_dir, per_kind=30).items, "made-up-entity")
    assert len(items) > 10
    for item in items:
        (name,) = item.topic_entities
        folded = fold(name).split()
        spans = [
            " ".join(folded[a:b]) for a in range(len(folded)) for b in range(a + 2, len(folded) + 1)
        ]
        assert fold(name) not in labels and not set(spans) & labels, name
        real = item.meta["real_word"]
        shared = {w for w in folded if w in words} - {"the", "of"}
        assert shared == ({fold(real)} if real else set()), name
        assert name in item.question and "[" not in item.question
        film = item.meta["qtype"].startswith("movie_")
        assert item.meta["style"] == ("film" if film else "person")
    with_real = [i for i in items if i.meta["real_word"]]
    assert len(with_real) == len(items) // 3  # every third
    assert {i.meta["real_word"] for i in with_real if i.meta["style"] == "film"} <= {
        "Heat", "Nine", "Ronin", "Thief", "Ali"
    }  # fmt: skip


def test_absent_relations_are_absent_and_the_entities_real(data_dir: Path) -> None:
    kb = triples()
    items = of_kind(made(data_dir).items, "absent-relation")
    for item in items:
        (entity,) = item.topic_entities
        relation, kind = item.meta["relation"], item.meta["entity_type"]
        assert any(entity in (s, o) for s, _, o in kb), entity
        if kind == "movie":
            assert not [t for t in kb if fold(t[0]) == fold(entity) and t[1] == relation]
            assert any(s == entity for s, _, _ in kb)
        else:
            assert kind == "person" and item.meta["qtype"].split("_")[0] != "movie"
            assert not [t for t in kb if fold(t[2]) == fold(entity) and t[1] == relation]
    assert len({i.topic_entities for i in items}) == len(items)  # each entity once
    assert "tag_to_movie" not in {i.meta["qtype"] for i in items}  # every tag has has_tags


def test_questions_are_the_sources_with_the_topic_replaced(data_dir: Path) -> None:
    rows = {1: ONE_HOP, 2: TWO_HOP}
    for item in made(data_dir).items:
        hops, _, number = item.meta["source"].split("-")
        question, qtype = rows[int(hops[0])][int(number) - 1]
        assert item.meta["qtype"] == qtype
        before, rest = question.split("\t")[0].split("[")
        after = rest.split("]")[1]
        assert item.question == f"{before}{item.topic_entities[0]}{after}"


def test_a_short_kind_cuts_both_and_says_so(data_dir: Path) -> None:
    data = made(data_dir, per_kind=100)
    count = len(of_kind(data.items, "absent-relation"))
    assert 10 <= count < 100 and len(of_kind(data.items, "made-up-entity")) == count
    assert f"{count} questions of each kind, not 100" in data.report.problems[0]


def test_a_limit_keeps_kinds_balanced_and_the_set_order(data_dir: Path) -> None:
    items = made(data_dir).items
    for limit in (1, 4, 5):
        picked = sample_by_kind(items, limit=limit, seed=3)
        counts = [len(of_kind(picked, k)) for k in KINDS]
        assert sum(counts) == limit and max(counts) - min(counts) <= 1
        assert picked == [i for i in items if i in picked]
        assert picked == sample_by_kind(items, limit=limit, seed=3)
    short = items[:1] + of_kind(items, "absent-relation")  # one made-up entity only
    assert len(of_kind(sample_by_kind(short, limit=4, seed=0), "absent-relation")) == 3


def test_loaded_by_name_with_the_seed_and_drawn_balanced(data_dir: Path) -> None:
    data = load_dataset("unanswerable-metaqa", split="dev", data_dir=data_dir, seed=2)
    assert shown(data.items) == shown(made(data_dir, seed=2, per_kind=100).items)
    (chosen,) = choose(["unanswerable-metaqa"], split="dev", data_dir=data_dir, limit=4, seed=2)
    assert [len(of_kind(chosen.items, k)) for k in KINDS] == [2, 2]
    assert chosen.available == len(data.items)
    everything = load_dataset(
        "unanswerable-metaqa", split="dev", data_dir=data_dir, keep=lambda item: False
    )
    assert len(everything.items) == len(data.items)  # the graph filter leaves it whole


def test_refused_for_learning_and_without_a_kb(data_dir: Path, tmp_path: Path) -> None:
    with pytest.raises(BadRequest, match="no gold answers to learn from"):
        choose(
            ["unanswerable-metaqa"],
            split="dev",
            data_dir=data_dir,
            limit=None,
            seed=0,
            held_out=False,
        )
    write_metaqa(tmp_path)
    (tmp_path / "metaqa/kb.txt").unlink()
    with pytest.raises(LoadError, match=r"kb\.txt: no such file"):
        load_dataset("unanswerable-metaqa", split="dev", data_dir=tmp_path)
    with pytest.raises(BadRequest, match=r"no metaqa/1-hop/qa_test\.txt under"):
        load_dataset("unanswerable-metaqa", split="test", data_dir=data_dir)
