"""What an answer's confidence rests on (``Basis``, ``methods/calibration.py``), read off
the run, its evidence and the chains that support it: the support's rank and length, a
weak link, the relation gap, the planner's mode, fallback and ``unheld`` (from the
source that supports the answer), and how the question reads against relations no
source holds (``foreign_read``)."""

from __future__ import annotations

from collections.abc import Sequence

from pyoxigraph import NamedNode

from middleware.methods.answer import NOT_FOUND, Evidence, Support
from middleware.methods.calibration import Basis
from middleware.methods.run import Run
from middleware.methods.support import weakest
from middleware.planning.foreign_relations import ForeignRead, foreign_for
from middleware.planning.relation_fit import RelationFit


def _support_rank(answers: set[str], evidence: Evidence) -> int | None:
    """1-based position of the first evidence item holding a supported answer entity."""
    for rank, nodes in enumerate(evidence.items(), start=1):
        if any(isinstance(n, NamedNode) and n.value in answers for n in nodes):
            return rank
    return None


def basis_of(
    run: Run,
    text: str,
    evidence: Evidence,
    support: Sequence[Support],
    score: float | None,
    *,
    with_gap: bool = True,
) -> Basis:
    """What the answer's confidence rests on (``methods/calibration.py``); the relation
    gap only ``with_gap`` (it costs an encoder call)."""
    given = bool(text) and text != NOT_FOUND
    if not support:
        return Basis(
            given=given,
            evidence=bool(evidence),
            mode=run.plan_mode,
            fallback=run.plan_fallback,
            unheld=round(max(run.plan_unheld_by.values(), default=0.0), 4),
            profile=run.profile,
        )
    rank = _support_rank({s.answer for s in support}, evidence) or 1
    return Basis(
        given=given,
        evidence=True,
        supported=True,
        share=score if score is not None else 1.0 / rank,
        rank=rank,
        hops=min(len(s.triples) for s in support),
        weak=weakest(support) is not None,
        relation_gap=_relation_gap(run, support) if with_gap else 0.0,
        mode=run.plan_mode,
        fallback=run.plan_fallback,
        unheld=round(_unheld(run, support), 4),
        profile=run.profile,
    )


def _unheld(run: Run, support: Sequence[Support]) -> float:
    """How much the question asks for paths the plan's topic lacks, in the source that
    supports the answer best: another source's planning, which lacks them, does not
    count against a chain found where they are held."""
    by_source = run.plan_unheld_by
    sources = {chain.triples[0].source or "" for chain in support if chain.triples}
    if not sources or not sources <= set(by_source):
        return max(by_source.values(), default=0.0)
    return min(by_source[s] for s in sources)


def _relation_gap(run: Run, support: Sequence[Support]) -> float:
    """The smallest gap, over the supporting chains, between the relation the question
    asks about and the relations a chain holds (0 where no source can tell)."""
    gaps = []
    for chain in support:
        fit = run.relation_fits.get(chain.triples[0].source or "") if chain.triples else None
        asked = run.asked.get(chain.start)
        if fit is None or asked is None or not asked.span:
            return 0.0
        held = {t.predicate.value for t in chain.triples}
        gaps.append(fit.gap(run.question, asked.span, held))
    return round(min(gaps), 4) if gaps else 0.0


def foreign_read(run: Run, support: Sequence[Support]) -> ForeignRead | None:
    """How the question reads against relations no source here holds: read once per
    source and question entity of the supporting chains, with all their relations; the
    read that reads least foreign (None where a source cannot tell)."""
    held: dict[tuple[int, str], set[str]] = {}
    fits: dict[int, RelationFit] = {}
    for chain in support:
        fit = run.relation_fits.get(chain.triples[0].source or "") if chain.triples else None
        asked = run.asked.get(chain.start)
        if fit is None or asked is None or not asked.span:
            return None
        fits[id(fit)] = fit
        held.setdefault((id(fit), asked.span), set()).update(
            t.predicate.value for t in chain.triples
        )
    reads = []
    for (fit_id, span), predicates in held.items():
        read = foreign_for(fits[fit_id]).read(run.question, span, predicates)
        if read is None:
            return None
        reads.append(read)
    return min(reads, key=lambda r: r.margin) if reads else None
