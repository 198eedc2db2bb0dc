"""kg-middleware inside the tools people already use: LangChain and LlamaIndex.

Importing ``middleware`` imports none of them; each integration module imports its
framework when it is itself imported (install the ``langchain`` or ``llamaindex`` extra).

- ``runner``: a registered method over one graph, built on first use; the guarded
  SPARQL the tools run (``sparql``); evidence as retrieval records (``records``)
- ``langchain``: ``KGRetriever``, a LangChain retriever of evidence documents
- ``langchain_tools``: ``KGAskTool`` and ``KGSparqlTool`` for agents, ``kg_tools``
- ``llamaindex``: ``KGRetriever``, a LlamaIndex retriever of evidence nodes
"""
