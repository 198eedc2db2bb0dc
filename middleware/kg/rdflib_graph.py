"""Old import path; the backend lives in :mod:`middleware.kg.backends.rdflib_graph`."""

from middleware.kg.backends.rdflib_graph import RdflibGraph, to_oxigraph

__all__ = ["RdflibGraph", "to_oxigraph"]
