"""Opt-in checks against public endpoints: pytest --live (network required).

Without ``--live`` they are skipped; with it on a machine that cannot reach the
endpoint they are skipped too, saying so, rather than failing.
"""

from __future__ import annotations

import socket

import pytest
from pyoxigraph import NamedNode

from middleware.kg.backends.endpoint import SparqlEndpoint
from middleware.kg.statements import statements
from middleware.text.linking import EntityLinker

pytestmark = pytest.mark.live
WIKIDATA = "https://query.wikidata.org/sparql"
WD = "http://www.wikidata.org/entity/"


@pytest.fixture(scope="module")
def wikidata() -> SparqlEndpoint:
    """The Wikidata Query Service with the wikidata profile; skipped when offline."""
    try:
        socket.create_connection(("query.wikidata.org", 443), timeout=5).close()
    except OSError as err:
        pytest.skip(f"query.wikidata.org is not reachable from here: {err}")
    return SparqlEndpoint(WIKIDATA, profile="wikidata", timeout=30)


def test_wikidata_search_neighbors_and_labels(wikidata: SparqlEndpoint) -> None:
    best = EntityLinker(wikidata).best("Douglas Adams")
    assert best is not None and best.iri.value == WD + "Q42"
    triples = wikidata.neighbors(best.iri, direction="out", limit=50)
    assert triples and all(
        t.predicate.value.startswith("http://www.wikidata.org/prop/direct/") for t in triples
    )
    assert wikidata.labels([best.iri])[best.iri] == "Douglas Adams"
    assert wikidata.describe(best.iri).aliases  # skos:altLabel


def test_wdqs_live_statements_with_qualifiers(wikidata: SparqlEndpoint) -> None:
    # Barack Obama's positions held: the presidency with its start and end times
    held = statements(wikidata, NamedNode(WD + "Q76"), "P39")
    potus = [s for s in held if s.value == NamedNode(WD + "Q11696")]
    assert potus and potus[0].property_label == "position held"
    assert {"start time", "end time"} <= {q.label for q in potus[0].qualifiers}
    assert "(start time 2009-01-20" in potus[0].text("Barack Obama")
