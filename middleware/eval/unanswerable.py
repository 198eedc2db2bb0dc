"""``unanswerable-metaqa``: questions in MetaQA's own forms that the graph cannot answer,
generated from a split's questions and ``kb.txt`` with a seed.

Two kinds, ``PER_KIND`` of each, every item without gold answers and tagged with its
``kind`` in ``meta``:

- ``made-up-entity``: a real question with its [topic] replaced by a made-up name of
  the topic's type (a film title, a person's name; ``eval/made_up_names.py``). Every
  third holds one real word of the graph (``real_word``).
- ``absent-relation``: a real question whose topic is replaced by a real entity of
  the same type that lacks the question's first relation (``movie_to_language``
  about a movie with no ``in_language``; ``actor_to_movie`` about a person who never
  acted); ``relation`` names it.

Each question is drawn in three steps: a hop count (1-hop half the time, 2- and 3-hop
a quarter each, when their files are beside the 1-hop one), a first hop among that
count's (each as likely, so ``in_language`` is asked about as often as
``directed_by``), then one of its questions. Every choice goes through
``random.Random`` seeded with a string over sorted lists, so a seed gives the same set
on every run and machine.
"""

from __future__ import annotations

import random
import re
from collections.abc import Sequence
from dataclasses import dataclass, replace
from pathlib import Path

from middleware.errors import LoadError
from middleware.eval.items import Dataset, EvalItem, LoadReport, finish, read_text
from middleware.eval.made_up_names import NameMaker
from middleware.eval.metaqa_kb import FirstHop, MetaQAKB, first_hop
from middleware.text.folding import fold

NAME = "unanswerable-metaqa"
KINDS = ("made-up-entity", "absent-relation")
PER_KIND = 100
HOP_WEIGHTS = {1: 2, 2: 1, 3: 1}
REAL_EVERY = 3  # every third made-up name holds a real word
STYLES = {"movie": "film", "person": "person"}  # topic types a made-up name stands in for
_TOPIC = re.compile(r"\[([^\]]+)\]")


@dataclass(frozen=True)
class Template:
    """A real question split around its one [topic], with its type."""

    source: str
    hops: int
    qtype: str
    before: str
    after: str

    def ask(self, topic: str) -> str:
        return " ".join(f"{self.before}{topic}{self.after}".split())

    @property
    def first(self) -> FirstHop | None:
        return first_hop(self.qtype)


def read_templates(path: Path, *, hops: int, split: str) -> list[Template]:
    """The questions of a MetaQA ``qa_*.txt`` with one [topic] and a known type, in file
    order; none when the file or its ``_qtype`` file is missing or they differ in length."""
    types_path = path.with_name(f"{path.stem}_qtype{path.suffix}")
    if not path.is_file() or not types_path.is_file():
        return []
    rows, qtypes = read_text(path).splitlines(), read_text(types_path).splitlines()
    if len(rows) != len(qtypes):
        return []
    found = []
    for number, (row, qtype) in enumerate(zip(rows, qtypes, strict=True), start=1):
        question, tab, _ = row.partition("\t")
        topics = list(_TOPIC.finditer(question))
        if tab and len(topics) == 1 and first_hop(qtype.strip()) is not None:
            start, end = topics[0].span()
            source = f"{hops}hop-{split}-{number}"
            found.append(Template(source, hops, qtype.strip(), question[:start], question[end:]))
    return found


Forms = dict[int, dict[FirstHop, list[Template]]]  # hop count: first hop: its questions


def by_form(templates: Sequence[Template]) -> dict[FirstHop, list[Template]]:
    """Questions grouped by their first hop, in file order."""
    grouped: dict[FirstHop, list[Template]] = {}
    for template in templates:
        if template.first is not None:
            grouped.setdefault(template.first, []).append(template)
    return grouped


