"""Folding text for matching: case, diacritics and punctuation do not count.

:func:`fold` is the one definition; :func:`folded_pattern` writes a regular expression
that matches, in a graph's labels, exactly the texts that fold to one of the given
keys, so an endpoint can find folded matches without sending its labels anywhere.

>>> fold("  Amélie  Poulain's "), fold("E.T. the Extra-Terrestrial")
('amelie poulains', 'et the extraterrestrial')
>>> from middleware.kg.backends.local import LocalStore
>>> kg = LocalStore()
>>> _ = kg.load_text('<urn:a> <http://www.w3.org/2000/01/rdf-schema#label> "Amélie" .\\n', name="a.nt")
>>> [row.text for row in kg.match_labels(folded_pattern(["amelie"]))]
['Amélie']
"""

from __future__ import annotations

import functools
import re
import unicodedata
from collections.abc import Sequence

_PUNCT = re.compile(r"[^\w\s]")
_SPACE = re.compile(r"\s+")
# What folding drops between characters, as explicit ranges: ASCII punctuation and
# symbols, Latin-1 punctuation, combining marks, general punctuation, currency signs,
# letterlike symbols. (Unicode classes such as \p{P} would be exact, but make engines
# compile huge automata: a scan of 15,000 labels took minutes instead of milliseconds.)
_DROPPED = (
    "!-/:-@\\[-`{-~"  # ASCII punctuation and symbols
    "\u00a1-\u00bf\u00d7\u00f7"  # Latin-1 punctuation, ×, ÷
    "\u0300-\u036f"  # combining diacritical marks
    "\u2010-\u2027\u2030-\u205e"  # dashes, quotes, bullets, primes
    "\u20a0-\u20cf\u2100-\u214f"  # currency, letterlike symbols (™, ℃)
)
_SPACES = "\\s\u00a0\u2000-\u200a\u202f\u205f\u3000"  # XPath's \\s is ASCII only
_EDGE = f"[{_DROPPED}{_SPACES}]*"
_GAP = f"[{_DROPPED}]*"
_WORD_BREAK = f"{_EDGE}[{_SPACES}]{_EDGE}"
# Latin letters with diacritics, the blocks where folding maps them to a-z.
_LATIN_BLOCKS = ((0x00C0, 0x024F), (0x1E00, 0x1EFF))


def fold(text: str) -> str:
    """Case-, diacritics- and punctuation-insensitive form of a label."""
    if text.isascii():  # nothing to decompose (twice as fast: most labels are ASCII)
        stripped = text
    else:
        decomposed = unicodedata.normalize("NFKD", text)
        stripped = "".join(ch for ch in decomposed if not unicodedata.combining(ch))
    return _SPACE.sub(" ", _PUNCT.sub("", stripped.casefold())).strip()


def normalize_space(text: str) -> str:
    """``text`` with runs of whitespace as one space, trimmed (what 'exact' compares)."""
    return _SPACE.sub(" ", text).strip()


@functools.cache
def _variants() -> dict[str, str]:
    """For each of a-z, the Latin letters with diacritics that fold to it."""
    found: dict[str, list[str]] = {}
    for low, high in _LATIN_BLOCKS:
        for code in range(low, high + 1):
            char = chr(code)
            folded = fold(char)
            if len(folded) == 1 and "a" <= folded <= "z":
                found.setdefault(folded, []).append(char)
    return {letter: _ranges(chars) for letter, chars in found.items()}


def _ranges(chars: list[str]) -> str:
    """Characters for a class, runs of three or more consecutive ones as ``a-c``."""
    codes = sorted({ord(c) for c in chars})
    parts, start = [], 0
    for i in range(1, len(codes) + 1):
        if i == len(codes) or codes[i] != codes[i - 1] + 1:
            run = codes[start:i]
            parts.append(
                f"{chr(run[0])}-{chr(run[-1])}" if len(run) >= 3 else "".join(map(chr, run))
            )
            start = i
    return "".join(parts)


def _char(char: str) -> str:
    if "a" <= char <= "z":
        return f"[{char}{char.upper()}{_variants().get(char, '')}]"
    if char.isalnum() or char == "_":
        return char
    return "\\" + char  # never produced by fold(); escaped to stay literal


def _key(key: str) -> str:
    words = [_GAP.join(_char(c) for c in word) for word in key.split(" ") if word]
    return _WORD_BREAK.join(words)


def folded_pattern(keys: Sequence[str]) -> str:
    """An anchored XPath regular expression (use it case-insensitively) matching the
    texts whose fold is one of ``keys`` (themselves folded). Letters that fold to two
    letters (ß, æ, ligatures) are not covered."""
    body = "|".join(_key(k) for k in dict.fromkeys(keys) if k)
    return f"^{_EDGE}({body}){_EDGE}$"
