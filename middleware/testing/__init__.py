"""Conformance suites for whoever extends the middleware: mix them into a pytest class.

- ``graphs.GraphConformance``: a KnowledgeGraph backend over the films graph.
- ``llms.LLMConformance``: an LLM backend (``complete``, ``choose``, usage).
- ``methods.MethodConformance``: every registered method over one backend, with a
  scripted LLM: an Answer, the call budget, steps and usage, evidence that exists in
  the graph, an empty neighbourhood, a failing source, an unparseable reply.

They need pytest (the ``dev`` extra); the rest of the package never imports them.
"""
