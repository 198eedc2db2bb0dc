"""Old import path; the backend lives in :mod:`middleware.kg.backends.endpoint`."""

from middleware.kg.backends.endpoint import SparqlEndpoint

__all__ = ["SparqlEndpoint"]
