"""Questions a relation path answers, worded from its relations' labels alone.

One frozen set of templates serves every graph: they know nothing of a dataset's own
questions, only the two readings a profile gives each relation (``directed by``, and
its inverse ``directed``) and whether the path's ends are dates. A path is read from
its answer back to the topic (masked as ``NE``), and also from the topic out; each
wording is a masked question a user might ask, so the planner's vote treats it like a
learned question.

>>> steps = [Reading(answer_side="directed", topic_side="directed by")]
>>> wordings(steps)[:3]
['what directed NE?', 'who directed NE?', 'which directed NE?']
>>> two = [Reading("written by", "wrote"), Reading("directed", "directed by")]
>>> "who directed the ones written by NE?" in wordings(two)
True
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass

from pyoxigraph import NamedNode

from middleware.kg.walks import RelationPath
from middleware.planning.masking import MASK
from middleware.text.verbalize import Verbalizer

REVERSED = " (reversed)"  # the verbalizer's mark of a relation with no inverse reading
PREPOSITIONS = frozenset(
    ["by", "in", "to", "for", "from", "at", "on", "with", "into", "as", "about", "over", "under"]
)
AUXILIARY = re.compile(r"^(has|have|had|is|was|are|were)\s+", re.IGNORECASE)


@dataclass(frozen=True)
class Reading:
    """One step's names: how the entity it reaches relates to the one before
    (``answer_side``), and how the one before relates to it (``topic_side``)."""

    answer_side: str
    topic_side: str


def readings(path: RelationPath, verbalizer: Verbalizer) -> list[Reading]:
    """Each step's two readings, from the topic out (``_reading`` where the profile
    gives a relation no inverse label)."""
    found = []
    for predicate, forward in path:
        answer_side = _reading(verbalizer, predicate, not forward)
        topic_side = _reading(verbalizer, predicate, forward)
        found.append(Reading(answer_side, topic_side))
    return found


def _reading(verbalizer: Verbalizer, predicate: NamedNode, forward: bool) -> str:
    """A relation's reading one way; where the profile gives none, one made from the
    other: "part of" reads "has part", "nationality" reads "nationality of", and a
    label that ends in another preposition ("directed by") keeps its reversed mark."""
    text = verbalizer.relation(predicate, forward=forward)
    if not text.endswith(REVERSED):
        return text
    base = text.removesuffix(REVERSED)
    if base.endswith(" of"):
        return "has " + base.removesuffix(" of")
    if base.rsplit(" ", 1)[-1] in PREPOSITIONS:
        return text
    return f"{base} of"


def wordings(steps: Sequence[Reading], *, dated: bool = False) -> list[str]:
    """Masked questions for the path whose steps read ``steps`` (topic first); with
    ``dated`` (its ends are dates or years), "when" questions too. No duplicates."""
    if not steps:
        return []
    back = [s.answer_side for s in reversed(steps)]  # from the answer to the topic
    chain = " the ones ".join(back)
    bare = " ".join(back)
    last = back[0]
    rest = " the ones ".join(back[1:])
    after = f" the ones {rest}" if rest else ""
    found = [
        f"what {chain} {MASK}?",
        f"who {chain} {MASK}?",
        f"which {chain} {MASK}?",
        f"what {bare} {MASK}?",
        f"what is {chain} {MASK}?",
        f"which ones {chain} {MASK}?",
    ]
    noun = AUXILIARY.sub("", last)
    if noun.endswith(" of"):  # "genre of": a noun, asked for as one
        found += [
            f"what is the {noun}{after} {MASK}?",
            f"the {noun}{after} {MASK}?",
        ]
    if dated:
        found += [f"when {chain} {MASK}?", f"what year {chain} {MASK}?"]
    found += _same(steps)
    # from the topic out: "NE directed by what?", "what has NE starred in?"
    out = [s.topic_side for s in steps]
    if len(out) == 1:
        found += [f"{MASK} {out[0]} what?", f"what has {MASK} {out[0]}?"]
    else:
        found.append(f"{MASK} {' something that '.join(out)} what?")
    return list(dict.fromkeys(" ".join(w.split()) for w in found))


def _same(steps: Sequence[Reading]) -> list[str]:
    """A step out and straight back over the same relation reaches the topic's peers:
    "which ones share the directed by of NE" (films with the same director)."""
    if len(steps) != 2 or steps[0].topic_side != steps[1].answer_side:
        return []
    shared = AUXILIARY.sub("", steps[0].topic_side)
    return [
        f"which ones have the same {shared} as {MASK}?",
        f"what shares the {shared} of {MASK}?",
        f"who has the same {shared} as {MASK}?",
    ]
