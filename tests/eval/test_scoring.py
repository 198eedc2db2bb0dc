"""Scoring an answer: unanswerable questions have no Hits@1, only abstention."""

from __future__ import annotations

from pyoxigraph import NamedNode

from middleware.errors import LLMError
from middleware.eval.items import EvalItem
from middleware.eval.scoring import Scorer, base_record, error_record
from middleware.kg.base import Triple
from middleware.methods.answer import NOT_FOUND, Answer, Guess, Support

ANSWERABLE = EvalItem("a", "who directed Heat", ("Michael Mann",))
MADE_UP = EvalItem("u", "who directed Zorblax Nine", meta={"kind": "made-up-entity"})


def test_an_unanswerable_question_scores_only_its_abstention() -> None:
    scorer = Scorer(None)
    withheld = scorer.score(MADE_UP, Answer(MADE_UP.question, NOT_FOUND, "io"))
    assert withheld["hit"] is None and withheld["abstained"] is True
    assert withheld["evidence_recall"] is None and "rouge_l" not in withheld
    guessed = scorer.score(MADE_UP, Answer(MADE_UP.question, "Michael Mann", "io"))
    assert guessed["hit"] is None and guessed["abstained"] is False
    record = base_record("unanswerable-metaqa", "dev", "io", MADE_UP)
    assert record["answerable"] is False and record["gold"] == []
    assert record["meta"] == {"kind": "made-up-entity"}


def test_an_answerable_question_scores_hits_and_abstention() -> None:
    scorer = Scorer(None)
    right = scorer.score(ANSWERABLE, Answer(ANSWERABLE.question, "Michael Mann", "io"))
    assert (right["hit"], right["abstained"]) == (True, False)
    withheld = scorer.score(ANSWERABLE, Answer(ANSWERABLE.question, NOT_FOUND, "io"))
    assert (withheld["hit"], withheld["abstained"]) == (False, True)
    assert base_record("d", "dev", "io", ANSWERABLE)["answerable"] is True


def test_a_failed_question_neither_hits_nor_abstains() -> None:
    failed = error_record(LLMError("down"))
    assert (failed["hit"], failed["abstained"]) == (False, False)
    assert error_record(LLMError("down"), answerable=False)["hit"] is None


def test_a_record_keeps_found_the_guess_and_how_much_supports_the_answer() -> None:
    """A withheld answer scores as a miss, its prediction the methods' not-found text;
    the record keeps what the method would have said."""
    scorer = Scorer(None)
    why = "no evidence joins an entity the question names to the answer"
    guess = Guess("Michael Mann", 0.2, [], why)
    answer = Answer(ANSWERABLE.question, NOT_FOUND, "rok", found=False, guess=guess)
    withheld = scorer.score(ANSWERABLE, answer)
    assert withheld["prediction"] == NOT_FOUND and withheld["hit"] is False
    assert (withheld["found"], withheld["guess"], withheld["support"]) == (
        False,
        "Michael Mann",
        0,
    )
    triple = Triple(NamedNode("http://x/Heat"), NamedNode("http://x/by"), NamedNode("http://x/M"))
    chain = Support("http://x/Heat", "http://x/M", (triple,), "Heat | by | M")
    given = Answer(ANSWERABLE.question, "Michael Mann", "rok", grounded=True, support=[chain])
    record = scorer.score(ANSWERABLE, given)
    assert (record["found"], record["guess"], record["support"], record["hit"]) == (
        True,
        None,
        1,
        True,
    )
