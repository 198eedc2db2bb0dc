"""An answer's evidence as retrieval records: the verbalized text, metadata naming the
graph terms (IRIs), the source, the method, the score where the method gives one, and
``supports_answer``: whether the item holds a triple of a chain that supports the
answer (``Answer.support``; none does when the graph does not hold the answer).

Paths come first, highest score first when the method scored every path (``plan``
interleaves its plans' walks so each is represented; a retriever's first ``k`` should be
the best supported), else in the method's order; then the triples in the method's
order. Both retrievers (LangChain documents, LlamaIndex nodes) are
built from these, so they carry the same text and metadata.

>>> from pyoxigraph import NamedNode
>>> from middleware.kg.base import Triple
>>> from middleware.methods.answer import Answer, Evidence, EvidenceTriple
>>> ex = "http://example.org/"
>>> fact = Triple(NamedNode(ex + "Heat"), NamedNode(ex + "directed_by"), NamedNode(ex + "Mann"), "films")
>>> answer = Answer("Who directed Heat?", "Mann", "qsm",
...                 evidence=Evidence(triples=[EvidenceTriple(fact, "Heat | directed by | Mann")]))
>>> [record] = evidence_records(answer, 5)
>>> record.text, record.metadata["object"], record.metadata["source"], record.score
('Heat | directed by | Mann', 'http://example.org/Mann', 'films', None)
>>> record.metadata["supports_answer"]
False
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass
from typing import Any

from middleware.kg.base import Path, Triple
from middleware.kg.terms import Term
from middleware.methods.answer import Answer, EvidencePath, EvidenceTriple
from middleware.serialize.graph_json import term_json


@dataclass(frozen=True)
class EvidenceRecord:
    """One evidence item: its ``text``, its ``metadata`` (JSON-ready), its ``score``
    (None where the method gives none) and a stable ``key`` derived from its terms."""

    text: str
    metadata: dict[str, Any]
    score: float | None
    key: str


def evidence_records(answer: Answer, k: int) -> list[EvidenceRecord]:
    """The first ``k`` evidence items of ``answer``: its paths, then its triples."""
    paths = answer.evidence.paths
    if all(item.score is not None for item in paths):  # a stable sort: ties keep their order
        paths = sorted(paths, key=lambda item: -(item.score or 0.0))
    support = {triple.key() for chain in answer.support for triple in chain.triples}
    records = [_path_record(item, answer.method, support) for item in paths]
    records += [_triple_record(item, answer.method, support) for item in answer.evidence.triples]
    return records[:k]


def _value(term: Term) -> str:
    return term.value


def _hop(triple: Triple, forward: bool) -> dict[str, Any]:
    return {
        "subject": _value(triple.subject),
        "predicate": _value(triple.predicate),
        "object": _value(triple.object),
        "forward": forward,
    }


def _key(kind: str, body: Any) -> str:
    text = json.dumps([kind, body], sort_keys=True, ensure_ascii=False)
    return hashlib.sha256(text.encode()).hexdigest()[:32]


def _path_record(
    item: EvidencePath, method: str, support: set[tuple[str, str, str]]
) -> EvidenceRecord:
    path: Path = item.path
    hops = [_hop(hop.triple, hop.forward) for hop in path.hops]
    metadata: dict[str, Any] = {
        "kind": "path",
        "nodes": [_value(node) for node in path.nodes],
        "hops": hops,
        "source": item.source,
        "method": method,
        "supports_answer": any(hop.triple.key() in support for hop in path.hops),
    }
    if item.score is not None:
        metadata["score"] = item.score
    return EvidenceRecord(item.text, metadata, item.score, _key("path", hops))


def _triple_record(
    item: EvidenceTriple, method: str, support: set[tuple[str, str, str]]
) -> EvidenceRecord:
    triple = item.triple
    metadata: dict[str, Any] = {
        "kind": "triple",
        **{k: v for k, v in _hop(triple, True).items() if k != "forward"},
        "object_type": term_json(triple.object)["type"],
        "source": triple.source,
        "method": method,
        "role": item.role,
        "supports_answer": triple.key() in support,
    }
    return EvidenceRecord(item.text, metadata, None, _key("triple", list(triple.key())))
