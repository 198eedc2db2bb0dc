"""Follow-up questions resolved with the entities of earlier turns."""

from __future__ import annotations

import pytest

from middleware.kg.backends.local import LocalStore
from middleware.text.follow_ups import Turn, answer_part, resolve_follow_up
from middleware.text.linking import EntityLinker


@pytest.fixture(scope="module")
def linker() -> EntityLinker:
    kg = LocalStore(profile="metaqa", name="films")
    kg.load_text(
        "Titanic|directed_by|James Cameron\nTitanic|starred_actors|Kate Winslet\n"
        "Avatar|directed_by|James Cameron\nHeat|directed_by|Michael Mann\n",
        name="kb.txt",
    )
    return EntityLinker(kg)


STARRED = Turn(
    "Which film did Kate Winslet star in?",
    "Titanic\n\nSources:\n[1] Titanic —starred actors→ Kate Winslet",
)


def test_a_pronoun_takes_the_last_answers_entity(linker: EntityLinker) -> None:
    resolved = resolve_follow_up("and who directed it?", [STARRED], linker)
    assert resolved.question == "Who directed Titanic?"
    assert [e.label for e in resolved.carried] == ["Titanic"]
    assert resolved.asked == "and who directed it?" and resolved.changed


def test_possessives_and_capitals(linker: EntityLinker) -> None:
    earlier = [Turn("Who directed Titanic?", "James Cameron")]
    assert resolve_follow_up("What else did he direct?", earlier, linker).question == (
        "What else did James Cameron direct?"
    )
    assert resolve_follow_up("his best film?", earlier, linker).question == (
        "James Cameron's best film?"
    )


def test_no_entity_of_its_own_gets_the_entities_appended(linker: EntityLinker) -> None:
    resolved = resolve_follow_up("and the director?", [STARRED], linker)
    assert resolved.question == "The director? (context: Titanic; Kate Winslet)"
    assert resolve_follow_up("and?", [STARRED], linker).question.startswith("And? (context: ")


def test_the_questions_topic_when_the_answer_names_nothing(linker: EntityLinker) -> None:
    earlier = [Turn("Tell me about Heat", "A 1995 crime film.")]
    assert resolve_follow_up("who directed it?", earlier, linker).question == "Who directed Heat?"


def test_earlier_follow_ups_resolve_in_turn(linker: EntityLinker) -> None:
    """Turn 3's "it" goes back past a turn whose question and answer name nothing new."""
    earlier = [Turn("Tell me about Heat", "A crime film."), Turn("is it good?", "Yes.")]
    assert resolve_follow_up("who directed it?", earlier, linker).question == "Who directed Heat?"


def test_a_question_with_its_own_entity_and_no_pronoun_is_left_alone(linker: EntityLinker) -> None:
    resolved = resolve_follow_up("who directed Avatar?", [STARRED], linker)
    assert resolved.question == "who directed Avatar?" and not resolved.changed


def test_nothing_to_carry(linker: EntityLinker) -> None:
    assert not resolve_follow_up("who directed it?", [], linker).changed
    earlier = [Turn("hello", "Hi! Ask me about films.")]
    assert resolve_follow_up("who directed it?", earlier, linker).question == "who directed it?"


def test_pronouns_inside_words_are_not_pronouns(linker: EntityLinker) -> None:
    assert resolve_follow_up("Items?", [STARRED], linker).question.startswith("Items? (context: ")
    assert resolve_follow_up("Shethe?", [STARRED], linker).question.startswith("Shethe? (context:")


def test_answer_part_drops_the_sources_section() -> None:
    assert answer_part(STARRED.answer or "") == "Titanic"
    assert answer_part("James Cameron\n\nEvidence:\n[1] x") == "James Cameron"
    assert answer_part("Paris\n(full answer: GET /v1/answers/x)") == "Paris"


def test_a_reply_without_answer_carries_the_questions_entities_not_the_guess(
    linker: EntityLinker,
) -> None:
    earlier = [
        Turn(
            "Who directed Heat?",
            "The graph does not hold the answer.\n"
            "Best guess (not supported by the graph): James Cameron, confidence 0.2\n\n"
            "Sources:\n[1] Titanic —directed by→ James Cameron",
        )
    ]
    resolved = resolve_follow_up("and who starred in it?", earlier, linker)
    assert resolved.question == "Who starred in Heat?"
    assert [e.label for e in resolved.carried] == ["Heat"]
