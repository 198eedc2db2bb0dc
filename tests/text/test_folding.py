"""The folded pattern matches, in the graph's own regex engine, what ``fold`` matches."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from middleware.kg.backends.local import LocalStore
from middleware.text.folding import fold, folded_pattern

LETTERS = "abcdeéèêëiïoöøuüçñAÉÖÜZ"
SEPARATORS = [" ", "  ", "-", ".", ", ", "'", " & ", "’"]
words = st.text(alphabet=LETTERS, min_size=1, max_size=6)
labels = st.lists(st.tuples(words, st.sampled_from(SEPARATORS)), min_size=1, max_size=4).map(
    lambda parts: "".join(w + s for w, s in parts).strip(" ,")
)


def store_with(texts: list[str]) -> LocalStore:
    kg = LocalStore(profile="generic")
    lines = [
        f'<urn:e:{i}> <http://www.w3.org/2000/01/rdf-schema#label> "{t}" .'
        for i, t in enumerate(texts)
    ]
    kg.load_text("\n".join(lines) + "\n", name="labels.nt")
    return kg


@settings(max_examples=60, deadline=None)
@given(st.lists(labels, min_size=1, max_size=12, unique=True), st.integers(0, 11))
def test_pattern_matches_exactly_the_labels_that_fold_alike(texts: list[str], pick: int) -> None:
    texts = [t for t in texts if fold(t)]
    if not texts:
        return
    key = fold(texts[pick % len(texts)])
    kg = store_with(texts)
    found = {row.text for row in kg.match_labels(folded_pattern([key]))}
    assert found == {t for t in texts if fold(t) == key}


@pytest.mark.parametrize(
    ("label", "mention"),
    [
        ("Amélie", "amelie"),
        ("E.T. the Extra-Terrestrial", "ET the extraterrestrial"),
        ("Gérard Depardieu", "GERARD DEPARDIEU"),
        ("Mikael Håfström", "mikael hafstrom"),
        ("Rock & Roll", "rock roll"),
    ],
)
def test_known_folds(label: str, mention: str) -> None:
    kg = store_with([label, "Something Else"])
    assert [row.text for row in kg.match_labels(folded_pattern([fold(mention)]))] == [label]


def test_several_keys_in_one_pattern() -> None:
    kg = store_with(["Heat", "Titanic", "Avatar", "Heater"])
    pattern = folded_pattern([fold("heat"), fold("AVATAR")])
    assert sorted(row.text for row in kg.match_labels(pattern)) == ["Avatar", "Heat"]
