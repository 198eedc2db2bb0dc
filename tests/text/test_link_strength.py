"""Weak links: a span inside a longer name, or a fuzzy match; common phrasings are not."""

from __future__ import annotations

import pytest

from middleware.text.link_strength import weak_link

STRONG = [
    ("Director of Heat?", "Heat"),
    ("Cast of Heat?", "Heat"),
    ("Genre of Heat", "Heat"),
    ("What genre is Michael Mann's Heat?", "Heat"),
    ("What genre is Michael Mann's Heat?", "Michael Mann"),
    ("Who starred in Heat (1995)?", "Heat"),
    ("Who directed Heat 1995?", "Heat"),
    ("Besides Heat, what did Michael Mann direct?", "Heat"),
    ("Has Al Pacino starred in any film?", "Al Pacino"),
    ("Films Starring Al Pacino", "Al Pacino"),
    ("Movie Heat: who directed it?", "Heat"),
    ("Heat. Who directed it?", "Heat"),
    ("Al Pacino, Robert De Niro: which films did they share?", "Robert De Niro"),
    ("Who directed Heat, Hannibal and Black Rain?", "Heat"),
    ("Which films did Al Pacino, Robert De Niro and Val Kilmer star in?", "Al Pacino"),
    ("Which film did Kate Winslet and Leonardo DiCaprio star in?", "Kate Winslet"),
    ("who directed [Heat]", "Heat"),
    ("Who wrote The Lord of the Rings?", "The Lord of the Rings"),
    ("Who directed Star Wars: Episode IV?", "Star Wars: Episode IV"),
]

WEAK = [
    ("Who directed the film Zorblax Nine?", "Nine"),
    ("who directed [Zorblax Nine]", "Nine"),
    ("who acted in the films of The Woo of Raidrex", "Woo"),
    ("Who directed Heat Wave?", "Heat"),
]


@pytest.mark.parametrize(("question", "span"), STRONG)
def test_a_whole_name_is_a_strong_link(question: str, span: str) -> None:
    assert weak_link(question, span, "exact") is None


@pytest.mark.parametrize(("question", "span"), WEAK)
def test_part_of_a_longer_name_is_weak(question: str, span: str) -> None:
    assert weak_link(question, span, "exact") is not None


def test_a_fuzzy_match_is_weak() -> None:
    assert weak_link("who directed heet", "heet", "fuzzy") is not None
