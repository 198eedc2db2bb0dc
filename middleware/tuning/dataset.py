"""The Knowledge Solver instruction dataset (the paper's Algorithm 2, ``kgmw ksl-dataset``):
which paths each question with known answers gives; ``methods/tuning/rounds.py`` turns a
path into the walk's rounds, one example each.

1. **Question entities**: the dataset's topic entities as IRIs (those in the graph), or,
   when the item names none, the entities the question's own words link to.
2. **Gold answers**: the gold answer entities in the graph (for multiple choice, the
   correct choice's entities), in an order seeded by ``seed`` and the question id; the
   first ``ksl_answers_per_question`` are used.
3. **Paths**: for each question entity and each of those answers, a shortest path of at
   most K hops (``KnowledgeGraph.paths``, asked one length at a time, so nothing longer
   is searched once a shorter path exists). K is ``ksl_max_hops`` for multiple choice
   (the walk's subgraph limit); for open questions the dataset's own hop count
   (MetaQA's) or, without one, 3. A path may not pass through a node an earlier path of
   the same question used (its ends may): after each path its nodes but the answer are
   removed, so a question's later paths take other routes. On multiple choice it may
   not pass through another choice's entity either: the walk would stop there. Among
   the shortest paths left, the one whose relation path fits the question's gold
   answers best from its question entity wins (``fit``: the relation the question asks
   for reaches its answers and little else), then the one that reads most like the
   question (the walk's own ranking, ``reading.py``), then the first found.
4. **Detours**: when the removal leaves only a route that fits worse than the question
   entity's first path (the bridging writer was removed; what is left goes over a
   year or a genre), that path is refused and counted, not used.
"""

from __future__ import annotations

import random
from collections import Counter
from collections.abc import Collection, Sequence
from dataclasses import dataclass, field
from typing import Any

from pyoxigraph import NamedNode

from middleware.config.areas import TextSettings
from middleware.config.methods import KSLSettings
from middleware.eval.items import EvalItem
from middleware.eval.topics import answer_iris, topic_iris
from middleware.kg.base import KnowledgeGraph, Path
from middleware.kg.terms import Term, to_iri
from middleware.kg.walks import RelationPath
from middleware.methods.choice_subgraph import Subgraph
from middleware.methods.collect import LINK_MATCHES, link_question
from middleware.methods.ksl.offer import Scorer
from middleware.methods.ksl.reading import PathReader
from middleware.text.embeddings.encoders import Encoder
from middleware.text.linking import EntityLinker
from middleware.text.verbalize import Verbalizer
from middleware.tuning.rounds import Asked, Example, PathRounds, relations

OPEN_MAX_HOPS = 3  # open questions without a hop count of their own
MAX_FOLLOW = 1000  # walks read to count the gold answers a relation path reaches
SKIP_REASONS: dict[str, str] = {
    "no-question-entity": "no question entity in the graph",
    "no-answer": "no gold answer entity in the graph",
    "no-path": "no path within the hop limit",
}


@dataclass
class Exported:
    """One question's examples and paths, or why it has none."""

    examples: list[Example] = field(default_factory=list)
    paths: list[Path] = field(default_factory=list)
    skipped: str | None = None  # a SKIP_REASONS key
    lone: int = 0  # rounds with one option: the walk asks no model there
    rescued: int = 0  # rounds whose correct option the offer would have left out
    detours: int = 0  # later paths refused: they answer worse than the first


@dataclass
class Counts:
    """What an export made, over all its questions."""

    questions: int = 0
    with_path: int = 0
    paths: int = 0
    examples: int = 0
    lone: int = 0
    rescued: int = 0
    detours: int = 0
    skipped: Counter[str] = field(default_factory=Counter)

    def add(self, done: Exported) -> None:
        self.questions += 1
        self.with_path += bool(done.paths)
        self.paths += len(done.paths)
        self.examples += len(done.examples)
        self.lone += done.lone
        self.rescued += done.rescued
        self.detours += done.detours
        if done.skipped is not None:
            self.skipped[done.skipped] += 1

    def to_dict(self) -> dict[str, Any]:
        return {
            "questions": self.questions,
            "with_path": self.with_path,
            "paths": self.paths,
            "detours_refused": self.detours,
            "examples": self.examples,
            "lone_option_rounds": self.lone,
            "correct_option_kept": self.rescued,
            "skipped": {SKIP_REASONS[k]: self.skipped[k] for k in SKIP_REASONS if self.skipped[k]},
        }


