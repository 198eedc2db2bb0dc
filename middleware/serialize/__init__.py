"""Serializers: graph terms and results as JSON, answers as JSON and RDF (PROV-O),
SPARQL results in the protocol's formats."""

from middleware.serialize.answer_json import answer_dict, answer_json, entity_dict, step_dict
from middleware.serialize.graph_json import (
    entity_json,
    path_json,
    result_json,
    term_json,
    triple_json,
)
from middleware.serialize.rdf import answer_turtle

__all__ = [
    "answer_dict",
    "answer_json",
    "answer_turtle",
    "entity_dict",
    "entity_json",
    "path_json",
    "result_json",
    "step_dict",
    "term_json",
    "triple_json",
]
