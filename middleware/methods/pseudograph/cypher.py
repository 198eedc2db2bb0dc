"""Cypher, as an LLM writes it to describe what it knows, turned into triples.

Only statements that state facts are read: ``CREATE`` and ``MERGE`` of nodes (labels,
properties) and relationships (types, properties), in chains such as
``(a)-[:R]->(b)<-[:S]-(c)``, with variables reused across statements. A node property
becomes a triple ``<node> <key> <value>``; a relationship becomes a triple between the
two nodes' names (the ``name`` or ``title`` property, else the variable). ``MATCH``
binds variables but states nothing; other clauses (``RETURN``, ``SET``, ...) and
anything that does not parse are skipped, each with its reason. Parsing never raises.

>>> graph = parse_cypher('''
... // lakes
... CREATE (s:Lake {name: 'Lake Superior', area: 82000})
... CREATE (m:Lake {name: "Lake Michigan"})-[:FLOWS_INTO]->(h:Lake {name: 'Lake Huron'})
... MATCH (x) RETURN x
... ''')
>>> [t.text() for t in graph.triples]
['Lake Superior | area | 82000', 'Lake Michigan | flows into | Lake Huron']
>>> [s.reason for s in graph.skipped]
['MATCH states no facts (its variables are kept)', 'RETURN states no facts']
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any

from middleware.methods.pseudograph.cypher_syntax import (
    CLAUSE_START,
    FACT_CLAUSES,
    CypherError,
    Node,
    Parser,
    Relationship,
    depth,
    split_clauses,
    split_statements,
    tokens,
)

NAME_KEYS = ("name", "title")
MAX_CYPHER_CHARS = 50_000


@dataclass(frozen=True)
class PseudoTriple:
    """A fact the model stated: subject and object names, a relation, qualifiers."""

    subject: str
    relation: str
    object: str
    qualifiers: tuple[tuple[str, str], ...] = ()
    line: int = 0
    kind: str = "relation"  # or "property": the object is a value, not a node

    def text(self) -> str:
        """``subject | relation | object``, qualifiers in brackets after the relation."""
        relation = self.relation
        if self.qualifiers:
            relation += " (" + ", ".join(f"{k}: {v}" for k, v in self.qualifiers) + ")"
        return f"{self.subject} | {relation} | {self.object}"


@dataclass(frozen=True)
class Skipped:
    """A statement that gave no triples, where it was and why."""

    line: int
    text: str
    reason: str


@dataclass
class CypherGraph:
    """What the parse found: triples, named nodes by variable, and what was skipped."""

    triples: list[PseudoTriple] = field(default_factory=list)
    nodes: dict[str, str] = field(default_factory=dict)
    skipped: list[Skipped] = field(default_factory=list)

    @property
    def subjects(self) -> list[str]:
        """Distinct subject names, in order of first appearance."""
        return list(dict.fromkeys(t.subject for t in self.triples))

    @property
    def names(self) -> list[str]:
        """Distinct subject and object names that are entities (not property values)."""
        found = dict.fromkeys(t.subject for t in self.triples)
        found.update(dict.fromkeys(t.object for t in self.triples if t.kind == "relation"))
        return list(found)

    def to_dict(self) -> dict[str, Any]:
        return {
            "triples": [t.text() for t in self.triples],
            "skipped": [{"line": s.line, "text": s.text, "reason": s.reason} for s in self.skipped],
        }


# -- turning patterns into triples ---------------------------------------------------------------
def _relation_text(raw: str) -> str:
    """``FLOWS_INTO``, ``flowsInto`` and ``flows-into`` all read ``flows into``."""
    spaced = re.sub(r"(?<=[a-z0-9])(?=[A-Z])", " ", raw)
    return " ".join(re.split(r"[_\-\s]+", spaced)).strip().lower()


def _value_text(value: Any) -> str:
    text = str(value)
    return text[:-2] if re.fullmatch(r"-?\d+\.0", text) else text


class _Builder:
    def __init__(self, graph: CypherGraph) -> None:
        self.graph = graph

    def name_of(self, node: Node, line: int) -> str:
        for key, value in node.props:
            if key.lower() in NAME_KEYS and value not in (None, "", []):
                name = _value_text(value)
                if node.variable:
                    self.graph.nodes[node.variable] = name
                return name
        if node.variable:
            return self.graph.nodes.setdefault(node.variable, node.variable)
        if node.labels:
            return node.labels[0]
        raise CypherError("a node has neither a name, a title nor a variable")

    def add(self, chain: list[Node | Relationship], line: int) -> list[PseudoTriple]:
        made: list[PseudoTriple] = []
        names = [self.name_of(part, line) if isinstance(part, Node) else "" for part in chain]
        for part, name in zip(chain, names, strict=True):
            if isinstance(part, Node):
                made += self.properties(name, part.props, line)
        for i in range(1, len(chain), 2):
            rel = chain[i]
            assert isinstance(rel, Relationship)
            subject, obj = (
                (names[i - 1], names[i + 1]) if rel.forward else (names[i + 1], names[i - 1])
            )
            relation = _relation_text(rel.types[0]) if rel.types else "related to"
            qualifiers = tuple(
                (
                    key,
                    ", ".join(_value_text(v) for v in value)
                    if isinstance(value, list)
                    else _value_text(value),
                )
                for key, value in rel.props
                if value is not None
            )
            made.append(PseudoTriple(subject, relation, obj, qualifiers, line))
        return made

    @staticmethod
    def properties(name: str, props: list[tuple[str, Any]], line: int) -> list[PseudoTriple]:
        made = []
        for key, value in props:
            if key.lower() in NAME_KEYS or value is None:
                continue
            for item in value if isinstance(value, list) else [value]:
                if item not in (None, ""):
                    made.append(
                        PseudoTriple(
                            name, _relation_text(key), _value_text(item), (), line, "property"
                        )
                    )
        return made


def parse_cypher(text: str) -> CypherGraph:
    """Every fact ``text`` states in Cypher; never raises.

    Clauses are read in order, so a variable named by one is known to the next.
    """
    graph = CypherGraph()
    if len(text) > MAX_CYPHER_CHARS:
        graph.skipped.append(Skipped(0, text[:80], f"longer than {MAX_CYPHER_CHARS} characters"))
        text = text[:MAX_CYPHER_CHARS]
    builder = _Builder(graph)
    for line, statement in split_statements(text):
        for clause_text in split_clauses(statement):
            _read_clause(graph, builder, line, clause_text)
    return graph


def _read_clause(graph: CypherGraph, builder: _Builder, line: int, statement: str) -> None:
    keyword = CLAUSE_START.match(statement)
    if keyword is None:
        graph.skipped.append(Skipped(line, statement, "not a Cypher clause"))
        return
    clause = " ".join(keyword.group(1).upper().split())
    reads = clause in ("MATCH", "OPTIONAL MATCH")
    if clause not in FACT_CLAUSES and not reads:
        graph.skipped.append(Skipped(line, statement, f"{clause} states no facts"))
        return
    body = statement[keyword.end() :]
    try:
        if depth(body) != 0:
            raise CypherError("unbalanced brackets")
        chains = Parser(tokens(body)).patterns()
        if reads:
            for part in (p for chain in chains for p in chain):
                if isinstance(part, Node) and part.variable:
                    builder.name_of(part, line)
            graph.skipped.append(
                Skipped(line, statement, f"{clause} states no facts (its variables are kept)")
            )
            return
        found = [t for chain in chains for t in builder.add(chain, line)]
    except CypherError as err:
        graph.skipped.append(Skipped(line, statement, str(err)))
        return
    known = {t.text() for t in graph.triples}
    for triple in found:  # a fact stated twice is kept once
        if triple.text() not in known:
            known.add(triple.text())
            graph.triples.append(triple)
