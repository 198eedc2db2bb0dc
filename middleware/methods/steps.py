"""The stages every method ends with, written once: the final answer, grounding, finish.

- ``final_answer``: one LLM call over the facts (a constrained choice when the
  question has choices, or among the planned entities when the method was handed
  prior planned evidence: ``+plan`` methods); skipped, saying so, when the policy wants graph-only
  answers and there is no evidence.
- ``ground``: the graph entities the answer names, per source.
- ``finish``: the support rule (an answer is grounded only when the evidence joins an
  entity the question names to an answer entity: ``methods/support.py``), the
  confidence, and the policy (``answer_graph_only``, ``answer_min_confidence``,
  ``answer_foreign_margin``) that withholds an unsupported or unsure answer, or one to
  a question that asks for a relation the source does not hold, as "not in the graph",
  kept as the guess (an empty reply guesses nothing: "not in the graph" with no guess).

Confidence (0-1): an empty answer scores 0; an unsupported answer 0.1 with no evidence
at all, else 0.2; a supported answer 0.5 + 0.5 × share, where share is the method's own
score when it has one (a planner's vote share) and otherwise 1 / r for the r-th
evidence item (paths first, then triples) that holds a supported answer entity. When
every supporting chain starts at a weakly linked question entity (fuzzy, or part of a
longer name), the confidence is multiplied by ``WEAK_LINK_FACTOR``.

>>> from middleware.llm.scripted import ScriptedLLM
>>> from middleware.methods.run import AnswerPolicy, Run
>>> run = Run("Who directed Heat?", "demo", ScriptedLLM(default="Michael Mann"))
>>> text = final_answer(run, ["Heat | directed by | Michael Mann"], Evidence())
>>> answer = finish(run, text, entities=[], evidence=Evidence(), grounding="none")
>>> answer.answer == NOT_FOUND, answer.found, answer.guess, run.usage().llm_calls
(True, False, None, 0)
>>> lenient = AnswerPolicy(graph_only=False)
>>> run = Run("Who directed Heat?", "demo", ScriptedLLM(default="Michael Mann"), policy=lenient)
>>> text = final_answer(run, ["Heat | directed by | Michael Mann"], Evidence())
>>> answer = finish(run, text, entities=[], evidence=Evidence(), grounding="none")
>>> answer.answer, answer.grounded, answer.confidence
('Michael Mann', False, 0.1)
"""

from __future__ import annotations

import itertools
import re
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass

from pyoxigraph import NamedNode

from middleware.errors import EndpointError, LLMOutputError
from middleware.kg.base import KnowledgeGraph
from middleware.kg.terms import Term
from middleware.llm.prompt_templates import render
from middleware.methods.answer import (
    NOT_FOUND,
    Answer,
    AnswerEntity,
    Evidence,
    Grounding,
    Guess,
)
from middleware.methods.answer_basis import basis_of, foreign_read
from middleware.methods.calibration import load_calibration
from middleware.methods.grounding import ground_answer
from middleware.methods.run import PriorEvidence, Run
from middleware.methods.support import SupportRule, find_support, weakest
from middleware.text.folding import fold
from middleware.text.linking import EntityLinker
from middleware.text.verbalize import Verbalizer

# Graph text in the final prompt: about 5,000 tokens at 4 characters a token, room left
# in the embedded model's 8,192 for the instructions, the choices and the reply.
PROMPT_FACT_CHARS = 20_000
LOOPED = 3  # a name this many times in a row is a small model repeating itself


def clean_answer(text: str) -> str:
    """The model's answer line without a leading label or trailing filler.

    >>> clean_answer("  Answer: James Cameron.  ")
    'James Cameron'
    >>> clean_answer("Titanic, Titanic, titanic, Avatar")  # a name 3 times in a row: once
    'Titanic, Avatar'
    >>> clean_answer("New York, New York")  # twice may be a name (a film's, a place's)
    'New York, New York'
    >>> clean_answer("Springfield, Illinois, Springfield, Missouri")  # apart: kept
    'Springfield, Illinois, Springfield, Missouri'
    >>> clean_answer("1,900,000")
    '1,900,000'
    """
    line = text.strip().splitlines()[0] if text.strip() else ""
    line = re.sub(r"^(the )?answer( is)?\s*[:\-]\s*", "", line.strip(), flags=re.IGNORECASE)
    line = line.strip().rstrip(".").strip()
    parts = [part.strip() for part in re.split(r",\s+", line)]  # "1,900,000" is one
    runs = [list(run) for _, run in itertools.groupby(parts, key=fold)]
    if all(len(run) < LOOPED for run in runs):
        return line
    return ", ".join(run[0] if len(run) >= LOOPED else ", ".join(run) for run in runs)


