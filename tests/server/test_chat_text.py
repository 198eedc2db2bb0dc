"""The Sources section of a chat reply, without the service."""

from __future__ import annotations

from middleware.kg.backends.local import LocalStore
from middleware.methods.answer import Answer, Evidence, EvidencePath
from middleware.server.answering.chat_text import evidence_lines, sources_text
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
    assert text == "Acme Corp\n\nSources:\n[1] Widget Pro —made by→ Acme Corp"
    assert evidence.paths[0].text == "Widget Pro | made by | Acme Corp"
