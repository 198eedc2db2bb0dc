"""Name variants: what a question may call an entity besides its label."""

from __future__ import annotations

from pathlib import Path

import pytest

from middleware.kg.backends.local import LocalStore
from middleware.text.linking import EntityLinker, mention_key
from middleware.text.name_variants import NameVariants, acronyms, mention_stems, stems

LABELS = [
    "William Shakespeare",
    "Adolf Hitler",
    "United Kingdom",
    "UK £",
    "United States of America",
    "Contiguous United States",
    "World War II",
    "General Motors",
    "North Atlantic Treaty Organization (NATO)",
    "Martin Luther King, Jr.",
    "Robin Hood: Prince of Thieves",
    "L. Frank Baum",
    "J. R. R. Tolkien",
    "C. S. Lewis",
    "James K. Polk",
    "Yale University",
    "Harvard University",
    "Stanford University",
    "Capital punishment",
    "War film",
    "Jamaica",
    "Ukraine",
    "Brazil",
    "Japan",
    "Turkey",
    "Serbia",
    "Italy",
    "South Australia",
    "North Korea",
    "Little Women",
    "In America",
    "Pablo Picasso-GB",
    "Year of the Dog",
    "Big Dog",
    "Hot Dog",
    "film",
]


@pytest.fixture(scope="module")
def table() -> NameVariants:
    return NameVariants(LABELS, head_min=3)


@pytest.mark.parametrize(
    ("key", "label"),
    [
        ("shakespeare", "William Shakespeare"),  # a rare last word of a title-case name
        ("hitler", "Adolf Hitler"),
        ("uk", "United Kingdom"),  # acronym
        ("usa", "United States of America"),
        ("us", "United States of America"),  # acronym of the words before "of"
        ("united states", "United States of America"),
        ("wwii", "World War II"),  # numerals stay whole
        ("gm", "General Motors"),
        ("nato", "North Atlantic Treaty Organization (NATO)"),  # brackets
        ("north atlantic treaty organization", "North Atlantic Treaty Organization (NATO)"),
        ("martin luther king", "Martin Luther King, Jr."),  # before a comma
        ("prince of thieves", "Robin Hood: Prince of Thieves"),  # after a colon
        ("frank baum", "L. Frank Baum"),  # the last two words
        ("jrr tolkien", "J. R. R. Tolkien"),  # initials run together
        ("cs lewis", "C. S. Lewis"),
        ("james polk", "James K. Polk"),  # initials left out
        ("yale", "Yale University"),
        ("picasso", "Pablo Picasso-GB"),  # a region code dropped, then the surname
        ("pablo picasso", "Pablo Picasso-GB"),  # a category word dropped
        ("jamaican", "Jamaica"),  # demonyms
        ("ukrainians", "Ukraine"),
        ("brazilian", "Brazil"),
        ("japanese", "Japan"),
        ("turkish", "Turkey"),
        ("serbs", "Serbia"),
        ("italians", "Italy"),
        ("south australian", "South Australia"),  # a demonym of a place's last word
        ("north koreans", "North Korea"),
    ],
)
def test_a_variant_stands_for_its_label(table: NameVariants, key: str, label: str) -> None:
    assert label in table.labels(key)


@pytest.mark.parametrize(
    "key",
    [
        "university",  # a category word is no one's name
        "punishment",  # not a name: "Capital punishment" is not written in title case
        "capital",
        "war",
        "in",  # function words stand for nothing, acronym or not
        "the",
        "william shakespeare",  # a label's own form is a match, not a variant
        "year of the",  # no name ends in a linking word
        "films",  # a plural is not a demonym
        "little womens",
        "in american",  # a title that starts with a linking word is no place
        "north korea",  # the label itself
    ],
)
def test_words_that_stand_for_no_label(table: NameVariants, key: str) -> None:
    assert table.labels(key) == []


def test_common_last_words_are_category_words_not_surnames(table: NameVariants) -> None:
    assert "university" in table.heads and "shakespeare" not in table.heads


def test_the_pieces() -> None:
    assert stems("ukraine") == {"ukraine", "ukrain"} and "serb" in stems("serbia")
    assert {("brazil", "ians"), ("brazili", "ans")} <= mention_stems("brazilians")
    assert acronyms(["united", "states", "of", "america"]) == ["usa", "us"]
    assert acronyms(["world", "war", "ii"]) == ["wwii"]
    assert mention_key("Aristotle's") == "Aristotle" and mention_key("Jones’") == "Jones"


@pytest.fixture(scope="module")
def countries(tmp_path_factory: pytest.TempPathFactory) -> LocalStore:
    path: Path = tmp_path_factory.mktemp("kb") / "kb.txt"
    path.write_text(
        "United Kingdom|official_language|English Language\n"
        "UK £|currency_of|United Kingdom\n"
        "Jamaica|official_language|English Language\n"
        "William Shakespeare|nationality|United Kingdom\n"
        "Schindler's List|directed_by|Steven Spielberg\n",
        encoding="utf-8",
    )
    store = LocalStore(profile="metaqa")
    store.load([path])
    return store


def test_questions_link_through_variants(countries: LocalStore) -> None:
    linker = EntityLinker(countries)

    def labels(question: str) -> list[tuple[str, list[str]]]:
        found = linker.span_entities(question, per_span=3)
        return [(span, [e.label or "" for e in entities]) for span, entities in found]

    assert labels("what do jamaicans speak?") == [("jamaicans", ["Jamaica"])]
    # the folded label first, the acronym after it: the planner lets paths decide
    assert labels("what do people speak in the uk?") == [("uk", ["UK £", "United Kingdom"])]
    assert labels("who was shakespeare's wife?") == [("shakespeare's", ["William Shakespeare"])]
    # a label that ends in a possessive keeps it
    assert labels("who directed schindler's list?") == [("schindler's list", ["Schindler's List"])]
    matches = [e.match for _, es in linker.span_entities("what do jamaicans speak?") for e in es]
    assert matches == ["variant"]


def test_variants_can_be_turned_off(countries: LocalStore) -> None:
    linker = EntityLinker(countries, variants=False)
    assert linker.spans("what do jamaicans speak?") == []


def test_a_possessive_is_dropped_before_a_variant_is_trusted(tmp_path: Path) -> None:
    """ "jfk's" folds to "jfks", the acronym of "John F. Kennedy School (of ...)"; the
    name without the possessive is the better reading."""
    path = tmp_path / "kb.txt"
    path.write_text(
        "John F. Kennedy|sibling|Robert F. Kennedy\n"
        "John F. Kennedy School of Government|part_of|Harvard\n",
        encoding="utf-8",
    )
    store = LocalStore(profile="metaqa")
    store.load([path])
    found = EntityLinker(store).span_entities("who were jfk's brothers?", per_span=3)
    assert [(span, [e.label for e in es]) for span, es in found] == [("jfk's", ["John F. Kennedy"])]
