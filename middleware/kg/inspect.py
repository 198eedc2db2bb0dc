"""Look at an unknown graph and suggest a profile for it.

Every figure comes from bounded queries (``sparql/inspect_*.rq``): each reads at most
``sample`` triples, so inspecting a large endpoint costs a handful of small queries.
Label predicates are the literal-valued predicates that name things: the well-known
ones (rdfs:label, skos:prefLabel, foaf:name, schema:name, ...) when the graph uses
them, else the non-numeric, short-valued predicate covering the most subjects.

>>> from middleware.kg.backends.local import LocalStore
>>> store = LocalStore()
>>> _ = store.load_text('<urn:a> <http://xmlns.com/foaf/0.1/name> "A" .\\n', name="a.nt")
>>> inspect_graph(store).suggested["label_predicates"]
['http://xmlns.com/foaf/0.1/name']
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import yaml
from pyoxigraph import Literal, NamedNode

from middleware.kg.operations import GraphOperations
from middleware.kg.terms import Term

RDF = "http://www.w3.org/1999/02/22-rdf-syntax-ns#"
RDFS = "http://www.w3.org/2000/01/rdf-schema#"
SKOS = "http://www.w3.org/2004/02/skos/core#"
XSD = "http://www.w3.org/2001/XMLSchema#"
KNOWN_LABELS = (
    RDFS + "label",
    SKOS + "prefLabel",
    "http://xmlns.com/foaf/0.1/name",
    "http://schema.org/name",
    "https://schema.org/name",
    "http://purl.org/dc/terms/title",
    "http://purl.org/dc/elements/1.1/title",
    "http://rdf.freebase.com/ns/type.object.name",
)
KNOWN_ALIASES = (SKOS + "altLabel", "http://schema.org/alternateName")
KNOWN_DESCRIPTIONS = (RDFS + "comment", "http://schema.org/description", SKOS + "definition")
KNOWN_TYPES = (
    RDF + "type",
    "http://www.wikidata.org/prop/direct/P31",
    "http://rdf.freebase.com/ns/type.object.type",
)
NUMERIC = tuple(
    XSD + name
    for name in (
        *("integer", "int", "long", "decimal", "double", "float"),
        *("gYear", "date", "dateTime", "boolean", "nonNegativeInteger", "positiveInteger"),
    )
)
LONGEST_NAME = 80.0  # mean characters: longer values are descriptions, not names


@dataclass(frozen=True)
class Inspection:
    """What ``inspect_graph`` found; ``suggested`` is a profile's fields."""

    source: str
    sample: int
    sizes: dict[str, Any]
    label_candidates: list[dict[str, Any]]
    known: dict[str, int]
    relations: list[dict[str, Any]]
    hubs: list[dict[str, Any]]
    languages: list[dict[str, Any]]
    suggested: dict[str, Any]

    def to_json(self) -> dict[str, Any]:
        return {
            "source": self.source,
            "sample": self.sample,
            "sizes": self.sizes,
            "label_candidates": self.label_candidates,
            "known_predicates": self.known,
            "relations": self.relations,
            "hubs": self.hubs,
            "languages": self.languages,
            "suggested_profile": self.suggested,
        }

    def profile_yaml(self) -> str:
        """The suggestion as a profile file (save as ``mappings/NAME.yaml``)."""
        fields = {"name": "suggested", **{k: v for k, v in self.suggested.items() if v}}
        return yaml.safe_dump(fields, sort_keys=False, allow_unicode=True)


def _int(row: dict[str, Term], key: str) -> int:
    value = row.get(key)
    return int(float(value.value)) if isinstance(value, Literal) else 0


def _float(row: dict[str, Term], key: str) -> float:
    value = row.get(key)
    return float(value.value) if isinstance(value, Literal) else 0.0


def _iri(row: dict[str, Term], key: str) -> str:
    value = row.get(key)
    return value.value if isinstance(value, NamedNode) else ""


def _nodes(values: tuple[str, ...] | list[str]) -> list[NamedNode]:
    return [NamedNode(v) for v in values]


def _candidates(graph: GraphOperations, sample: int, limit: int) -> list[dict[str, Any]]:
    rows = graph.run_template(
        "inspect_literals", sample=sample, limit=limit, numeric=_nodes(NUMERIC)
    )
    found = []
    for row in rows:
        uses, numbers = _int(row, "uses"), _int(row, "numbers")
        found.append(
            {
                "predicate": _iri(row, "p"),
                "uses": uses,
                "subjects": _int(row, "subjects"),
                "mean_length": round(_float(row, "length"), 1),
                "numbers": numbers,
                "name_like": numbers * 2 < uses and _float(row, "length") <= LONGEST_NAME,
            }
        )
    return found


def _labels(candidates: list[dict[str, Any]], known: dict[str, int]) -> list[str]:
    well_known = [p for p in KNOWN_LABELS if known.get(p)]
    if well_known:
        return sorted(well_known, key=lambda p: -known[p])
    names = [
        c["predicate"]
        for c in candidates
        if c["name_like"] and c["predicate"] not in KNOWN_DESCRIPTIONS + KNOWN_ALIASES
    ]
    return names[:1]


def inspect_graph(graph: GraphOperations, *, sample: int = 100_000, limit: int = 10) -> Inspection:
    """Sizes, label candidates, relations, hubs and label languages of ``graph``, each
    from one query over at most ``sample`` triples, and the profile they suggest."""
    size = graph.run_template("inspect_sizes", sample=sample)[0]
    triples = _int(size, "triples")
    sizes = {
        "triples": triples,
        "subjects": _int(size, "subjects"),
        "predicates": _int(size, "predicates"),
        "capped": triples >= sample,
    }
    every_known = KNOWN_LABELS + KNOWN_ALIASES + KNOWN_DESCRIPTIONS + KNOWN_TYPES
    known = {
        _iri(row, "p"): _int(row, "uses")
        for row in graph.run_template(
            "inspect_known", predicates=_nodes(every_known), sample=sample
        )
    }
    candidates = _candidates(graph, sample, limit)
    labels = _labels(candidates, known)
    for candidate in candidates:
        candidate["suggested"] = candidate["predicate"] in labels
    types = [p for p in KNOWN_TYPES if known.get(p)]
    relations = [
        {"predicate": _iri(r, "p"), "uses": _int(r, "uses"), "objects": _int(r, "objects")}
        for r in graph.run_template("inspect_relations", sample=sample, limit=limit + len(types))
        if _iri(r, "p") not in types
    ][:limit]
    hubs = [
        {"predicate": _iri(r, "p"), "object": _iri(r, "o"), "count": _int(r, "n")}
        for r in graph.run_template("inspect_hubs", sample=sample, limit=limit)
    ]
    languages: list[dict[str, Any]] = []
    if labels:
        rows = graph.run_template(
            "inspect_languages", labels=_nodes(labels), sample=sample, limit=limit
        )
        languages = [
            {"language": r["lang"].value if "lang" in r else "", "count": _int(r, "n")}
            for r in rows
        ]
    top_language = languages[0]["language"] if languages else ""
    suggested = {
        "label_predicates": labels,
        "alias_predicates": [p for p in KNOWN_ALIASES if known.get(p)],
        "description_predicates": [p for p in KNOWN_DESCRIPTIONS if known.get(p)],
        "type_predicates": types,
        "language": top_language or None,
    }
    return Inspection(
        source=graph.name,
        sample=sample,
        sizes=sizes,
        label_candidates=candidates,
        known={p: n for p, n in known.items() if p},
        relations=relations,
        hubs=hubs,
        languages=languages,
        suggested=suggested,
    )