def fallback_choice(choices: Sequence[str], facts: Sequence[str]) -> int:
    """The choice the facts name most often (first on ties), for a reply that named none.

    >>> fallback_choice(["Paris", "Rome"], ["Rome | capital of | Italy"])
    1
    """
    text = " " + " ".join(fold(f) for f in facts) + " "
    counts = [text.count(f" {fold(c)} ") if fold(c) else 0 for c in choices]
    return max(range(len(choices)), key=lambda i: (counts[i], -i))


def within_budget(facts: list[str]) -> tuple[list[str], int]:
    """The first ``facts`` that fit in ``PROMPT_FACT_CHARS`` (one line each), and how
    many were left out; a first fact longer than that is shown cut to it."""
    used = 0
    for kept, fact in enumerate(facts):
        used += len(fact) + 1
        if used > PROMPT_FACT_CHARS + 1:  # the last line needs no line break
            shown = facts[:kept] or [fact[:PROMPT_FACT_CHARS]]
            return shown, len(facts) - len(shown)
    return facts, 0


def final_answer(
    run: Run,
    facts: list[str],
    evidence: Evidence,
    *,
    prompt: str = "facts_answer",
    parse: Callable[[str], str] = clean_answer,
    answers: Sequence[str] = (),
    prior: PriorEvidence | None = None,
) -> str:
    """The answer from ``facts`` in one call (step ``answer``); with choices, one of them.

    ``answers`` (graph entities' names the method found) make the call a constrained
    choice among them, as the question's own choices do. ``prior`` (the planned walks
    of a ``+plan`` variant) puts its facts first, and its answers become the options.

    Under ``answer_graph_only`` with no evidence, no call is made and the answer is
    ``NOT_FOUND``.
    """
    if prior is not None:  # planned facts first, then the method's own
        facts = list(dict.fromkeys([*prior.facts, *facts]))
        evidence = merged(prior.evidence, evidence)
    with run.step("answer") as step:
        facts, left_out = within_budget(facts)
        if left_out:
            step.notes.append(
                f"{left_out:,} of {len(facts) + left_out:,} facts left out of the prompt "
                f"(at most {PROMPT_FACT_CHARS:,} characters of facts, the first kept)"
            )
        if run.policy.graph_only and not evidence:
            step.parsed = NOT_FOUND
            run.warn("no evidence was found and answers come only from the graph", step)
            return NOT_FOUND
        planned = prior.answers if prior is not None else []
        options = run.choices or list(answers) or planned
        if options:
            choice_prompt = render("choice_answer", question=run.question, facts=facts)
            try:
                text = run.choose(step, choice_prompt, options).option
            except LLMOutputError as err:
                # the question's own choices: the one the facts name most; planned
                # answers: the plan's first (those most walks reach come first)
                text = options[fallback_choice(options, facts)] if run.choices else options[0]
                run.warn(f"the model named no choice ({err.message}); picked {text!r}", step)
        else:
            text = parse(
                run.complete(step, render(prompt, question=run.question, facts=facts)).text
            )
        step.parsed = text
        if not text:
            run.warn("the model gave an empty answer", step)
    return text


@dataclass(frozen=True)
class Candidates:
    """One source's entities an answer may name, and how to link the rest."""

    graph: KnowledgeGraph
    linker: EntityLinker
    nodes: Sequence[Term] = ()
    verbalizer: Verbalizer | None = None


def ground(
    run: Run, text: str, sources: Iterable[Candidates], *, prior: PriorEvidence | None = None
) -> list[AnswerEntity]:
    """The graph entities ``text`` names, source by source (step ``ground``), among the
    candidates and the entities on ``prior``'s paths."""
    sources = list(sources)
    if not text or text == NOT_FOUND or not sources:
        return []
    entities: list[AnswerEntity] = []
    with run.step("ground") as step:
        for share in sources:
            nodes = list(share.nodes)
            if prior is not None:
                nodes += [
                    n
                    for item in prior.evidence.paths
                    if item.source == share.graph.name
                    for n in item.path.nodes
                ]
            iris = [n for n in dict.fromkeys(nodes) if isinstance(n, NamedNode)]
            verbalizer = share.verbalizer or Verbalizer(share.graph)
            try:
                verbalizer.prepare(iris)
                names = {iri: (verbalizer.name(iri), share.graph.name) for iri in iris}
                entities += ground_answer(text, run.question, names, linker=share.linker)
            except EndpointError as err:  # the answer stands; only its IRIs from here are lost
                run.warn(
                    f"source {share.graph.name!r} failed while grounding the answer "
                    f"({type(err).__name__}): {err}",
                    step,
                )
        step.parsed = [{"iri": e.iri, "label": e.label, "source": e.source} for e in entities]
    return entities


