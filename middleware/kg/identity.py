"""What a source is, for files kept about it (path memories): its kind, location and
profile, where its own folder is, and what changes when its data does.

Code above kg/ asks these functions (and ``capabilities``) instead of checking which
backend a graph is; a new backend that path memories should recognise is named here.

>>> from middleware.kg.backends.local import LocalStore
>>> source_identity(LocalStore(profile="metaqa", name="films"))
{'kind': 'store', 'location': 'memory:films', 'profile': 'metaqa'}
"""

from __future__ import annotations

import functools
import os
from collections.abc import Callable
from pathlib import Path
from typing import Any

from middleware.kg.backends.endpoint import SparqlEndpoint
from middleware.kg.backends.local import LocalStore
from middleware.kg.base import KnowledgeGraph


def source_identity(graph: KnowledgeGraph) -> dict[str, Any]:
    """The source's kind and location, and its profile."""
    if isinstance(graph, LocalStore):
        where = str(graph.path.resolve()) if graph.path else f"memory:{graph.name}"
        return {"kind": "store", "location": where, "profile": graph.profile.name}
    if isinstance(graph, SparqlEndpoint):
        return {"kind": "endpoint", "location": graph.url, "profile": graph.profile.name}
    return {"kind": type(graph).__name__, "location": graph.name, "profile": graph.profile.name}


def data_fingerprint(graph: KnowledgeGraph) -> dict[str, Any]:
    """What changes when the source's data does (a store's live generation and size);
    empty where the source cannot tell."""
    if isinstance(graph, LocalStore) and graph.path is not None:
        current = graph.path / "current"
        generation = os.readlink(current) if current.is_symlink() else None
        return {"generation": generation, "triples": len(graph)}
    return {}


def store_folder(graph: KnowledgeGraph) -> Path | None:
    """The folder of a store on disk (files about it are kept there); else None."""
    return graph.path if isinstance(graph, LocalStore) else None


def reopener(graph: KnowledgeGraph) -> Callable[[], KnowledgeGraph] | None:
    """How another process opens the same data read-only (picklable), or None where it
    cannot (a store in memory, an endpoint, an rdflib graph): then work stays here."""
    if isinstance(graph, LocalStore) and graph.path is not None:
        return functools.partial(
            LocalStore,
            str(graph.path),
            profile=graph.profile,
            name=graph.name,
            read_only=True,
            timeout=graph.default_timeout,
        )
    return None
