"""One result record per (method, question): the answer, its scores and its cost.

The record is plain JSON so a results file can be read back, resumed and reported
without the graph or the model.
"""

from __future__ import annotations

import contextlib
from collections.abc import Sequence
from typing import Any

from pyoxigraph import NamedNode

from middleware.errors import MiddlewareError
from middleware.eval.abstention import abstains
from middleware.eval.items import EvalItem
from middleware.eval.metrics import choice_correct, evidence_recall, hits_at_1, rouge_l
from middleware.kg.base import KnowledgeGraph
from middleware.kg.terms import Term
from middleware.methods.answer import Answer, AnswerEntity
from middleware.serialize.answer_json import entity_dict

COST_KEYS = ("llm_calls", "prompt_tokens", "completion_tokens", "sparql_queries", "cache_hits")
# Keys that differ between two runs of the same questions (wall-clock time only).
TIMING_KEYS = ("seconds", "llm_seconds")


def base_record(dataset: str, split: str, method: str, item: EvalItem) -> dict[str, Any]:
    return {
        "key": record_key(dataset, split, method, item.id),
        "dataset": dataset,
        "split": split,
        "method": method,
        "id": item.id,
        "question": item.question,
        "gold": list(item.answers),
        "answerable": item.answerable,
        "choices": list(item.choices),
        "meta": dict(item.meta),
    }


def record_key(dataset: str, split: str, method: str, item_id: str) -> str:
    return f"{dataset}/{split}/{method}/{item_id}"


class Scorer:
    """Scores answers against gold, reading entity names and aliases from ``graph``."""

    def __init__(self, graph: KnowledgeGraph | None) -> None:
        self.graph = graph

    def _names(self, terms: list[Term]) -> list[str]:
        names = [t.value for t in terms]
        if self.graph is not None and terms:
            names += list(self.graph.labels(terms).values())
        return names

    def _top_names(self, entities: Sequence[AnswerEntity]) -> list[str]:
        if not entities:
            return []
        top = entities[0]
        names = [top.iri] + ([top.label] if top.label else [])
        if self.graph is not None:
            # Aliases are a bonus: an entity the graph lacks keeps its label only.
            with contextlib.suppress(MiddlewareError):
                names += list(self.graph.describe(NamedNode(top.iri)).aliases)
        return names

    def score(self, item: EvalItem, answer: Answer) -> dict[str, Any]:
        """Metrics and cost of one answer. An unanswerable item has no Hits@1, ROUGE-L
        or evidence recall (``None``): only whether the answer abstained counts. A
        withheld answer's prediction is the not-found text (a miss); the record keeps
        ``found``, the ``guess`` the method would have given and how many chains
        ``support`` the answer."""
        usage = answer.usage
        record: dict[str, Any] = {
            "prediction": answer.answer,
            "abstained": abstains(answer.answer, found=answer.found),
            "found": answer.found,
            "guess": answer.guess.answer if answer.guess is not None else None,
            "support": len(answer.support),
            "entities": [entity_dict(e) for e in answer.entities[:5]],
            "grounding": answer.grounding,
            "warnings": len(answer.warnings),
            **{k: int(usage[k]) for k in COST_KEYS},
            **{k: round(float(usage[k]), 4) for k in TIMING_KEYS},
            "error": None,
        }
        if item.choices and item.answer_key is not None:
            record["choice_correct"] = choice_correct(answer.answer, item.answer_key, item.choices)
            record["hit"] = record["choice_correct"]
        elif not item.answerable:
            record["hit"] = None
        else:
            record["hit"] = hits_at_1(
                answer.answer, item.answers, top_names=self._top_names(answer.entities)
            )
            record["rouge_l"] = round(rouge_l(answer.answer, item.answers), 4)
        record.update(self._said(item, answer))
        triples = answer.evidence.all_triples()
        if triples:
            terms: list[Term] = []
            for triple in triples:
                terms += [triple.subject, triple.object]
            names = self._names(list(dict.fromkeys(terms)))
            recall = evidence_recall(item.answers, names)
            record["evidence_recall"] = recall if item.answerable else None
            record["evidence_triples"] = len(triples)
        else:
            none = answer.grounding == "not-applicable" or not item.answerable
            record["evidence_recall"] = None if none else False
            record["evidence_triples"] = 0
        return record

    def _said(self, item: EvalItem, answer: Answer) -> dict[str, Any]:
        """What calibration learns from: the confidence of what the method said or would
        have said (its guess), what it rested on, and whether it was right
        (``answer_hit``: None when it said nothing at all)."""
        text, entities, confidence = answer.answer, answer.entities, answer.confidence
        if not answer.found and answer.guess is not None:
            guess = answer.guess
            text, entities, confidence = guess.answer, guess.entities, guess.confidence
        said = answer.found or answer.guess is not None
        if not said:
            right: bool | None = None
        elif not item.answerable:
            right = False
        elif item.choices and item.answer_key is not None:
            right = choice_correct(text, item.answer_key, item.choices)
        else:
            right = hits_at_1(text, item.answers, top_names=self._top_names(entities))
        basis = answer.basis.to_dict() if answer.basis is not None else None
        return {"confidence": confidence, "basis": basis, "answer_hit": right}


def error_record(err: BaseException, *, answerable: bool = True) -> dict[str, Any]:
    """The fields of a question that failed: no answer (wrong, when there was one to
    give; not an abstention), the error's class and message."""
    return {
        "prediction": None,
        "hit": False if answerable else None,
        "abstained": False,
        "evidence_recall": None,
        "error": {"class": type(err).__name__, "message": str(err)[:500]},
    }
