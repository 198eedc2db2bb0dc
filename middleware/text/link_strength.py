"""Whether a question's entity is linked only weakly: fuzzily, or through part of a name.

A link is weak when the linker matched the words only fuzzily (a typo-tolerant
match), or when the words it matched are a part of a longer name the question gives:
inside a bracketed mention ("[Zorblax Nine]"), or inside a run of capitalised words
("the film Zorblax Nine"). A question word or article that opens the run ("Who",
"The") is not part of the name. A question written in lower case gives no capitals
to go by, so only brackets and fuzzy matches count there.

>>> weak_link("Who directed the film Zorblax Nine?", "Nine", "exact")
"'Nine' is only part of the name 'Zorblax Nine'"
>>> weak_link("Which James Cameron film starred Kate Winslet?", "Kate Winslet", "exact") is None
True
>>> weak_link("who directed [Zorblax Nine]", "Nine", "folded")
"'Nine' is only part of the name 'Zorblax Nine'"
>>> weak_link("who acted in the films of The Woo of Raidrex", "Woo", "exact")
"'Woo' is only part of the name 'Woo of Raidrex'"
>>> weak_link("what is the capital of Australia", "Australia", "exact") is None
True
>>> weak_link("Which film did Kate Winslet and Leonardo DiCaprio star in?", "Kate Winslet", "exact") is None
True
>>> weak_link("who directed heat", "heet", "fuzzy")
"'heet' matched a label only approximately"
"""

from __future__ import annotations

import re

from middleware.text.folding import fold

FUZZY_MATCHES = frozenset({"fuzzy"})
# Words that open a question or a name without being part of the name (dropped at a
# run's start: "Who", "Director of Heat", "Films Starring Al Pacino").
_OPENERS = frozenset(
    [
        "who",
        "whom",
        "whose",
        "what",
        "which",
        "when",
        "where",
        "why",
        "how",
        "did",
        "does",
        "do",
        "is",
        "are",
        "was",
        "were",
        "can",
        "could",
        "has",
        "have",
        "had",
        "in",
        "on",
        "at",
        "of",
        "for",
        "from",
        "by",
        "the",
        "a",
        "an",
        "name",
        "list",
        "tell",
        "give",
        "show",
        "besides",
        "after",
        "before",
        "since",
        "during",
        "with",
        "without",
        "about",
        "director",
        "directors",
        "cast",
        "genre",
        "genres",
        "film",
        "films",
        "movie",
        "movies",
        "starring",
        "directed",
        "written",
        "language",
        "languages",
        "year",
    ]
)
_JOINERS = frozenset(["of", "the", "de", "la", "le", "von", "van", "der", "del", "du"])
_BRACKETS = re.compile(r"\[([^\]]+)\]")
# words (with inner dots, apostrophes, hyphens: "E.T.", "O'Brien", "Spider-Man"), and
# the punctuation that ends a run of them
_TOKEN = re.compile(r"\w+(?:['’.&-]\w+)*\.?|[,;:()!?\[\]\"]|[.](?!\w)")
_POSSESSIVE = re.compile(r"['’]s?$")


def _capital_runs(question: str) -> list[str]:
    """The runs of capitalised words, openers at a run's start dropped; a lower-case
    joining word ("of", "the") between two capitalised words stays inside ("The Woo of
    Raidrex"). Punctuation, a numeral and a possessive ("Mann's") end a run, so commas
    in a list, "(1995)" and "Michael Mann's Heat" keep names apart. A colon followed by
    a capitalised word stays inside ("Star Wars: Episode IV")."""
    tokens = _TOKEN.findall(question)
    runs: list[list[str]] = []
    current: list[str] = []

    def close() -> None:
        nonlocal current
        if current:
            runs.append(current)
        current = []

    for index, token in enumerate(tokens):
        following = tokens[index + 1] if index + 1 < len(tokens) else ""
        word = token.rstrip(".") if len(token) > 2 and not token[:-1].count(".") else token
        if token == ":" and current and following[:1].isupper():
            current.append(":")
        elif word[:1].isupper():
            if not current and word.lower() in _OPENERS:
                continue
            current.append(_POSSESSIVE.sub("", word))
            if _POSSESSIVE.search(word) or (token.endswith(".") and word != token):
                close()  # "Mann's Heat": the owner is a name of its own
        elif current and word in _JOINERS and following[:1].isupper():
            current.append(word)
        else:
            close()
    close()
    return [" ".join(run).replace(" :", ":") for run in runs]


def _names(question: str) -> list[str]:
    bracketed = [m.strip() for m in _BRACKETS.findall(question) if m.strip()]
    return bracketed + _capital_runs(question)


def _inside(span: str, name: str) -> bool:
    """``span`` is a proper part of ``name`` (as whole words, folded)."""
    inner, outer = fold(span), fold(name)
    if not inner or inner == outer:
        return False
    return re.search(rf"(?<!\w){re.escape(inner)}(?!\w)", outer) is not None


def weak_link(question: str, span: str, match: str) -> str | None:
    """Why the link of ``span`` (matched as ``match``) is weak, or None when it is not."""
    if match in FUZZY_MATCHES:
        return f"{span!r} matched a label only approximately"
    for name in _names(question):
        if fold(name) == fold(span):
            return None  # the span is a whole name the question gives
    for name in _names(question):
        if _inside(span, name):
            return f"{span!r} is only part of the name {name!r}"
    return None
