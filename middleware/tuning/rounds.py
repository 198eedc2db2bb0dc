"""The walk's rounds along a known path, as instruction-tuning examples (``kgmw
ksl-dataset``; which paths, and for which questions: ``tuning/dataset.py``).

Each round is shown as the walk would show it: the prompt from ``walk.round_messages``
with the rounds before as dialogue, the options from ``offer.py`` marked, ranked and
capped as ``Walker.offer`` does (without a planner). When the cap would cut the
correct step, its relation path joins the best ones (``ksl_max_relations``) and the
cap runs again, so the correct step comes with its relation's other neighbours rather
than as the odd one out; if the option limit still cuts it, it takes the place of the
least ranked option the cap may cut, at its own rank. The output is the correct option. On an open question the
path ends with one more round at the answer, whose output is ``<answer> is the answer``
(the walk offers stopping from the second round on). A round with a single option is
no example: the walk takes it without asking the model.

``instruction`` is the ``ksl_step`` prompt's system text; ``input`` the rest of the
round without the prompt's few-shot examples (the question, the rounds before, where
the walk stands, the options), flattened, so that ``instruction``, a blank line and
``input`` read as the round the walk sends, few-shot examples left out.
"""

from __future__ import annotations

from collections.abc import Collection, Sequence
from dataclasses import dataclass, replace

from pyoxigraph import NamedNode

from middleware.config.methods import KSLSettings
from middleware.kg.base import Hop, KnowledgeGraph, Path
from middleware.kg.terms import Term
from middleware.kg.walks import RelationPath
from middleware.llm.options import with_options
from middleware.llm.prompt_templates import flatten, render
from middleware.methods.choice_subgraph import Subgraph
from middleware.methods.ksl.offer import (
    Option,
    Scorer,
    cap,
    hop_options,
    neighbour_options,
    stop_option,
)
from middleware.methods.ksl.walk import round_messages
from middleware.text.verbalize import Verbalizer

PROMPT = "ksl_step"


@dataclass(frozen=True)
class Example:
    """One Alpaca-style training example: one round of the walk and its correct pick."""

    instruction: str
    input: str
    output: str

    def to_dict(self) -> dict[str, str]:
        return {"instruction": self.instruction, "input": self.input, "output": self.output}


@dataclass
class Walked:
    """The examples of one path, and its rounds that gave none or needed help."""

    examples: list[Example]
    lone: int = 0  # rounds with one option: the walk asks no model there
    rescued: int = 0  # rounds whose correct option the offer would have left out


@dataclass(frozen=True)
class Asked:
    """The question a path answers, as the walk sees it."""

    question: str
    choices: Sequence[str] | None = None
    targets: Collection[Term] = ()  # choices' entities: the walk stops on them
    subgraph: Subgraph | None = None  # multiple choice: the steps the walk may take


def relations(path: Path) -> RelationPath:
    """The relation path a path walks: each hop's predicate and direction."""
    return tuple((h.triple.predicate, h.forward) for h in path.hops)


def same_hop(a: Hop, b: Hop) -> bool:
    return a.forward == b.forward and a.triple.key() == b.triple.key()


