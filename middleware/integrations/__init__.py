"""kg-middleware inside the tools people already use: LangChain, LlamaIndex, MCP.

Importing ``middleware`` imports neither framework; each integration module imports
its own when it is itself imported (install the ``langchain`` or ``llamaindex`` extra).
See docs/integrations.md.

- ``runner``: a registered method over one graph, opened on first use
- ``records``: an answer's evidence as retrieval records (text, IRIs, source, score)
- ``answer_text``: an answer as the text an agent reads
- ``sparql``: caller SPARQL under the ``/sparql`` proxy's guard and limits
- ``extras``: the error naming the extra to install when a framework is missing
- ``langchain``: ``KGRetriever``, a LangChain retriever of evidence documents
- ``langchain_tools``: ``KGAskTool`` (``kg_ask``), ``KGSparqlTool`` (``kg_sparql``),
  ``kg_tools``
- ``llamaindex``: ``KGRetriever``, a LlamaIndex retriever of evidence nodes
- ``mcp_tools``: the MCP tools over a ``ServiceState`` (no SDK import)
- ``mcp_server``: the ``mcp`` SDK's server over stdio or streamable HTTP (``kgmw mcp``)
"""
