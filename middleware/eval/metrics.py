"""Answer metrics: Hits@1, evidence answer recall, choice accuracy, ROUGE-L.

All string comparisons go through :func:`normalize` (case, accents, punctuation and
the articles a/an/the do not count).

>>> normalize("The Shawshank  Redemption!")
'shawshank redemption'
>>> hits_at_1("Titanic, Avatar", ["avatar"]), hits_at_1("Titanic, Avatar", ["Titanic"])
(False, True)
>>> hits_at_1("It is Titanic (1997)", ["titanic"])
True
>>> round(rouge_l("the cat sat on the mat", ["a cat sat on a mat"]), 3)
1.0
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Iterable, Sequence

from middleware.llm.options import match_option

_ARTICLES = {"a", "an", "the"}
_ITEM_SPLIT = re.compile(r"[\n;,|]+")


def normalize(text: str) -> str:
    """Lower case, no accents, punctuation as spaces, no articles, single spaces.

    Unlike the linker's ``fold``, which deletes punctuation, this splits on it, so
    "George H.W. Bush" matches "George H. W. Bush".

    >>> normalize("George H.W. Bush") == normalize("George H. W. Bush")
    True
    """
    decomposed = unicodedata.normalize("NFKD", text)
    chars = []
    for char in decomposed:
        category = unicodedata.category(char)
        if category == "Mn":
            continue
        chars.append(" " if category[0] in "PS" else char)
    words = "".join(chars).casefold().split()
    return " ".join(w for w in words if w not in _ARTICLES)


def answer_items(text: str) -> list[str]:
    """The answers a reply lists, split on new lines, commas, semicolons and bars.

    >>> answer_items("Heat, Ronin; Collateral")
    ['Heat', 'Ronin', 'Collateral']
    """
    return [item.strip() for item in _ITEM_SPLIT.split(text) if item.strip()]


def _contains(haystack: str, needle: str) -> bool:
    """Whether ``needle``'s words appear in ``haystack`` as a whole-word run."""
    return bool(needle) and f" {needle} " in f" {haystack} "


def hits_at_1(prediction: str, gold: Iterable[str], *, top_names: Iterable[str] = ()) -> bool:
    """Whether the top answer matches a gold answer.

    The top answer is the whole reply, its first listed item, and ``top_names`` (the
    label and aliases of the first answer entity the method grounded). A gold answer
    matches when it equals one of these, or its words appear as a whole-word run in
    the first item (so "Titanic (1997)" matches "Titanic", but a reply listing many
    names earns nothing for the second one).
    """
    wanted = {normalize(g) for g in gold} - {""}
    if not wanted or not prediction.strip():
        return bool(wanted & {normalize(n) for n in top_names})
    items = answer_items(prediction)
    first = normalize(items[0]) if items else ""
    candidates = {normalize(prediction), first} | {normalize(n) for n in top_names}
    if wanted & candidates:
        return True
    return any(_contains(first, g) for g in wanted)


def evidence_recall(gold: Iterable[str], evidence_names: Iterable[str]) -> bool:
    """Whether a gold answer is among the evidence's entities (by name or IRI).

    >>> evidence_recall(["Kate Winslet"], ["Titanic", "kate winslet"])
    True
    """
    wanted = {normalize(g) for g in gold} - {""}
    return bool(wanted & {normalize(n) for n in evidence_names})


def choice_correct(prediction: str, answer_key: str, choices: Sequence[str]) -> bool:
    """Whether the reply names exactly the correct choice.

    >>> choice_correct("bank", "bank", ["bank", "mall"]), choice_correct("mall", "bank", ["bank", "mall"])
    (True, False)
    """
    picked = match_option(prediction, choices)
    return picked is not None and choices[picked] == answer_key


def _lcs(a: Sequence[str], b: Sequence[str]) -> int:
    previous = [0] * (len(b) + 1)
    for token in a:
        current = [0]
        for j, other in enumerate(b, start=1):
            current.append(previous[j - 1] + 1 if token == other else max(previous[j], current[-1]))
        previous = current
    return previous[-1]


def rouge_l(prediction: str, references: Iterable[str]) -> float:
    """ROUGE-L F1 (longest common word subsequence), best over the references.

    >>> rouge_l("", ["x"]), rouge_l("heat", ["heat"])
    (0.0, 1.0)
    """
    tokens = normalize(prediction).split()
    best = 0.0
    for reference in references:
        ref = normalize(reference).split()
        if not tokens or not ref:
            continue
        common = _lcs(tokens, ref)
        if common == 0:
            continue
        precision, recall = common / len(tokens), common / len(ref)
        best = max(best, 2 * precision * recall / (precision + recall))
    return best
