"""Question-span linking over a store and over an endpoint serving the same triples.

Exact, alias and folded matches must agree (fuzzy ones may differ, and spans only use
the others; name variants need a label index, so the store's are off here); on the endpoint, a question costs at most ``max_queries`` queries, each
with a LIMIT, and the whole label set is never pulled.
"""

from __future__ import annotations

import pytest
from pyoxigraph import NamedNode

from middleware.kg.backends.endpoint import SparqlEndpoint
from middleware.kg.backends.local import LocalStore
from middleware.kg.sample import sample_store
from middleware.text.label_queries import LookupReport
from middleware.text.linking import EntityLinker

QUESTIONS = [
    "Which films did James Cameron direct?",
    "which films did james cameron direct?",  # folded: case
    "Who starred in Titanic with Kate Winslet?",
    "what movies did GERARD DEPARDIEU act in",  # folded: diacritics and case
    "Which films are directed by MIKAEL HAFSTROM?",
    "Who directed [Heat] and The Matrix?",
    "In which language is 1408?",
    "what films did Lana Wachowski and Andy Wachowski write together",
    "Tell me about Blade Runner, Alien and Gladiator",
    "nothing here links at all",
]


@pytest.fixture(scope="module")
def store() -> LocalStore:
    return sample_store()


@pytest.fixture(scope="module")
def endpoint(sample_server: str) -> SparqlEndpoint:
    return SparqlEndpoint(sample_server, profile="metaqa", name="sample", timeout=20)


def linked(linker: EntityLinker, question: str) -> list[tuple[str, str, str | None, str | None]]:
    return [(span, e.iri.value, e.label, e.match) for span, e in linker.spans(question)]


@pytest.mark.parametrize("question", QUESTIONS)
def test_store_and_endpoint_link_the_same_spans(
    store: LocalStore, endpoint: SparqlEndpoint, question: str
) -> None:
    assert linked(EntityLinker(endpoint), question) == linked(
        EntityLinker(store, variants=False), question
    )


def test_folded_spans_are_found(endpoint: SparqlEndpoint) -> None:
    found = {label: match for _, _, label, match in linked(EntityLinker(endpoint), QUESTIONS[3])}
    assert list(found.values()) == ["folded"] and "depardieu" in next(iter(found)).lower()


@pytest.mark.parametrize("question", QUESTIONS)
def test_endpoint_linking_is_bounded(endpoint: SparqlEndpoint, question: str) -> None:
    linker = EntityLinker(endpoint, max_queries=6)
    before = endpoint.thread_query_count
    report = LookupReport()
    linker.spans(question, report=report)
    assert endpoint.thread_query_count - before <= 6
    assert report.queries <= 4


def test_a_tight_budget_skips_spans_and_says_which(endpoint: SparqlEndpoint) -> None:
    long_question = " ".join(["Titanic Heat Alien Gladiator Avatar Aliens"] * 20)
    report = LookupReport()
    EntityLinker(endpoint, max_queries=3).spans(long_question, report=report)
    assert report.queries == 1 and report.skipped


def test_search_profiles_link_exact_spans_with_one_lookup(oxigraph_server: str) -> None:
    """Profiles whose endpoints are too big to scan (Wikidata) look labels up exactly."""
    from dataclasses import replace

    from middleware.kg.profiles import load_profile

    profile = replace(load_profile("generic"), label_lookup="search")
    endpoint = SparqlEndpoint(oxigraph_server, profile=profile, name="films")
    found = EntityLinker(endpoint).spans("Did Kate Winslet star in Titanic?")
    assert [(s, e.match) for s, e in found] == [("Kate Winslet", "exact"), ("Titanic", "exact")]


