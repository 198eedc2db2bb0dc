"""Old import path; opening a graph from settings lives in :mod:`middleware.kg.open`."""

from middleware.kg.open import open_graph

__all__ = ["open_graph"]
