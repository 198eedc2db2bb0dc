"""Knowledge Solver: the LLM walks the graph hop by hop (``ksl``, ``ksl+plan``)."""

from middleware.methods.ksl.method import KnowledgeSolver

__all__ = ["KnowledgeSolver"]