def build(first: Path, *, split: str, seed: int, per_kind: int = PER_KIND) -> Dataset:
    """The set from ``first`` (a 1-hop ``qa_{split}.txt``), the other hops' files beside
    it and ``kb.txt`` two folders up: ``per_kind`` items of each kind, alternating."""
    root = first.parent.parent
    kb_path = root / "kb.txt"
    if not kb_path.is_file():
        raise LoadError(
            str(kb_path), None, "no such file", hint="the set is built from MetaQA's kb.txt"
        )
    forms = {
        h: by_form(read_templates(root / f"{h}-hop" / first.name, hops=h, split=split))
        for h in HOP_WEIGHTS
    }
    if not forms[1]:
        raise LoadError(str(first), None, "no question with one [topic] and a known question type")
    kb = MetaQAKB.read(kb_path)
    made = made_up_items(
        forms, NameMaker.for_kb(kb), random.Random(f"{NAME}:{seed}:{KINDS[0]}"), per_kind
    )
    absent = absent_relation_items(forms, kb, random.Random(f"{NAME}:{seed}:{KINDS[1]}"), per_kind)
    count = min(len(made), len(absent))
    report = LoadReport(str(first))
    if count < per_kind:
        report.problems.append(
            f"{first}: {count} questions of each kind, not {per_kind} "
            f"({len(made)} made-up entities, {len(absent)} absent relations could be made)"
        )
    items = [
        replace(item, id=f"unans-{split}-{item.meta['kind']}-{index + 1:03d}")
        for index in range(count)
        for item in (made[index], absent[index])
    ]
    return finish(NAME, split, items, report)


def _pick(rng: random.Random, forms: Forms) -> tuple[FirstHop, Template]:
    """A hop count by ``HOP_WEIGHTS`` among those left, one of its first hops (each as
    likely: a rare relation is asked about as often as a common one), one of its questions."""
    hops = sorted(h for h, found in forms.items() if found)
    chosen = rng.choices(hops, weights=[HOP_WEIGHTS[h] for h in hops])[0]
    form = rng.choice(sorted(forms[chosen]))
    return form, rng.choice(forms[chosen][form])


def _item(template: Template, topic: str, kind: str, **meta: str) -> EvalItem:
    base = {"kind": kind, "hops": str(template.hops), "qtype": template.qtype}
    return EvalItem(
        id="",  # numbered once both kinds are made
        question=template.ask(topic),
        topic_entities=(topic,),
        meta={**base, "source": template.source, **meta},
    )


def made_up_items(forms: Forms, maker: NameMaker, rng: random.Random, count: int) -> list[EvalItem]:
    """``count`` questions about made-up films and people."""
    usable = {
        h: {f: t for f, t in found.items() if f.topic_type in STYLES} for h, found in forms.items()
    }
    items = []
    for index in range(count):
        if not any(usable.values()):
            break
        form, template = _pick(rng, usable)
        look = STYLES[form.topic_type]
        name = maker.make(rng, look, real=index % REAL_EVERY == REAL_EVERY - 1)
        items.append(_item(template, name.text, KINDS[0], style=look, real_word=name.real_word))
    return items


def absent_relation_items(
    forms: Forms, kb: MetaQAKB, rng: random.Random, count: int
) -> list[EvalItem]:
    """Up to ``count`` questions about real entities lacking the first relation, each
    entity once; a form whose entities run out is dropped."""
    pools: dict[FirstHop, list[str]] = {}
    for form in sorted({f for found in forms.values() for f in found}):
        pools[form] = kb.lacking(form)
        rng.shuffle(pools[form])
    usable = {h: {f: t for f, t in found.items() if pools[f]} for h, found in forms.items()}
    used: set[str] = set()
    items: list[EvalItem] = []
    while len(items) < count and any(usable.values()):
        form, template = _pick(rng, usable)
        pool = pools[form]
        while pool and fold(pool[-1]) in used:
            pool.pop()
        if not pool:
            usable = {
                h: {f: t for f, t in found.items() if f != form} for h, found in usable.items()
            }
            continue
        entity = pool.pop()
        used.add(fold(entity))
        meta = {"relation": form.relation, "entity_type": form.topic_type}
        items.append(_item(template, entity, KINDS[1], **meta))
    return items


def sample_by_kind(items: Sequence[EvalItem], *, limit: int | None, seed: int) -> list[EvalItem]:
    """``limit`` items, as many of each kind as can be (a kind short of its share leaves
    the rest to the others), drawn with ``seed``, in the set's order.

    >>> items = [EvalItem(f"{k}{i}", "q", meta={"kind": k}) for i in range(5) for k in KINDS]
    >>> [i.meta["kind"] for i in sample_by_kind(items, limit=3, seed=0)].count(KINDS[1])
    1
    """
    if limit is None or limit >= len(items):
        return list(items)
    groups = {k: [i for i in items if i.meta.get("kind") == k] for k in KINDS}
    order = sorted(KINDS, key=lambda k: len(groups[k]))
    chosen: set[str] = set()
    remaining = limit
    for index, kind in enumerate(order):
        take = min(len(groups[kind]), -(-remaining // (len(order) - index)))
        rng = random.Random(f"{NAME}:{seed}:{kind}")
        chosen |= {groups[kind][i].id for i in rng.sample(range(len(groups[kind])), take)}
        remaining -= take
    return [item for item in items if item.id in chosen]
