"""The Knowledge Solver walk (the paper's Algorithm 1): hop by hop, the LLM picks.

Each round (step ``walk``) offers the current entity's neighbours as ``tail (relation)``,
with the rounds before as dialogue history, and the LLM picks one with the constrained
``choose()``, so every step is a real edge. The walk stops when it reaches a target
(a choice's entity), when the LLM picks "... is the answer" (open questions, from the
second round on), at a dead end or a literal, or after ``rounds`` rounds. A round with a
single option takes it without a call, so a walk costs at most ``rounds`` calls.
"""

from __future__ import annotations

from collections.abc import Callable, Collection, Sequence
from dataclasses import dataclass, field, replace
from typing import Literal

from pyoxigraph import NamedNode

from middleware.errors import LLMOutputError
from middleware.kg.base import Hop, Path
from middleware.kg.capped import Capped, cut_note
from middleware.kg.terms import Term
from middleware.kg.walks import RelationPath
from middleware.llm.base import Message, assistant, user
from middleware.llm.prompt_templates import one_line, render
from middleware.methods.answer import Step
from middleware.methods.ksl.offer import Offer, Option, Scorer, cap, stop_option
from middleware.methods.run import Run
from middleware.text.verbalize import Verbalizer

PLAN_SHARE = 1.0  # a confident plan offers the steps with this share of the best support
Stop = Literal["reached", "answered", "rounds", "dead-end", "value"]
STOP_REASONS: dict[str, str] = {
    "reached": "reached a choice's entity",
    "answered": "the model picked the entity it was at as the answer",
    "rounds": "the round limit was reached",
    "dead-end": "no unvisited neighbour was left",
    "value": "reached a literal value, which has no neighbours",
}


def opening(question: str, choices: Sequence[str] | None) -> str:
    """The first turn's head: the question and, for multiple choice, the choices."""
    text = f"Question: {one_line(question)}\n"
    if choices:
        text += f"Choices: {'; '.join(one_line(c) for c in choices)}\n"
    return text


def round_messages(
    question: str,
    choices: Sequence[str] | None,
    history: Sequence[tuple[str, str]],
    at: str,
    *,
    examples: bool = True,
) -> list[Message]:
    """One round's prompt: the instruction and (``examples``) the worked examples, the
    rounds walked so far as dialogue (where the walk stood, what was picked), then where
    it stands now; ``choose()`` appends the options.

    >>> [m["content"] for m in round_messages("Who?", None, [("Heat", "Michael Mann (directed by)")], "Michael Mann")[-3:]]
    ['Question: Who?\\nAt: Heat\\nChoice:', 'Michael Mann (directed by)', 'At: Michael Mann']
    """
    head = opening(question, choices)
    prompt = render("ksl_step", opening="" if history else head, at=one_line(at))
    turns: list[Message] = []
    for i, (where, picked) in enumerate(history):
        head_i = head if i == 0 else ""
        turns += [user(f"{head_i}At: {one_line(where)}\nChoice:"), assistant(picked)]
    head_messages = prompt.messages[:-1]
    if not examples:
        head_messages = [m for m in head_messages if m["role"] == "system"]
    return [*head_messages, *turns, prompt.messages[-1]]


@dataclass
class Walk:
    """Where the walk went and why it stopped."""

    start: NamedNode
    hops: list[Hop] = field(default_factory=list)
    history: list[tuple[str, str]] = field(default_factory=list)  # (at, picked)
    stop: Stop = "rounds"

    @property
    def end(self) -> Term:
        return self.hops[-1].end if self.hops else self.start

    @property
    def path(self) -> Path:
        return Path(tuple(self.hops))

    @property
    def nodes(self) -> list[Term]:
        return [self.start, *(h.end for h in self.hops)]


class Guide:
    """Steps a planner would take (``ksl+plan``); the plain walk has none."""

    confident = False

    def planned(self, nodes: Sequence[Term]) -> dict[Term, float]:
        """Entities the plans step to next from this walk prefix, with their support."""
        return {}

    def stops(self, nodes: Sequence[Term]) -> float:
        """The support of the best plan that ends where this walk prefix ends (0: none)."""
        return 0.0


Neighbours = Callable[[NamedNode, Collection[Term]], Capped[Option]]