def _recorded_degrees(kg: LocalStore, monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """The IRIs whose degrees ``kg`` is asked for from now on."""
    looked_up: list[str] = []
    degrees = kg.degrees

    def recording(entities: list, *, at_most: int | None = None) -> dict:  # type: ignore[type-arg]
        looked_up.extend(e.value for e in entities)
        return degrees(entities, at_most=at_most)

    monkeypatch.setattr(kg, "degrees", recording)
    return looked_up


def test_only_the_spans_kept_are_ranked(monkeypatch: pytest.MonkeyPatch) -> None:
    """Ranking reads the degrees of tied hits; a span that a longer one covers is not
    kept, so its hits are not ranked (at scale a short word names hundreds of entities)."""
    kg = LocalStore(profile="metaqa")
    kg.load_text(
        "Athens|capital_of|Ancient Greece\nAthens|located_in|Greece\n"
        "Sparta|part_of|Ancient History\n",
        name="kb.txt",
    )
    looked_up = _recorded_degrees(kg, monkeypatch)
    found = EntityLinker(kg, variants=False).span_entities(
        "was athens in ancient greece", per_span=5
    )
    assert [(span, [e.label for e in es]) for span, es in found] == [
        ("athens", ["Athens"]),
        ("ancient greece", ["Ancient Greece"]),
    ]
    assert looked_up == []  # each kept span has one hit: no tie for a degree to break


def _copies_graph() -> LocalStore:
    """ "Gossip Girl" and its numbered copies ("Gossip Girl 7"), as the scale benchmark
    makes them: each number ends so many labels that it is dropped as a category word,
    so every copy has the name variant "gossip girl", which the exact label outranks."""
    label = "<http://www.w3.org/2000/01/rdf-schema#label>"
    words = ["Blake", "Lively", "Serena", "Upper", "East", "Side", "Dan", "Chuck"]
    names = ["Gossip Girl", "Manhattan"] + [f"{a} {b}" for a in words[:4] for b in words[4:]]
    names += [f"{a} {b}" for a in words[4:] for b in words[:3]]
    lines = ["<http://example.org/gg> " + label + ' "Gossip Girl" .']
    for copy in range(1, 31):
        for name in names:
            iri = f"<http://example.org/{name.replace(' ', '')}.c{copy}>"
            lines.append(f'{iri} {label} "{name} {copy}" .')
            lines += [
                f"{iri} <http://example.org/near> <http://example.org/x{k}> ."
                for k in range(copy % 5)
            ]
    kg = LocalStore(profile="generic")
    kg.load_text("\n".join(lines) + "\n", name="copies.nt")
    return kg


def test_a_tie_below_the_first_hits_reads_no_degrees(monkeypatch: pytest.MonkeyPatch) -> None:
    kg = _copies_graph()
    looked_up = _recorded_degrees(kg, monkeypatch)
    linker = EntityLinker(kg)
    assert [e.iri.value for e in linker.link("gossip girl", limit=1)] == ["http://example.org/gg"]
    assert looked_up == []
    assert len(linker.link("gossip girl", limit=3)) == 3
    assert len(looked_up) == 30  # the three come from one tie: all its degrees are read


def test_an_entity_its_score_alone_places_is_named_without_degrees(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Masking a known topic asks whether it is among a span's first five: "Gossip
    Girl" outranks its 30 numbered copies by score alone, so their tie is not ranked
    (at 100 copies of FB15k-237, 314 of 511 topics paid for such a tie's degrees)."""
    kg = _copies_graph()
    looked_up = _recorded_degrees(kg, monkeypatch)
    linker = EntityLinker(kg)
    question = "who is the star of gossip girl"
    topic = NamedNode("http://example.org/gg")
    assert linker.spans_naming(question, topic, per_span=5) == ["gossip girl"]
    assert looked_up == []
    # a copy is named only if the tie's degrees rank it among the first five
    copies = [NamedNode(f"http://example.org/GossipGirl.c{n}") for n in range(1, 31)]
    named = [c for c in copies if linker.spans_naming(question, c, per_span=5)]
    ranked = [e.iri for _, es in linker.span_entities(question, per_span=5) for e in es]
    assert named == [c for c in copies if c in ranked] and len(named) == 4
    assert looked_up


@pytest.mark.parametrize("limit", [1, 2, 5, 40, 100])
@pytest.mark.parametrize(
    "mention", ["gossip girl", "blake east", "manhattan", "gossip girl 7", "chuck"]
)
def test_ranking_reads_fewer_degrees_but_ranks_as_a_full_sort(mention: str, limit: int) -> None:
    kg = _copies_graph()
    linker = EntityLinker(kg)
    hits = linker.index().hits(mention, variants=True)  # type: ignore[union-attr]
    degrees = kg.degrees([h.iri for h in hits])
    expected = sorted(hits, key=lambda h: (-h.score, -degrees.get(h.iri, 0), h.label, h.iri.value))
    found = linker.link(mention, limit=limit)
    assert [(e.iri, e.score) for e in found] == [
        (h.iri, round(h.score, 4)) for h in expected[:limit]
    ]


@pytest.mark.parametrize("question", QUESTIONS)
@pytest.mark.parametrize("per_span", [1, 5])
def test_spans_naming_an_entity_are_those_span_entities_gives_it(
    store: LocalStore, question: str, per_span: int
) -> None:
    linker = EntityLinker(store)
    spans = linker.span_entities(question, per_span=50)
    for iri in {e.iri for _, entities in spans for e in entities}:
        expected = [
            span
            for span, entities in linker.span_entities(question, per_span=per_span)
            if iri in {e.iri for e in entities}
        ]
        assert linker.spans_naming(question, iri, per_span=per_span) == expected


def test_an_entity_ranked_below_the_spans_few_is_not_named_by_it() -> None:
    """Seven entities are labelled "Paris"; with five per span, the two with the fewest
    edges are not among them, so no span names them."""
    label = "<http://www.w3.org/2000/01/rdf-schema#label>"
    lines = []
    for n in range(7):
        lines.append(f'<http://example.org/paris{n}> {label} "Paris" .')
        lines += [
            f"<http://example.org/paris{n}> <http://example.org/near> <http://example.org/x{k}> ."
            for k in range(n + 1)
        ]
    kg = LocalStore(profile="generic")
    kg.load_text("\n".join(lines) + "\n", name="paris.nt")
    linker = EntityLinker(kg, variants=False)
    question = "what is there to see in paris"
    named = {
        n: linker.spans_naming(question, NamedNode(f"http://example.org/paris{n}"), per_span=5)
        for n in range(7)
    }
    assert named == {
        0: [],
        1: [],
        2: ["paris"],
        3: ["paris"],
        4: ["paris"],
        5: ["paris"],
        6: ["paris"],
    }


def test_spans_naming_counts_at_least_one_entity_per_span(store: LocalStore) -> None:
    linker = EntityLinker(store)
    question = QUESTIONS[0]
    iri = linker.spans(question)[0][1].iri
    assert linker.spans_naming(question, iri, per_span=0) == linker.spans_naming(
        question, iri, per_span=1
    )


def test_a_negative_link_limit_is_refused(store: LocalStore) -> None:
    from middleware.errors import BadRequest

    with pytest.raises(BadRequest, match="at least 1"):
        EntityLinker(store).link("heat", limit=-1)
