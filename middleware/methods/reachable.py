"""The random-reachable baseline (``reach``): no LLM, a seeded pick among the choices
the graph joins to the question.

The question's and the choices' entities are linked and the paths of at most
``reach_max_hops`` hops between them fetched (the Knowledge Solver's ``link`` and
``subgraph`` steps); the answer is a choice drawn, with a generator seeded by
``reach_seed`` and the question, from those a path reaches (from every choice, with a
warning, when none is reached). Its evidence is the paths to the drawn choice. It
tells how much of a multiple-choice score reaching a choice alone explains; a
question without choices is answered "not found".

>>> from middleware.kg.backends.local import LocalStore
>>> from middleware.llm.scripted import ScriptedLLM
>>> kg = LocalStore(profile="metaqa")
>>> _ = kg.load_text("Heat|directed_by|Michael Mann\\n", name="kb.txt")
>>> answer = Reachable(ScriptedLLM(), kg).run("Who directed Heat?", choices=["Michael Mann", "Nobody Here"])
>>> answer.answer, answer.usage.llm_calls, answer.grounded
('Michael Mann', 0, True)
"""

from __future__ import annotations

import random
from typing import Any

from middleware.config.methods import ReachSettings
from middleware.kg.base import KnowledgeGraph
from middleware.llm.base import LLM
from middleware.methods.answer import NOT_FOUND, Answer, AnswerEntity, Evidence, EvidencePath
from middleware.methods.method import MethodBase
from middleware.methods.question_entities import add_subgraphs, link_entities
from middleware.methods.run import Run
from middleware.methods.steps import finish


class Reachable(MethodBase):
    """A seeded random choice among those reachable from the question; 0 LLM calls."""

    name = "reach"

    def __init__(
        self,
        llm: LLM,
        graph: KnowledgeGraph | None = None,
        *,
        config: ReachSettings | None = None,
        **shared: Any,
    ) -> None:
        super().__init__(llm, graph, **shared)
        self.config = config or ReachSettings()

    def answer(self, run: Run) -> Answer:
        if not run.choices:
            with run.step("answer") as step:
                step.parsed = NOT_FOUND
                run.warn("reach answers multiple-choice questions only; give choices", step)
            return finish(run, NOT_FOUND, entities=[], evidence=Evidence(), grounding="none")
        linked = link_entities(run, self.linker)
        add_subgraphs(
            run,
            linked,
            max_hops=self.config.max_hops,
            per_pair=self.config.paths_per_pair,
            setting="reach_paths_per_pair",
        )
        reached: dict[int, list[EvidencePath]] = {}
        for item in linked:
            assert item.subgraph is not None
            verbalizer = self.verbalizer(item.graph)
            for path in item.subgraph.paths:
                index = item.choices.get(path.nodes[-1])  # type: ignore[arg-type]
                if index is not None:
                    reached.setdefault(index, []).append(EvidencePath(path, verbalizer.path(path)))
        with run.step("answer") as step:
            pool = sorted(reached) or list(range(len(run.choices)))
            if not reached:
                run.warn(
                    "no choice is reachable from the question's entities; drew among all", step
                )
            index = random.Random(f"{self.config.seed}:{run.question}").choice(pool)
            text = run.choices[index]
            step.parsed = {"reachable": [run.choices[i] for i in sorted(reached)], "picked": text}
        paths = reached.get(index, [])
        entities = list(
            dict.fromkeys(AnswerEntity(p.path.nodes[-1].value, text, p.source) for p in paths)
        )
        return finish(
            run,
            text,
            entities=entities,
            evidence=Evidence(paths=paths),
            grounding="paths" if paths else "none",
        )