class PathRounds:
    """Turns known paths into the rounds the walk would play along them."""

    def __init__(self, graph: KnowledgeGraph, verbalizer: Verbalizer, config: KSLSettings) -> None:
        self.graph = graph
        self.verbalizer = verbalizer
        self.config = config
        fixed = render(PROMPT, opening="", at="").messages
        self.instruction = fixed[0]["content"] if fixed[0]["role"] == "system" else ""
        self.preamble = len(fixed) - 1  # system text and few-shot examples

    def walk(self, asked: Asked, path: Path, score: Scorer) -> Walked:
        """One example per round of the walk along ``path``."""
        nodes, hops = path.nodes, list(path.hops)
        rounds = len(hops) + (not asked.choices and isinstance(nodes[-1], NamedNode))
        done = Walked([])
        history: list[tuple[str, str]] = []
        for i in range(rounds):
            current = nodes[i]
            assert isinstance(current, NamedNode)
            at = self.verbalizer.name(current)
            stop = at if not asked.choices and i > 0 else None
            gold = hops[i] if i < len(hops) else None
            options = self.neighbours(asked, current, set(nodes[: i + 1]))
            prefix = relations(Path(tuple(hops[:i])))
            shown, correct, rescued = self.offer(options, prefix, gold, stop, asked.targets, score)
            done.rescued += rescued
            if len(shown) > 1:
                texts = [o.text for o in shown]
                done.examples.append(self.example(asked, history, at, texts, correct.text))
            else:
                done.lone += 1
            history.append((at, correct.text))
        return done

    def neighbours(self, asked: Asked, entity: NamedNode, visited: set[Term]) -> list[Option]:
        """What the walk offers from ``entity``: the subgraph's steps (multiple choice) or
        the graph's neighbours, visited ones left out."""
        if asked.subgraph is not None:
            steps = [h for h in asked.subgraph.steps(entity) if h.end not in visited]
            return hop_options(steps, self.verbalizer)
        return neighbour_options(
            self.graph,
            entity,
            self.verbalizer,
            visited=visited,
            limit=self.config.neighbor_limit,
            spread=self.config.spread_hubs,
        ).items

    def offer(
        self,
        options: list[Option],
        prefix: RelationPath,
        gold: Hop | None,
        stop: str | None,
        targets: Collection[Term],
        score: Scorer,
    ) -> tuple[list[Option], Option, bool]:
        """The round's options as the walk ranks and caps them, the correct one (the
        step over ``gold``, or with none, stopping), and whether it had to be put back."""
        marked = [
            replace(o, steps=(*prefix, *o.steps), keep="choice" if o.end in targets else o.keep)
            for o in options
        ]
        stopping = [stop_option(stop, prefix)] if stop is not None else []
        if gold is None:
            correct = stopping[0]
        else:
            found = [o for o in marked if o.hop is not None and same_hop(o.hop, gold)]
            correct = found[0] if found else self.made(gold, prefix, marked, targets)
            if not found:
                marked.append(correct)
        everything = marked + stopping
        limit, relations = self.config.max_options, self.config.max_relations
        shown = cap(everything, limit, score, relations=relations).options
        if any(o is correct for o in shown):
            return shown, correct, False
        ranked = cap(everything, len(everything), score).options  # nothing cut
        if relations:  # the correct step's relation path joins the best ones, then the cap
            best = list(dict.fromkeys(o.steps for o in ranked if o.keep is None))[:relations]
            allowed = {*best, correct.steps}
            pool = [o for o in everything if o.keep is not None or o.steps in allowed]
            shown = cap(pool, limit, score).options
            if any(o is correct for o in shown):
                return shown, correct, True
        if len(shown) >= limit:  # the least ranked option the cap may cut makes room
            free = [i for i, o in enumerate(shown) if o.keep is None]
            if free:
                del shown[free[-1]]
        chosen = {id(o) for o in shown} | {id(correct)}
        return [o for o in ranked if id(o) in chosen], correct, True

    def made(
        self, gold: Hop, prefix: RelationPath, marked: list[Option], targets: Collection[Term]
    ) -> Option:
        """The option for a correct step the neighbour read left out, numbered like
        ``hop_options`` numbers equal texts."""
        option = hop_options([gold], self.verbalizer)[0]
        same = sum(o.text == option.text or o.text.startswith(f"{option.text} #") for o in marked)
        text = f"{option.text} #{same + 1}" if same else option.text
        keep = "choice" if gold.end in targets else None
        return replace(option, text=text, steps=(*prefix, *option.steps), keep=keep)

    def example(
        self,
        asked: Asked,
        history: Sequence[tuple[str, str]],
        at: str,
        options: Sequence[str],
        output: str,
    ) -> Example:
        """The round as the walk sends it, minus the system text and few-shot examples."""
        messages = round_messages(asked.question, asked.choices, history, at)
        turns = with_options(messages[self.preamble :], options)
        return Example(self.instruction, flatten(turns), output)
