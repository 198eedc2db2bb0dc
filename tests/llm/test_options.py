"""Reading a choice out of a reply: lenient in form, strict in content."""

from __future__ import annotations

import pytest

from middleware.llm.options import match_option, with_options

OPTIONS = ["Paris", "Paris, Texas", 'The "Big" Apple', "Zoë", "line\nbreak"]


@pytest.mark.parametrize(
    ("reply", "expected"),
    [
        ("Paris", 0),
        (" Paris. ", 0),
        ("paris", 0),
        ("Paris, Texas", 1),
        ('{"choice": "Paris, Texas"}', 1),
        ('The "Big" Apple', 2),
        ('the "big" apple', 2),
        ("ZOË", 3),
        ("line break", 4),
        ("line\nbreak", 4),
        ("Paris\nbecause it is the capital", 0),
        ("Texas", None),
        ("", None),
        ("Lyon", None),
        ('{"choice": "Lyon"}', None),
    ],
)
def test_match_option(reply: str, expected: int | None) -> None:
    assert match_option(reply, OPTIONS) == expected


def test_ambiguous_reply_matches_nothing() -> None:
    assert match_option("a", ["A", "a."]) is None
    assert match_option("x", ["X", "x"]) == 1  # exact beats folded


def test_options_are_added_to_the_last_user_message() -> None:
    messages = with_options([{"role": "user", "content": "Pick a city."}], ["Paris", "Lyon"])
    assert len(messages) == 1
    text = messages[0]["content"]
    assert text.startswith("Pick a city.") and "Paris\nLyon" in text
