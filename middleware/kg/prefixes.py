"""IRIs in their prefixed form for tables people read: shorter, and never cut.

A table cell cut at a width hides the part of an IRI that tells entities apart (the
end); a prefixed form keeps all of it. IRIs under no known namespace stay whole.

>>> compact("http://rdf.freebase.com/ns/film.film.directed_by")
'fb:film.film.directed_by'
>>> compact("urn:x:a")
'urn:x:a'
"""

from __future__ import annotations

from collections.abc import Mapping

# Namespaces of the graphs this project reads (Freebase, Wikidata, DBpedia, MetaQA's)
# and of the common vocabularies; the longest match wins.
COMMON_PREFIXES: Mapping[str, str] = {
    "rdf": "http://www.w3.org/1999/02/22-rdf-syntax-ns#",
    "rdfs": "http://www.w3.org/2000/01/rdf-schema#",
    "owl": "http://www.w3.org/2002/07/owl#",
    "xsd": "http://www.w3.org/2001/XMLSchema#",
    "skos": "http://www.w3.org/2004/02/skos/core#",
    "foaf": "http://xmlns.com/foaf/0.1/",
    "schema": "http://schema.org/",
    "fb": "http://rdf.freebase.com/ns/",
    "wd": "http://www.wikidata.org/entity/",
    "wdt": "http://www.wikidata.org/prop/direct/",
    "dbo": "http://dbpedia.org/ontology/",
    "dbr": "http://dbpedia.org/resource/",
    "metaqa": "https://kgmw.dev/metaqa/entity/",
    "metaqa-rel": "https://kgmw.dev/metaqa/relation/",
}


def compact(iri: str, prefixes: Mapping[str, str] = COMMON_PREFIXES) -> str:
    """``prefix:rest`` for an IRI under one of ``prefixes`` (the longest namespace),
    else the IRI whole. ``rest`` is kept as it is, so the form is for reading only."""
    best = ""
    chosen = ""
    for prefix, namespace in prefixes.items():
        if iri.startswith(namespace) and len(namespace) > len(best) and len(iri) > len(namespace):
            best, chosen = namespace, prefix
    return f"{chosen}:{iri[len(best) :]}" if best else iri
