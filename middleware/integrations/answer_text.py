"""An ``Answer`` as the text an agent reads: the answer, how well the graph backs it,
and the evidence it rests on, one item a line.

>>> from middleware.methods.answer import Answer
>>> print(answer_text(Answer("Who directed Heat?", "Michael Mann", "io"), 5))
Answer: Michael Mann
Grounded: no (confidence 0.00, method io)
Evidence: none
"""

from __future__ import annotations

from middleware.methods.answer import Answer


def answer_text(answer: Answer, max_evidence: int) -> str:
    """``answer`` in a few lines, with at most ``max_evidence`` evidence items."""
    lines = [
        f"Answer: {answer.answer}",
        f"Grounded: {'yes' if answer.grounded else 'no'} "
        f"(confidence {answer.confidence:.2f}, method {answer.method})",
    ]
    items = [p.text for p in answer.evidence.paths] + [t.text for t in answer.evidence.triples]
    if items:
        lines.append("Evidence:")
        lines += [f"- {item}" for item in items[:max_evidence]]
        if len(items) > max_evidence:
            lines.append(f"- ... {len(items) - max_evidence} more")
    else:
        lines.append("Evidence: none")
    lines += [f"Warning: {warning}" for warning in answer.warnings]
    return "\n".join(lines)
