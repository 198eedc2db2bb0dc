"""The Sources section of a chat reply, without the service."""

from __future__ import annotations

import dataclasses

from middleware.kg.backends.local import LocalStore
from middleware.llm.scripted import ScriptedLLM
from middleware.methods.answer import NOT_FOUND, Answer, Evidence, EvidencePath
from middleware.methods.rok import RoK
from middleware.server.answering.chat_text import evidence_lines, reply_text, sources_text
from middleware.text.follow_ups import answer_part
from middleware.text.verbalize import Verbalizer

SHOP = "http://example.org/shop/"
WIDGETS = """\
@prefix : <http://example.org/shop/> .
@prefix rdfs: <http://www.w3.org/2000/01/rdf-schema#> .
:WidgetPro :madeBy :AcmeCorp ; rdfs:label "Widget Pro" .
:AcmeCorp rdfs:label "Acme Corp" .
"""


def test_a_reversed_hop_without_an_inverse_label_is_listed_as_the_stored_triple() -> None:
    store = LocalStore(name="shop")
    store.load_text(WIDGETS, name="shop.ttl")
    path = store.paths(SHOP + "AcmeCorp", SHOP + "WidgetPro", max_hops=1)[0]
    evidence = Evidence(paths=[EvidencePath(path, Verbalizer(store).path(path))])
    answer = Answer("Who makes Widget Pro?", "Acme Corp", "rok", evidence=evidence)
    assert evidence_lines(answer, [store]) == ["Widget Pro —made by→ Acme Corp"]
    text = sources_text(answer, [store], answer_id=None, limit=5)
    assert text.endswith("\n\nSources:\n[1] Widget Pro —made by→ Acme Corp")
    assert evidence.paths[0].text == "Widget Pro | made by | Acme Corp"


def _films() -> LocalStore:
    store = LocalStore(profile="metaqa", name="films")
    store.load_text(
        "Heat|directed_by|Michael Mann\nBlack Rain|directed_by|Ridley Scott\n", name="kb.txt"
    )
    return store


def _withheld(store: LocalStore) -> Answer:
    """RoK's answer "Ridley Scott" to "Who directed Heat?": mentioned in the evidence,
    joined to nothing the question names, so withheld."""
    llm = ScriptedLLM(
        [
            ("Key entities:$", "Heat; Ridley Scott"),
            ("Useful facts:$", "1, 2"),
            ("Answer:$", "Ridley Scott"),
        ],
        default="Heat was directed by Ridley Scott.",
    )
    answer = RoK(llm, store).run("Who directed Heat?")
    assert not answer.found and answer.guess is not None
    return answer


def test_not_found_says_the_graph_does_not_hold_the_answer_and_lists_the_evidence() -> None:
    store = _films()
    answer = _withheld(store)
    text = sources_text(answer, [store], answer_id="chatcmpl-x", limit=5)
    head, _, sources = text.partition("\n\nSources:\n")
    assert head == "The graph does not hold the answer."
    assert "Black Rain —directed by→ Ridley Scott" in sources
    assert text.endswith("(full answer: GET /v1/answers/chatcmpl-x)")
    assert "Not found in the graph" not in text and "(no answer)" not in text
    assert answer_part(text) == "", "a follow-up carries nothing from a reply without answer"


def test_the_guess_only_when_asked_and_labelled_as_unsupported() -> None:
    store = _films()
    answer = _withheld(store)
    text = sources_text(answer, [store], answer_id=None, limit=5, show_guess=True)
    assert text.startswith(
        "The graph does not hold the answer.\n"
        "Best guess (not supported by the graph): Ridley Scott, confidence 0.2\n\nSources:\n[1] "
    )
    assert answer_part(text) == ""
    assert reply_text(answer) == "The graph does not hold the answer."
    assert reply_text(answer, show_guess=True) == (
        "The graph does not hold the answer.\n"
        "Best guess (not supported by the graph): Ridley Scott, confidence 0.2"
    )


def test_nothing_found_at_all_is_said_once() -> None:
    answer = Answer("Who rules Atlantis?", NOT_FOUND, "rok", found=False)
    text = sources_text(answer, [], answer_id=None, limit=5, show_guess=True)
    assert text == "The graph does not hold the answer."


def test_the_support_comes_first_in_the_sources() -> None:
    store = _films()
    llm = ScriptedLLM(
        [
            ("Key entities:$", "Heat; Ridley Scott"),
            ("Useful facts:$", "1, 2"),
            ("Answer:$", "Michael Mann"),
        ],
        default="Heat was directed by Michael Mann.",
    )
    answer = RoK(llm, store).run("Who directed Heat?")
    assert answer.found and answer.support
    text = sources_text(answer, [store], answer_id=None, limit=5)
    lines = text.split("\n")
    assert lines[:3] == ["Michael Mann", "", "Sources:"]
    assert lines[3] == "[1] Heat —directed by→ Michael Mann"
    assert sum("Heat —directed by→ Michael Mann" in line for line in lines) == 1, "listed once"


def test_a_given_answer_the_graph_does_not_support_is_marked() -> None:
    store = _films()
    answer = _withheld(store)
    given = dataclasses.replace(answer, answer="Ridley Scott", found=True, guess=None)
    text = sources_text(given, [store], answer_id=None, limit=5)
    assert text.startswith("Ridley Scott\n\n(not grounded in a graph)\n\nSources:\n[1] ")
