"""``foreign-relation-metaqa``: questions about real MetaQA entities that ask for a
relation the graph does not hold at all (a spouse, a budget, a birthplace).

``unanswerable-metaqa`` asks MetaQA's own relations of entities that lack them; this set
asks for relations MetaQA's schema has none of, so any answer a method gives comes
along another relation. Every item is unanswerable, ``meta["kind"]`` is
``foreign-relation`` and ``meta["asks"]`` names what is asked.

The question forms below were written once, before any method was scored on them, and
are not tuned. Each draw picks a form (each as likely), then a real entity of the
form's type that no earlier item used. Entities are split in two by a checksum of
their folded name, one half for ``dev`` and the other for ``test``, so the two splits
share no entity. ``random.Random`` is seeded with a string, so a seed gives the same
set on every run and machine.

>>> from middleware.eval.metaqa_kb import MetaQAKB
>>> kb = MetaQAKB.parse("Heat|directed_by|Michael Mann\\nAli|starred_actors|Will Smith\\n")
>>> [i.meta["asks"] for i in items_from(kb, split="dev", seed=0, count=50)][:1]
['spouse']
"""

from __future__ import annotations

import random
import zlib
from pathlib import Path

from middleware.errors import LoadError
from middleware.eval.items import Dataset, EvalItem, LoadReport, finish
from middleware.eval.metaqa_kb import MetaQAKB
from middleware.text.folding import fold

NAME = "foreign-relation-metaqa"
KIND = "foreign-relation"
COUNT = 100
SPLITS = ("dev", "test")

# (topic type, what is asked, the question with [topic]); MetaQA holds none of these
FORMS: tuple[tuple[str, str, str], ...] = (
    ("person", "spouse", "who is [topic] married to"),
    ("person", "spouse", "who is the spouse of [topic]"),
    ("person", "birthplace", "where was [topic] born"),
    ("person", "birth date", "when was [topic] born"),
    ("person", "death date", "when did [topic] die"),
    ("person", "nationality", "what is the nationality of [topic]"),
    ("person", "height", "how tall is [topic]"),
    ("person", "education", "where did [topic] go to school"),
    ("person", "children", "who are the children of [topic]"),
    ("person", "awards", "what awards has [topic] won"),
    ("person", "residence", "where does [topic] live"),
    ("person", "party", "which political party does [topic] support"),
    ("movie", "budget", "what was the budget of [topic]"),
    ("movie", "box office", "how much money did [topic] make at the box office"),
    ("movie", "studio", "which studio produced [topic]"),
    ("movie", "producer", "who produced [topic]"),
    ("movie", "running time", "how long is [topic]"),
    ("movie", "awards", "what awards did [topic] win"),
    ("movie", "filming location", "where was [topic] filmed"),
    ("movie", "composer", "who composed the music for [topic]"),
    ("movie", "country", "which country was [topic] made in"),
    ("movie", "distributor", "which company distributed [topic]"),
    ("movie", "editor", "who edited [topic]"),
    ("movie", "cinematographer", "who was the cinematographer of [topic]"),
)


def _split_of(name: str) -> str:
    return SPLITS[zlib.crc32(fold(name).encode("utf-8")) % len(SPLITS)]


def items_from(kb: MetaQAKB, *, split: str, seed: int, count: int = COUNT) -> list[EvalItem]:
    """Up to ``count`` questions over ``kb``'s entities of ``split``'s half."""
    rng = random.Random(f"{NAME}:{seed}:{split}")
    pools = {}
    for topic_type in sorted({t for t, _, _ in FORMS}):
        pool = sorted(n for n in kb.of_type(topic_type) if _split_of(n) == split)
        rng.shuffle(pool)
        pools[topic_type] = pool
    used: set[str] = set()
    items: list[EvalItem] = []
    forms = [f for f in FORMS if pools[f[0]]]
    while len(items) < count and forms:
        topic_type, asks, text = rng.choice(forms)
        pool = pools[topic_type]
        while pool and fold(pool[-1]) in used:
            pool.pop()
        if not pool:
            forms = [f for f in forms if f[0] != topic_type]
            continue
        topic = pool.pop()
        used.add(fold(topic))
        items.append(
            EvalItem(
                id=f"foreign-{split}-{len(items) + 1:03d}",
                question=text.replace("[topic]", topic),
                topic_entities=(topic,),
                meta={"kind": KIND, "asks": asks, "topic_type": topic_type, "hops": "1"},
            )
        )
    return items


def build(kb_path: Path, *, split: str, seed: int, count: int = COUNT) -> Dataset:
    """The set over MetaQA's ``kb.txt``."""
    if not kb_path.is_file():
        raise LoadError(
            str(kb_path), None, "no such file", hint="the set is built from MetaQA's kb.txt"
        )
    items = items_from(MetaQAKB.read(kb_path), split=split, seed=seed, count=count)
    report = LoadReport(str(kb_path))
    if len(items) < count:
        report.problems.append(f"{kb_path}: {len(items)} questions could be made, not {count}")
    return finish(NAME, split, items, report)