@dataclass
class Question:
    """One question's entities, gold answers and the words naming its entities."""

    item: EvalItem
    starts: list[NamedNode]
    golds: list[NamedNode]  # the gold answers paths are searched for
    answers: set[Term]  # every gold answer entity in the graph
    targets: list[NamedNode]  # choices' entities, in choice order: the walk stops on them
    spans: dict[NamedNode, str]  # a question entity → the words of the question naming it


class InstructionDataset:
    """Builds training examples for the Knowledge Solver walk from questions with answers."""

    def __init__(
        self,
        graph: KnowledgeGraph,
        *,
        encoder: Encoder,
        config: KSLSettings | None = None,
        text: TextSettings | None = None,
        seed: int = 0,
    ) -> None:
        self.graph = graph
        self.config = config or KSLSettings()
        self.text = text or TextSettings()
        self.seed = seed
        self.reader = PathReader(encoder)
        self.verbalizer = Verbalizer(graph, literal_max_chars=self.text.literal_max_chars)
        self.rounds = PathRounds(graph, self.verbalizer, self.config)
        self._linker: EntityLinker | None = None
        self._ends: dict[tuple[NamedNode, RelationPath], set[Term]] = {}  # this question's

    @property
    def linker(self) -> EntityLinker:
        if self._linker is None:
            self._linker = EntityLinker.from_settings(self.graph, self.text)
        return self._linker

    # -- what a question asks ------------------------------------------------------------
    def in_graph(self, iris: Sequence[str | NamedNode]) -> list[NamedNode]:
        nodes = list(dict.fromkeys(to_iri(i) for i in iris))
        degrees = self.graph.degrees(nodes) if nodes else {}
        return [n for n in nodes if degrees.get(n, 0) > 0]

    def question(self, item: EvalItem) -> Question:
        spans: dict[NamedNode, str] = {}
        if item.topic_entities:
            starts = self.in_graph(topic_iris(item, self.graph.profile))
        else:
            linked = link_question(self.linker, item.question)
            spans = {n.entity.iri: n.name for n in linked}
            starts = list(spans)
        targets: list[NamedNode] = []
        if item.choices:
            by_choice = [self.choice_entities(c, starts) for c in item.choices]
            targets = list(dict.fromkeys(e for found in by_choice for e in found))
            key = item.choices.index(item.answer_key) if item.answer_key in item.choices else -1
            golds = by_choice[key] if key >= 0 else []
        else:
            golds = self.in_graph(answer_iris(item, self.graph))
        order = random.Random(f"{self.seed}:{item.id}").sample(golds, len(golds))
        chosen = order[: self.config.answers_per_question]
        for start in starts:
            spans.setdefault(start, self.span(item, start))
        return Question(item, starts, chosen, set(golds), targets, spans)

    def choice_entities(self, choice: str, starts: Collection[NamedNode]) -> list[NamedNode]:
        """A choice's entities: by the dataset's mapping, else linked as the method links."""
        found = self.in_graph(answer_iris(EvalItem("", "", answers=(choice,)), self.graph))
        if not found:
            found = [e.iri for e in self.linker.link(choice, limit=3) if e.match in LINK_MATCHES]
        return [e for e in found if e not in starts]

    def span(self, item: EvalItem, entity: NamedNode) -> str:
        """The words of the question naming ``entity``: the dataset's name for it or its
        label, where the question contains it ("" if neither)."""
        names = [*item.topic_entities, *item.meta.get("topic_names", "").split("|")]
        lowered = item.question.lower()
        for name in [*names, self.verbalizer.name(entity)]:
            if name and name.lower() in lowered:
                return name
        return ""

    def max_hops(self, item: EvalItem) -> int:
        if item.choices:
            return self.config.max_hops
        hops = item.meta.get("hops", "")
        return min(int(hops), OPEN_MAX_HOPS) if hops.isdigit() and int(hops) > 0 else OPEN_MAX_HOPS

    # -- paths ---------------------------------------------------------------------------
    def shortest(
        self,
        start: NamedNode,
        end: NamedNode,
        *,
        max_hops: int,
        blocked: Collection[Term],
        answers: Collection[Term],
        score: Scorer,
    ) -> Path | None:
        """A shortest path avoiding ``blocked`` inner nodes; ties go to the relation path
        that fits ``answers`` best from ``start`` (``fit``), then to the one that reads
        most like the question, then to the first found."""
        for length in range(1, max_hops + 1):
            found = [
                p
                for p in self.graph.paths(
                    start, end, max_hops=length, limit=self.config.paths_per_pair
                )
                if len(p) == length and not any(n in blocked for n in p.nodes[1:-1])
            ]
            if found:
                paths = [relations(p) for p in found]
                distinct = list(dict.fromkeys(paths))
                fits = {
                    r: self.fit(start, r, answers) if len(distinct) > 1 else 0.0 for r in distinct
                }
                scores = score(paths)
                best = max(range(len(found)), key=lambda i: (fits[paths[i]], scores[i], -i))
                return found[best]
        return None

    def fit(self, start: NamedNode, path: RelationPath, answers: Collection[Term]) -> float:
        """How well the relation path from ``start`` answers the question: the F1 of the
        entities it reaches (the first ``MAX_FOLLOW`` walks) against ``answers``. The
        relation the question asks for reaches its answers and little else; a detour
        over a hub (a year, a genre) reaches many other entities, or few answers. The
        ends are remembered for the question's next paths."""
        if (start, path) not in self._ends:
            walks = self.graph.follow(start, path, limit=MAX_FOLLOW)
            self._ends[(start, path)] = {w.nodes[-1] for w in walks}
        ends = self._ends[(start, path)]
        hits = sum(a in ends for a in answers)
        return 2 * hits / (len(answers) + len(ends)) if hits else 0.0

    def export(self, item: EvalItem) -> Exported:
        """One question's paths and examples (see the module docstring)."""
        asked = self.question(item)
        if not asked.starts:
            return Exported(skipped="no-question-entity")
        if not asked.golds:
            return Exported(skipped="no-answer")
        hops = self.max_hops(item)
        walked = Asked(item.question, list(item.choices) or None, asked.targets)
        if item.choices:
            subgraph = Subgraph.between(
                self.graph,
                asked.starts,
                asked.targets,
                max_hops=hops,
                per_pair=self.config.paths_per_pair,
            )
            walked = Asked(item.question, list(item.choices), asked.targets, subgraph)
        done = Exported()
        removed: set[Term] = set()
        self._ends.clear()
        for start in asked.starts:
            score = self.reader.scorer(item.question, asked.spans[start], self.verbalizer)
            first: float | None = None  # the fit of this entity's first path
            for gold in asked.golds:
                if gold == start:
                    continue
                others = set(asked.targets) - {gold}  # the walk would stop on another choice
                path = self.shortest(
                    start,
                    gold,
                    max_hops=hops,
                    blocked=removed | others,
                    answers=asked.answers,
                    score=score,
                )
                if path is None:
                    continue
                fit = self.fit(start, relations(path), asked.answers)
                if first is not None and fit < first:  # the removal left only a detour
                    done.detours += 1
                    continue
                first = fit if first is None else first
                done.paths.append(path)
                removed.update(n for n in path.nodes if n != gold)
                rounds = self.rounds.walk(walked, path, score)
                done.examples += rounds.examples
                done.lone += rounds.lone
                done.rescued += rounds.rescued
        if not done.paths:
            done.skipped = "no-path"
        return done
