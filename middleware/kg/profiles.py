"""Source profiles: everything the middleware knows about a source's schema.

A profile is a YAML file in ``mappings/`` (or any path). It names the label, alias
and description predicates, the type predicates (typing, never a relation hop), the language, the predicates to ignore, template
overrides (e.g. a search template), the server's SPARQL dialect (``virtuoso``: the
templates in ``sparql/virtuoso/`` first), the relation ontology and, for delimited
triple files, how names become IRIs; ``same_as``, the link property naming another
source's entities (``kg/sameas.py``).

>>> p = load_profile("metaqa")
>>> p.name, p.language, p.delimited is not None
('metaqa', 'en', True)
"""

from __future__ import annotations

from dataclasses import dataclass, field
from functools import cache
from pathlib import Path
from typing import Any
from urllib.parse import quote

import yaml
from pyoxigraph import NamedNode

from middleware.errors import ConfigError, NotFound
from middleware.kg.sameas import SameAsRule, parse_rule
from middleware.support.resources import resource_dir

RDFS_LABEL = "http://www.w3.org/2000/01/rdf-schema#label"
# scan: a regular expression over all labels; search: exact lookup, then the search template
LABEL_LOOKUPS = ("scan", "search")
# sparql11: the templates as they are; virtuoso: sparql/virtuoso/ ones first (label search
# through bif:contains, which needs Virtuoso's full-text index on the label literals)
DIALECTS = ("sparql11", "virtuoso")


@dataclass(frozen=True)
class DelimitedMapping:
    """How rows of a ``s|r|o`` or tab-separated file become RDF.

    ``entity_iri``/``relation_iri`` are templates with ``{key}``; ``key`` is the raw
    name percent-encoded (``encode: quote``) or a Freebase-style path ``/m/0abc``
    turned into ``m.0abc`` (``encode: dotted``). Two-column rows ``name<TAB>text``
    give labels: to relations when the name is a known relation, else to entities.
    """

    entity_iri: str
    relation_iri: str
    encode: str = "quote"
    label_entities: bool = False
    separators: tuple[str, ...] = ("\t", "|")

    def key(self, name: str) -> str:
        if self.encode == "dotted":
            name = name.strip("/").replace("/", ".")
        return quote(name, safe="")

    def entity(self, name: str) -> str:
        return self.entity_iri.format(key=self.key(name))

    def relation(self, name: str) -> str:
        return self.relation_iri.format(key=self.key(name))


@dataclass(frozen=True)
class Profile:
    name: str
    description: str = ""
    language: str | None = "en"
    label_predicates: tuple[NamedNode, ...] = (NamedNode(RDFS_LABEL),)
    alias_predicates: tuple[NamedNode, ...] = ()
    description_predicates: tuple[NamedNode, ...] = ()
    ignore_predicates: tuple[NamedNode, ...] = ()
    type_predicates: tuple[NamedNode, ...] = ()  # typing (rdf:type), not a relation hop
    templates: dict[str, str] = field(default_factory=dict)
    relations: Path | None = None
    delimited: DelimitedMapping | None = None
    entity_prefix: str | None = None
    label_lookup: str = "scan"  # how an endpoint finds folded label matches: scan or search
    dialect: str = "sparql11"  # the server's SPARQL: a folder in sparql/ whose templates win
    row_cap: int | None = None  # the server's result row cap (Virtuoso: ResultSetMaxRows)
    time_limit: float | None = None  # seconds the server allows one query (WDQS: 60)
    same_as: SameAsRule | None = None  # links to another source's entities (P646)

    @property
    def skipped_predicates(self) -> tuple[NamedNode, ...]:
        """Predicates that are metadata, not relations between entities."""
        return tuple(
            dict.fromkeys(
                self.label_predicates
                + self.alias_predicates
                + self.description_predicates
                + self.ignore_predicates
                + self.type_predicates
            )
        )


def _iris(
    data: dict[str, Any], key: str, prefixes: dict[str, str], where: str
) -> tuple[NamedNode, ...]:
    values = data.get(key) or []
    if not isinstance(values, list):
        raise ConfigError(f"{where}: {key} must be a list of IRIs")
    result = []
    for value in values:
        text = str(value)
        head, sep, tail = text.partition(":")
        if sep and head in prefixes:
            text = prefixes[head] + tail
        try:
            result.append(NamedNode(text))
        except ValueError as err:
            raise ConfigError(f"{where}: {key}: {value!r} is not an IRI ({err})") from err
    return tuple(result)