@dataclass
class Walker:
    """Walks for one question: what it may step to, and how the LLM is asked."""

    run: Run
    verbalizer: Verbalizer
    neighbours: Neighbours  # options from an entity, the visited ones left out
    score: Scorer  # relation readings → similarity to the question
    rounds: int
    max_options: int
    max_relations: int = 0  # offer only the neighbours over the best relation paths
    targets: Collection[Term] = ()  # a walk that reaches one stops (choices' entities)
    guide: Guide = field(default_factory=Guide)
    examples: bool = True  # the prompt's worked examples (ksl_few_shot)

    def walk(self, start: NamedNode) -> Walk:
        walk = Walk(start)
        visited: set[Term] = {start}
        open_question = not self.targets
        for number in range(1, self.rounds + 1):
            current = walk.end
            if walk.hops and current in self.targets:
                walk.stop = "reached"
                return walk
            if not isinstance(current, NamedNode):
                walk.stop = "value"
                return walk
            at = self.verbalizer.name(current)
            with self.run.step("walk") as step:
                offer = self.offer(walk, current, visited, stop=open_question and bool(walk.hops))
                step.notes += offer.notes
                step.parsed = {
                    "round": number,
                    "at": at,
                    "offered": offer.texts,
                    "neighbours": offer.total,
                    "cut": offer.cut,
                }
                if not offer.options:
                    walk.stop = "dead-end"
                    return walk
                picked = self.pick(step, walk, at, offer)
                step.parsed["picked"] = picked.text
            walk.history.append((at, picked.text))
            if picked.hop is None:
                walk.stop = "answered"
                return walk
            walk.hops.append(picked.hop)
            visited.add(picked.hop.end)
        walk.stop = "reached" if walk.hops and walk.end in self.targets else "rounds"
        return walk

    def offer(self, walk: Walk, current: NamedNode, visited: set[Term], *, stop: bool) -> Offer:
        """This round's options (``stop``: stopping too), ranked and capped; only the
        planned ones when the plan is confident."""
        prefix = tuple((h.triple.predicate, h.forward) for h in walk.hops)
        planned = self.guide.planned(walk.nodes)
        read = self.neighbours(current, visited)
        offer = self._offer(walk, current, read.items, prefix, planned, stop=stop)
        if read.cut:
            where = self.verbalizer.name(current)
            note = cut_note(
                "neighbour triples",
                where,
                read.cap,
                "ksl_neighbor_limit",
                spread=read.spread,
                read=len(read.items),
            )
            offer.notes.insert(0, note)
        return offer

    def _offer(
        self,
        walk: Walk,
        current: NamedNode,
        options: list[Option],
        prefix: RelationPath,
        planned: dict[Term, float],
        *,
        stop: bool,
    ) -> Offer:
        """The offer from what was read at ``current``."""
        marked: list[Option] = []
        for option in options:
            steps = (*prefix, *option.steps)
            if option.end in planned:
                marked.append(
                    replace(option, steps=steps, keep="planned", weight=planned[option.end])
                )
            elif option.end in self.targets:
                marked.append(replace(option, steps=steps, keep="choice"))
            else:
                marked.append(replace(option, steps=steps))
        stopping = [stop_option(self.verbalizer.name(current), prefix)] if stop else []
        ends_here = self.guide.stops(walk.nodes) if stop else 0.0
        if ends_here:  # a plan ends here: stopping is a planned option too
            stopping = [replace(stopping[0], keep="planned", weight=ends_here)]
        if self.guide.confident:
            planned_here = [o for o in marked + stopping if o.keep == "planned"]
            top = max((o.weight for o in planned_here), default=0.0)
            chosen = sorted(  # the best plan's options; weaker plans' ones wait
                (o for o in planned_here if o.weight >= top * PLAN_SHARE), key=lambda o: -o.weight
            )
            if chosen:
                chosen = chosen[: self.max_options]  # a hub's planned walks can be many
                cut = len(marked) + len(stopping) - len(chosen)
                note = (
                    f"the plan is confident: offered only {len(chosen)} of its planned "
                    f"option(s), the best supported first; {cut} cut"
                )
                return Offer(chosen, len(marked), cut, [note])
        return cap(marked + stopping, self.max_options, self.score, relations=self.max_relations)

    def pick(self, step: Step, walk: Walk, at: str, offer: Offer) -> Option:
        """The LLM's pick; a lone option without a call; the first when it names none."""
        if len(offer.options) == 1:
            step.notes.append("one option: taken without asking the model")
            return offer.options[0]
        messages = round_messages(
            self.run.question, self.run.choices, walk.history, at, examples=self.examples
        )
        try:
            choice = self.run.choose(step, messages, offer.texts)
        except LLMOutputError as err:
            self.run.warn(
                f"the model picked no neighbour ({err.message}); took the first offered", step
            )
            return offer.options[0]
        return offer.options[choice.index]
