"""``foreign-relation-metaqa``: questions about real entities asking for relations the
KB does not hold; reproducible, split by entity, refused for learning."""

from __future__ import annotations

from pathlib import Path

import pytest

from middleware.errors import BadRequest, LoadError
from middleware.eval.datasets import load_dataset
from middleware.eval.foreign_relations_set import FORMS, KIND, NAME, build, items_from
from middleware.eval.metaqa_kb import MetaQAKB
from middleware.eval.selection import choose
from middleware.text.folding import fold
from tests.eval.tiny_metaqa import KB, write_metaqa


@pytest.fixture(scope="module")
def data_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return write_metaqa(tmp_path_factory.mktemp("datasets"))


def test_every_item_is_unanswerable_about_a_real_entity(data_dir: Path) -> None:
    data = load_dataset(NAME, split="dev", data_dir=data_dir, seed=7)
    kb = MetaQAKB.parse(KB)
    assert data.name == NAME and data.items
    for item in data.items:
        assert not item.answerable and item.meta["kind"] == KIND
        (topic,) = item.topic_entities
        assert topic in kb.of_type(item.meta["topic_type"]) and topic in item.question
        assert item.meta["asks"] in {asks for _, asks, _ in FORMS}
    assert len({fold(i.topic_entities[0]) for i in data.items}) == len(data.items)


def test_the_same_seed_gives_the_same_set(data_dir: Path) -> None:
    def shown(seed: int) -> list[tuple[str, str]]:
        data = load_dataset(NAME, split="dev", data_dir=data_dir, seed=seed)
        return [(i.id, i.question) for i in data.items]

    assert shown(7) == shown(7)
    assert shown(7) != shown(8)


def test_dev_and_test_share_no_entity() -> None:
    kb = MetaQAKB.parse(KB)
    dev = {i.topic_entities[0] for i in items_from(kb, split="dev", seed=0)}
    test = {i.topic_entities[0] for i in items_from(kb, split="test", seed=0)}
    assert dev and test and not dev & test
    people_and_films = set(kb.of_type("person")) | set(kb.of_type("movie"))
    assert dev | test == people_and_films  # every entity used once, in one split


def test_refused_for_learning_and_without_a_kb(data_dir: Path, tmp_path: Path) -> None:
    with pytest.raises(BadRequest, match="no gold answers to learn from"):
        choose([NAME], split="dev", data_dir=data_dir, limit=None, seed=0, held_out=False)
    write_metaqa(tmp_path)
    (tmp_path / "metaqa/kb.txt").unlink()
    with pytest.raises(BadRequest, match=r"no metaqa/kb\.txt under"):
        load_dataset(NAME, split="dev", data_dir=tmp_path)
    with pytest.raises(LoadError, match=r"kb\.txt: no such file"):
        build(tmp_path / "metaqa/kb.txt", split="dev", seed=0)


def test_only_kb_txt_is_needed(tmp_path: Path) -> None:
    (tmp_path / "metaqa").mkdir()
    (tmp_path / "metaqa/kb.txt").write_text(KB, encoding="utf-8")
    assert load_dataset(NAME, split="test", data_dir=tmp_path, seed=0).items