def profile_path(name_or_path: str) -> Path:
    """Resolve a profile name (``metaqa``) or a YAML path."""
    candidate = Path(name_or_path)
    if candidate.suffix in {".yaml", ".yml"} and candidate.is_file():
        return candidate
    path = resource_dir("mappings") / f"{name_or_path}.yaml"
    if not path.is_file():
        raise NotFound(
            f"unknown profile {name_or_path!r}",
            hint=f"use one of {', '.join(available_profiles())} or a path to a YAML file",
        )
    return path


def available_profiles() -> list[str]:
    return sorted(p.stem for p in resource_dir("mappings").glob("*.yaml"))


@cache
def load_profile(name_or_path: str = "generic") -> Profile:
    """Read and validate a profile (cached per name)."""
    path = profile_path(name_or_path)
    try:
        data = yaml.safe_load(path.read_text(encoding="utf-8")) or {}
    except yaml.YAMLError as err:
        raise ConfigError(f"{path}: not valid YAML: {err}") from err
    if not isinstance(data, dict):
        raise ConfigError(f"{path}: a profile must be a mapping")
    where = str(path)
    prefixes = {str(k): str(v) for k, v in (data.get("prefixes") or {}).items()}
    prefixes.setdefault("rdfs", "http://www.w3.org/2000/01/rdf-schema#")
    prefixes.setdefault("rdf", "http://www.w3.org/1999/02/22-rdf-syntax-ns#")
    relations = data.get("relations")
    relations_path = None
    if relations:
        relations_path = Path(relations)
        if not relations_path.is_absolute():
            relations_path = resource_dir("ontologies") / relations_path
        if not relations_path.is_file():
            raise ConfigError(f"{where}: relation ontology {relations_path} does not exist")
    delimited = None
    if data.get("delimited"):
        spec = dict(data["delimited"])
        try:
            delimited = DelimitedMapping(
                entity_iri=str(spec["entity_iri"]),
                relation_iri=str(spec["relation_iri"]),
                encode=str(spec.get("encode", "quote")),
                label_entities=bool(spec.get("label_entities", False)),
            )
        except KeyError as err:
            raise ConfigError(f"{where}: delimited needs {err.args[0]}") from err
        if delimited.encode not in {"quote", "dotted"}:
            raise ConfigError(f"{where}: delimited.encode must be 'quote' or 'dotted'")
    label_predicates = _iris(data, "label_predicates", prefixes, where) or (NamedNode(RDFS_LABEL),)
    label_lookup = str(data.get("label_lookup", "scan"))
    if label_lookup not in LABEL_LOOKUPS:
        raise ConfigError(f"{where}: label_lookup must be one of {', '.join(LABEL_LOOKUPS)}")
    dialect = str(data.get("dialect", "sparql11"))
    if dialect not in DIALECTS:
        raise ConfigError(f"{where}: dialect must be one of {', '.join(DIALECTS)}")
    row_cap = data.get("row_cap")
    if row_cap is not None and (
        not isinstance(row_cap, int) or isinstance(row_cap, bool) or row_cap < 1
    ):
        raise ConfigError(f"{where}: row_cap must be a positive integer, got {row_cap!r}")
    time_limit = data.get("time_limit")
    if time_limit is not None and (
        not isinstance(time_limit, int | float) or isinstance(time_limit, bool) or time_limit <= 0
    ):
        raise ConfigError(f"{where}: time_limit must be a positive number, got {time_limit!r}")
    return Profile(
        name=str(data.get("name", path.stem)),
        description=str(data.get("description", "")).strip(),
        language=data.get("language", "en"),
        label_predicates=label_predicates,
        alias_predicates=_iris(data, "alias_predicates", prefixes, where),
        description_predicates=_iris(data, "description_predicates", prefixes, where),
        ignore_predicates=_iris(data, "ignore_predicates", prefixes, where),
        type_predicates=_iris(data, "type_predicates", prefixes, where),
        templates={str(k): str(v) for k, v in (data.get("templates") or {}).items()},
        relations=relations_path,
        delimited=delimited,
        entity_prefix=data.get("entity_prefix"),
        label_lookup=label_lookup,
        dialect=dialect,
        row_cap=row_cap,
        time_limit=None if time_limit is None else float(time_limit),
        same_as=None if not data.get("same_as") else parse_rule(data["same_as"], prefixes, where),
    )