def merged(first: Evidence, then: Evidence) -> Evidence:
    """``first``'s paths and triples, then those of ``then`` not already in it."""
    paths = list(first.paths)
    seen_paths = {p.path.key() for p in paths}
    paths += [p for p in then.paths if p.path.key() not in seen_paths]
    triples = list(first.triples)
    seen = {t.triple.key() for t in triples}
    triples += [t for t in then.triples if t.triple.key() not in seen]
    return Evidence(paths=paths, triples=triples)


def finish(
    run: Run,
    text: str,
    *,
    entities: Sequence[AnswerEntity],
    evidence: Evidence,
    grounding: Grounding,
    support: float | None = None,
    prior: PriorEvidence | None = None,
    rule: SupportRule = "facts",
) -> Answer:
    """The Answer: grounded only when the evidence (``prior``'s first) joins an entity
    the question names (``run.asked``) to an answer entity by ``rule``; an answer the
    policy will not give is replaced by ``NOT_FOUND`` and kept as the guess, with a
    warning."""
    if prior is not None:
        evidence = merged(prior.evidence, evidence)
        planned = any(e.iri in prior.answer_iris for e in entities)
        if support is None and prior.support is not None and planned:
            support = prior.support  # an answer among the plan's: the plan's support
    kept = list(entities)
    policy = run.policy
    answers = [e.iri for e in kept]
    chains = find_support(evidence, run.asked, answers, rule=rule, max_hops=policy.support_hops)
    if prior is not None and rule == "facts":  # planned walks support at any length
        walked = find_support(prior.evidence, run.asked, answers, rule="walks")
        seen = {tuple(t.key() for t in c.triples) for c in walked}
        chains = walked + [c for c in chains if tuple(t.key() for t in c.triples) not in seen]
    calibration = load_calibration(policy.calibration)
    with_gap = policy.relation_gap or calibration.uses(run.method, "gap")
    basis = basis_of(run, text, evidence, chains, support, with_gap=with_gap)
    score = calibration.confidence(run.method, basis)
    given = basis.given
    weak = weakest(chains)
    if given and weak is not None:
        run.warn(f"the question's entity is linked only weakly ({weak}); confidence lowered")
    unsupported = [e.label or e.iri for e in kept if e.iri not in {c.answer for c in chains}]
    if given and chains and unsupported:
        run.warn(f"no evidence joins the question to {', '.join(unsupported[:5])}")
    guess: Guess | None = None
    # a multiple-choice question asks for a pick among its choices: the pick stands,
    # and ``grounded`` says whether the evidence supports it
    if given and policy.graph_only and grounding != "not-applicable" and not run.choices:
        why = None
        if not chains:
            why = "no evidence joins an entity the question names to the answer"
        elif score < policy.min_confidence:
            why = f"its confidence {score:g} is below {policy.min_confidence:g}"
        elif policy.foreign_margin > 0 and (read := foreign_read(run, chains)) is not None:
            why = read.why() if read.margin >= policy.foreign_margin else None
        if why is not None:
            run.warn(f"the answer {text!r} was withheld: {why}")
            guess = Guess(text, score, kept, why, chains)
            text, kept, chains, given = NOT_FOUND, [], [], False
    elif not text and policy.graph_only and grounding != "not-applicable":
        # an empty reply gave no answer the graph supports; there is nothing to guess
        run.warn("nothing was answered, so the graph is said not to hold the answer")
        text, kept, chains = NOT_FOUND, [], []
    elif given and chains and run.choices and policy.graph_only and policy.foreign_margin > 0:
        read = foreign_read(run, chains)  # a pick stands; say when the choices may all miss
        if read is not None and read.margin >= policy.foreign_margin:
            run.warn(f"the pick {text!r} may not answer the question: {read.why()}")
    return Answer(
        question=run.question,
        answer=text,
        method=run.method,
        entities=kept,
        evidence=evidence,
        steps=list(run.steps),
        usage=run.usage(),
        grounding=grounding,
        grounded=bool(chains),
        confidence=score if given else 0.0,  # an empty reply: 0 (withheld under graph_only)
        warnings=list(run.warnings),
        choices=run.choices,
        sources=[g.name for g in run.graphs],
        support=chains,
        found=text != NOT_FOUND,
        guess=guess,
        basis=basis,
    )
