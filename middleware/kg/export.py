"""A local store written back out as RDF: N-Triples, N-Quads, Turtle, TriG or RDF/XML.

A file is written whole or not at all: the dump goes to a temporary file beside it,
renamed over the target when complete. A triple format (nt, ttl, rdfxml) has no place
for named graphs, so a store that has some must be written as nq or trig.
"""

from __future__ import annotations

import contextlib
import os
from pathlib import Path
from typing import BinaryIO

import pyoxigraph as ox

from middleware.errors import BadRequest
from middleware.kg.backends.local import LocalStore
from middleware.kg.base import KnowledgeGraph
from middleware.support.temp_files import temporary_beside

EXPORT_FORMATS = {
    "nt": ox.RdfFormat.N_TRIPLES,
    "nq": ox.RdfFormat.N_QUADS,
    "ttl": ox.RdfFormat.TURTLE,
    "trig": ox.RdfFormat.TRIG,
    "rdfxml": ox.RdfFormat.RDF_XML,
}
SUFFIXES = {
    ".nt": "nt",
    ".nq": "nq",
    ".ttl": "ttl",
    ".trig": "trig",
    ".rdf": "rdfxml",
    ".xml": "rdfxml",
    ".owl": "rdfxml",
}


def export_format(name: str | None, out: Path | None) -> str:
    """``name``, else the format the output file's suffix names."""
    if name:
        return name
    if out is not None and out.suffix.lower() in SUFFIXES:
        return SUFFIXES[out.suffix.lower()]
    raise BadRequest(
        "which format?",
        hint=f"give --format ({', '.join(EXPORT_FORMATS)}) or an --out file ending in "
        f"{', '.join(SUFFIXES)}",
    )


def exportable(graph: KnowledgeGraph) -> LocalStore:
    """``graph`` if it is a local store, which is what ``export_store`` writes out; a
    BadRequest saying what to do otherwise."""
    if not isinstance(graph, LocalStore):
        raise BadRequest(
            f"{graph.name!r} is not a local store; kgmw export writes out a store",
            hint="give --store DIR, or read an endpoint with `kgmw query` and a CONSTRUCT",
        )
    return graph


def export_store(store: LocalStore, fmt: str, output: Path | BinaryIO) -> int:
    """Write every quad of ``store`` to ``output`` (a path or a binary stream) in
    format ``fmt``; returns how many were written."""
    graph = store.oxigraph
    rdf = EXPORT_FORMATS[fmt]
    if not rdf.supports_datasets and next(iter(graph.named_graphs()), None) is not None:
        raise BadRequest(
            f"store {store.name!r} has named graphs, which {fmt} cannot hold",
            hint="use --format nq or --format trig",
        )
    where: dict[str, object] = {} if rdf.supports_datasets else {"from_graph": ox.DefaultGraph()}
    if not isinstance(output, Path):
        graph.dump(output, rdf, **where)  # type: ignore[arg-type]
        return len(graph)
    handle, temp = temporary_beside(output, prefix=f".{output.name}-")
    os.close(handle)
    try:
        graph.dump(temp, rdf, **where)  # type: ignore[arg-type]
        os.replace(temp, output)
    except BaseException:  # also Ctrl-C: no half-written export stays; re-raised
        with contextlib.suppress(OSError):
            os.unlink(temp)
        raise
    return len(graph)
