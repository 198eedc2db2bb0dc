"""Relation paths as data: a key to store them by, the path a walk followed, a phrase.

>>> from pyoxigraph import NamedNode
>>> path = ((NamedNode("http://x/directed_by"), False), (NamedNode("http://x/in_language"), True))
>>> path_key(path)
'^<http://x/directed_by>/<http://x/in_language>'
>>> from_key(path_key(path)) == path
True
"""

from __future__ import annotations

from collections.abc import Sequence

from pyoxigraph import NamedNode

from middleware.errors import BadRequest
from middleware.kg.base import Path
from middleware.kg.walks import MAX_STEPS, RelationPath
from middleware.text.verbalize import Verbalizer

# Added to a relation path's phrase similarity per hop count (tuned on MetaQA dev):
# longer paths need more to win. The vote's blend with the phrase (planner.py) and the
# walk's reading of paths (methods/ksl/reading.py) use it; zero-shot ranking has its
# own (path_reading.QUESTION_PRIOR).
LENGTH_PRIOR = {1: 0.0, 2: -0.06, 3: -0.12}


def path_key(path: RelationPath) -> str:
    """The path as text: each step ``<p>`` or ``^<p>`` (backwards), joined by ``/``."""
    return "/".join(("" if forward else "^") + f"<{p.value}>" for p, forward in path)


def from_key(key: str) -> RelationPath:
    """The path a ``path_key`` names; a malformed key is a BadRequest."""
    steps = []
    for part in key.split(">/"):
        text = part if part.endswith(">") else part + ">"
        forward = not text.startswith("^")
        text = text.removeprefix("^")
        if not (text.startswith("<") and text.endswith(">") and len(text) > 2):
            raise BadRequest(f"not a relation path: {key!r}")
        steps.append((NamedNode(text[1:-1]), forward))
    if not 1 <= len(steps) <= MAX_STEPS:
        raise BadRequest(f"a relation path has 1 to {MAX_STEPS} steps: {key!r}")
    return tuple(steps)


def walked(path: Path) -> RelationPath:
    """The relation path a graph path followed."""
    return tuple((hop.triple.predicate, hop.forward) for hop in path.hops)


def phrase(path: RelationPath, verbalizer: Verbalizer, topic: str = "NE") -> str:
    """The path read from its end back to the topic, as a question would name it:
    ``in language ← directed by ← NE`` reads "language of films directed by NE".

    Each step is read from the entity it reaches: a forward step ``film in_language
    X`` reaches X, which is "in language of" the film; the verbalizer's inverse
    reading is used for forward steps and the plain one for backward steps.
    """
    words = [verbalizer.relation(p, forward=not forward) for p, forward in reversed(path)]
    return " ".join([*words, topic])


def describe(path: RelationPath, verbalizer: Verbalizer) -> str:
    """The path for people: ``directed by⁻¹ → in language`` (⁻¹: walked backwards)."""
    return " → ".join(
        verbalizer.relation(p, forward=True) + ("" if forward else "⁻¹") for p, forward in path
    )


def ends(walks: Sequence[Path]) -> list[NamedNode]:
    """The distinct IRIs the walks end at, those most walks reach first (then by IRI)."""
    counts: dict[NamedNode, int] = {}
    for walk in walks:
        end = walk.nodes[-1] if walk.hops else None
        if isinstance(end, NamedNode):
            counts[end] = counts.get(end, 0) + 1
    return sorted(counts, key=lambda node: (-counts[node], node.value))
