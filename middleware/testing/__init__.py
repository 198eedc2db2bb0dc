"""Conformance suites for whoever extends the middleware: mix them into a pytest class.

- ``graphs.GraphConformance``: a KnowledgeGraph backend over the films graph.
- ``llms.LLMConformance``: an LLM backend (``complete``, ``choose``, usage).
- ``methods.MethodConformance``: every registered method over one backend, with a
  scripted LLM: an Answer, the call budget, steps and usage, evidence that exists in
  the graph, an empty neighbourhood, a failing source, an unparseable reply.

They need pytest (the ``dev`` extra); the rest of the package never imports them.

And a runner of the W3C SPARQL 1.1 query evaluation suites, on the engine and through
the service's ``/sparql`` (``w3c_queries``, reading manifests with ``w3c_manifest`` and
comparing results with ``w3c_results``), for ``benchmarks/w3c_query_suites.py`` and
``tests/server/test_w3c_query_suites.py``; it needs a checkout of w3c/rdf-tests.
"""
