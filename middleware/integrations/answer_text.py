"""An ``Answer`` as the text an agent reads: the answer (or that the graph does not hold
it, and the withheld guess labelled as not supported by the graph), how well the graph
backs it, the chains of evidence that support it, and the evidence it rests on, one
item a line.

>>> from middleware.methods.answer import NOT_FOUND, Answer, Guess
>>> print(answer_text(Answer("Who directed Heat?", "Michael Mann", "io"), 5))
Answer: Michael Mann
Grounded: no (confidence 0.00, method io)
Evidence: none
>>> guess = Guess("Ridley Scott", 0.2, [], "no evidence joins an entity the question names to the answer")
>>> print(answer_text(Answer("Who directed Heat?", NOT_FOUND, "rok", found=False, guess=guess), 5))
Answer: not found. The graph does not hold the answer.
Best guess (not supported by the graph): Ridley Scott (confidence 0.20; no evidence joins an entity the question names to the answer)
Grounded: no (confidence 0.00, method rok)
Evidence: none
"""

from __future__ import annotations

from middleware.methods.answer import NOT_HELD, Answer


def answer_text(answer: Answer, max_evidence: int) -> str:
    """``answer`` in a few lines, with at most ``max_evidence`` evidence items."""
    if answer.found:
        lines = [f"Answer: {answer.answer}"]
    else:
        lines = [f"Answer: not found. {NOT_HELD}"]
        if answer.guess is not None:
            guess = answer.guess
            lines.append(
                f"Best guess (not supported by the graph): {guess.answer} "
                f"(confidence {guess.confidence:.2f}; {guess.why})"
            )
    lines.append(
        f"Grounded: {'yes' if answer.grounded else 'no'} "
        f"(confidence {answer.confidence:.2f}, method {answer.method})"
    )
    if answer.support:
        lines.append("Supported by:")
        lines += [
            f"- {chain.text}" + (f" (weak link: {chain.weak})" if chain.weak else "")
            for chain in answer.support
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
