"""Multiple-choice variants of open question sets (``metaqa-2hop-mc``): the gold answer
and distractors of the same kind, all reachable from the topic, drawn with a seed.

For a question, the entities within ``k`` hops of its topic (either direction; at most
``FAN_OUT`` neighbours read per node, so hubs stay cheap) are collected with the hop
that reached each. The gold answer is one reachable gold entity (seeded pick). Its
*kind* is the role it plays on that hop: object (or subject) of predicate P. A
distractor is a reachable entity, not a gold answer nor the topic, reached as object
(subject) of P or of a predicate *kin* to P: one whose objects (subjects) are P's too
for at least ``KIN_SHARE`` of them, which groups "directed by", "written by" and
"starring" (people) but keeps genres, years and tags apart. Four distractors are drawn
(seeded) and the five choices shuffled; questions with fewer are skipped and counted.

``k`` is ``max(2, hops)``: with 2, the KSL default, golds of 3-hop questions would be
out of reach. The texts are the graph's labels, so the answer is the gold's label.

>>> from middleware.kg.backends.local import LocalStore
>>> kg = LocalStore(profile="metaqa")
>>> _ = kg.load_text(
...     "Heat|directed_by|Michael Mann\\nHeat|starred_actors|Al Pacino\\n"
...     "Heat|starred_actors|Robert De Niro\\nHeat|written_by|Michael Mann\\n"
...     "Heat|starred_actors|Val Kilmer\\nHeat|starred_actors|Jon Voight\\nHeat|release_year|1995\\n"
...     "Miami Vice|starred_actors|Michael Mann\\n",
...     name="kb.txt")
>>> item = EvalItem("1", "who directed [Heat]", answers=("Michael Mann",), topic_entities=("Heat",))
>>> made = Chooser(kg, hops=1, seed=7).make(item)
>>> made.answer_key, sorted(made.choices)
('Michael Mann', ['Al Pacino', 'Jon Voight', 'Michael Mann', 'Robert De Niro', 'Val Kilmer'])
"""

from __future__ import annotations

import random
from collections.abc import Sequence
from dataclasses import replace

from pyoxigraph import Literal, NamedNode

from middleware.eval.items import EvalItem
from middleware.eval.topics import answer_iris, topic_iris
from middleware.kg.base import KnowledgeGraph, template_graph
from middleware.kg.terms import Term
from middleware.text.folding import fold
from middleware.text.verbalize import Verbalizer

DISTRACTORS = 4
FAN_OUT = 500  # neighbour triples read per node while collecting what is reachable
KIN_SHARE = 0.05
Role = tuple[NamedNode, bool]  # (predicate, True: the entity is its object)


def mc_hops(name: str) -> int | None:
    """The hop count of a multiple-choice MetaQA set's name, else None.

    >>> mc_hops("metaqa-3hop-mc"), mc_hops("metaqa-3hop")
    (3, None)
    """
    if name.startswith("metaqa-") and name.endswith("hop-mc") and name[7:8].isdigit():
        return int(name[7])
    return None


class Chooser:
    """Builds choices for one graph; predicate kinship is computed once per role."""

    def __init__(self, graph: KnowledgeGraph, *, hops: int, seed: int) -> None:
        self.graph = graph
        self._templates = template_graph(graph)
        self.k = max(2, hops)
        self.seed = seed
        self.verbalizer = Verbalizer(graph)
        self._kin: dict[Role, set[Role]] = {}

    def reachable(self, topic: NamedNode) -> dict[Term, set[Role]]:
        """Entities within ``k`` hops of ``topic`` and the roles they were reached in."""
        found: dict[Term, set[Role]] = {}
        frontier: list[NamedNode] = [topic]
        seen: set[Term] = {topic}
        for _ in range(self.k):
            grown: list[NamedNode] = []
            for node in frontier:
                for triple in self.graph.neighbors(node, direction="both", limit=FAN_OUT):
                    if not self.verbalizer.keep(triple):
                        continue
                    forward = triple.subject == node
                    end = triple.object if forward else triple.subject
                    found.setdefault(end, set()).add((triple.predicate, forward))
                    if end not in seen and isinstance(end, NamedNode):
                        seen.add(end)
                        grown.append(end)
            frontier = grown
        found.pop(topic, None)
        return found

    def kin(self, role: Role) -> set[Role]:
        """Roles whose entities are of the same kind as ``role``'s (itself included)."""
        if role not in self._kin:
            predicate, as_object = role
            name = "kin_objects" if as_object else "kin_subjects"
            rows = self._templates.run_template(name, predicate=predicate)
            counts = {
                q: int(n.value)
                for row in rows
                if isinstance(q := row.get("q"), NamedNode)
                and isinstance(n := row.get("n"), Literal)
            }
            total = counts.get(predicate, 0) or 1
            self._kin[role] = {role} | {
                (q, as_object) for q, n in counts.items() if n / total >= KIN_SHARE
            }
        return self._kin[role]

    def make(self, item: EvalItem) -> EvalItem | str:
        """``item`` with choices and ``answer_key``, or why it cannot have them."""
        topics = [NamedNode(i) for i in topic_iris(item, self.graph.profile)]
        if not topics:
            return "no topic entity"
        golds = {NamedNode(i) for i in answer_iris(item, self.graph)}
        rng = random.Random(f"{self.seed}:{item.id}")
        reach = self.reachable(topics[0])
        reached_golds = sorted((g for g in golds if g in reach), key=lambda n: n.value)
        if not reached_golds:
            return f"no gold answer within {self.k} hops of the topic"
        gold = rng.choice(reached_golds)
        kinds = set().union(*(self.kin(role) for role in sorted(reach[gold], key=str)))
        gold_names = {fold(a) for a in item.answers}
        candidates = sorted(
            (
                n
                for n, roles in reach.items()
                if isinstance(n, NamedNode) and n not in golds and n not in topics and roles & kinds
            ),
            key=lambda n: n.value,
        )
        self.verbalizer.prepare([gold, *candidates])
        answer = self.verbalizer.name(gold)
        names: dict[str, NamedNode] = {}
        for node in candidates:
            name = self.verbalizer.name(node)
            if fold(name) not in gold_names and fold(name) != fold(answer):
                names.setdefault(fold(name), node)
        if len(names) < DISTRACTORS:
            return f"fewer than {DISTRACTORS} distractors of the gold's kind within {self.k} hops"
        picked = rng.sample(sorted(names), DISTRACTORS)
        choices = [answer, *(self.verbalizer.name(names[key]) for key in picked)]
        rng.shuffle(choices)
        return replace(item, choices=tuple(choices), answer_key=answer)


def draw_with_choices(
    items: Sequence[EvalItem], graph: KnowledgeGraph, *, hops: int, limit: int | None, seed: int
) -> tuple[list[EvalItem], list[str]]:
    """Up to ``limit`` items with choices, tried in a seeded order (all when None),
    returned in file order, and a note counting the skipped ones by reason."""
    chooser = Chooser(graph, hops=hops, seed=seed)
    order = list(range(len(items)))
    random.Random(seed).shuffle(order)
    made: dict[int, EvalItem] = {}
    skipped: dict[str, int] = {}
    for index in order:
        if limit is not None and len(made) >= limit:
            break
        result = chooser.make(items[index])
        if isinstance(result, str):
            skipped[result] = skipped.get(result, 0) + 1
        else:
            made[index] = result
    notes = [
        f"{n} questions skipped while building choices: {why}" for why, n in sorted(skipped.items())
    ]
    return [made[i] for i in sorted(made)], notes
