"""Which graph entities an answer text names.

Entities the evidence holds are looked for in the answer first (their labels as
whole words, case- and accent-insensitive, longest first); then each piece of a list
answer ("A, B and C") is linked to the graph by exact or folded label. Entities the
question itself names are left out unless nothing else is found.

>>> from pyoxigraph import NamedNode
>>> heat = NamedNode("https://kgmw.dev/metaqa/entity/Heat")
>>> mann = NamedNode("https://kgmw.dev/metaqa/entity/Michael_Mann")
>>> found = ground_answer("It was Michael Mann.", "Who directed Heat?", {heat: ("Heat", "s"), mann: ("Michael Mann", "s")})
>>> [e.label for e in found]
['Michael Mann']
"""

from __future__ import annotations

import re
from collections.abc import Mapping

from pyoxigraph import NamedNode

from middleware.methods.answer import AnswerEntity
from middleware.text.folding import fold
from middleware.text.linking import EntityLinker

_PIECES = re.compile(r",|;|\band\b|\bor\b|/|\n", re.IGNORECASE)
_EXACT_MATCHES = ("exact", "alias", "folded", "folded-alias")


def _contains(haystack: str, needle: str) -> bool:
    return bool(needle) and re.search(rf"(?<!\w){re.escape(needle)}(?!\w)", haystack) is not None


def ground_answer(
    answer: str,
    question: str,
    candidates: Mapping[NamedNode, tuple[str, str | None]],
    *,
    linker: EntityLinker | None = None,
    limit: int = 20,
) -> list[AnswerEntity]:
    """Entities named by ``answer``; ``candidates`` maps IRIs to (label, source)."""
    text = fold(answer)
    if not text:
        return []
    asked = fold(question)
    found: dict[str, AnswerEntity] = {}  # one entity per folded label
    # Longest labels first; of labels that fold alike, the one written as in the answer.
    order = sorted(candidates.items(), key=lambda kv: (-len(kv[1][0]), kv[1][0] not in answer))
    for iri, (label, source) in order:
        key = fold(label)
        if len(key) >= 2 and key not in found and _contains(text, key):
            found[key] = AnswerEntity(iri.value, label, source)
    if linker is not None:
        for piece in _PIECES.split(answer):
            piece = piece.strip(" .!?\"'")
            if not piece or len(piece) > 200 or fold(piece) in found:
                continue
            # with a label index, label matches only: a typo-tolerant or name-variant
            # match would be dropped below, and finding one reads every label; without
            # one, the graph's own search (one bounded query) may find a label match
            # its folded lookup missed
            scan = linker.index() is not None
            best = linker.link(piece, limit=1, typos=not scan, variants=not scan)
            if best and best[0].match in _EXACT_MATCHES:
                entity = best[0]
                found[fold(piece)] = AnswerEntity(entity.iri.value, entity.label, entity.source)
    named = list(found.values())
    new = [e for e in named if not _contains(asked, fold(e.label or ""))]
    return (new or named)[:limit]
