"""LangChain tools for agents (the ``langchain`` extra): ``KGAskTool`` answers a
question from the graph with its evidence; ``KGSparqlTool`` runs read-only SPARQL under
the same guard and limits as the service's ``/sparql`` proxy.

A refused or failed call comes back to the agent as the error's message and hint
(``handle_tool_error=True``), so it can correct itself; pass
``handle_tool_error=False`` to have the ``ToolException`` raised instead.
"""

from __future__ import annotations

from typing import Any, Literal

from middleware.config import Settings
from middleware.errors import MiddlewareError
from middleware.integrations.answer_text import answer_text
from middleware.integrations.extras import missing_extra
from middleware.integrations.runner import MethodRunner
from middleware.integrations.sparql import guarded_sparql
from middleware.kg.operations import GraphOperations
from middleware.llm.base import LLM
from middleware.serialize.answer_json import answer_dict
from middleware.workspace import Workspace

try:
    from langchain_core.callbacks import CallbackManagerForToolRun
    from langchain_core.tools import BaseTool, ToolException
    from pydantic import BaseModel, ConfigDict, Field, PrivateAttr
except ModuleNotFoundError as err:  # the langchain extra is missing
    raise missing_extra("langchain", err) from err


class AskInput(BaseModel):
    question: str = Field(description="The question, in natural language.")


class SparqlInput(BaseModel):
    query: str = Field(description="One SPARQL 1.1 SELECT, ASK, CONSTRUCT or DESCRIBE query.")


class _GraphTool(BaseTool):
    """A tool over one knowledge graph; what is not given is opened as ``kgmw`` would."""

    model_config = ConfigDict(arbitrary_types_allowed=True)

    graph: GraphOperations | None = None
    llm: LLM | None = None
    settings: Settings | None = None
    method: str = "plan"
    handle_tool_error: bool = True
    _runner: MethodRunner = PrivateAttr()

    def model_post_init(self, context: Any, /) -> None:
        super().model_post_init(context)
        self._runner = MethodRunner(
            self.method, graph=self.graph, llm=self.llm, settings=self.settings
        )


class KGAskTool(_GraphTool):
    """``kg_ask``: the answer of ``method`` with its evidence as text for the agent;
    called with a tool call, the ``ToolMessage``'s artifact is the full answer as JSON
    (the shape ``kgmw ask --json`` prints)."""

    name: str = "kg_ask"
    description: str = (
        "Answer a factual question from the knowledge graph. Returns the answer, whether "
        "the graph backs it, the facts that support it and the graph facts and paths it "
        "rests on; or says the graph does not hold the answer, with a best guess that the "
        "graph does not support."
    )
    args_schema: type[BaseModel] = AskInput
    response_format: Literal["content", "content_and_artifact"] = "content_and_artifact"
    max_evidence: int = Field(default=10, ge=1)

    def _run(
        self, question: str, run_manager: CallbackManagerForToolRun | None = None
    ) -> tuple[str, dict[str, Any]]:
        try:
            answer = self._runner.answer(question)
        except MiddlewareError as err:
            raise ToolException(str(err)) from err
        return answer_text(answer, self.max_evidence), answer_dict(answer)


class KGSparqlTool(_GraphTool):
    """``kg_sparql``: a read-only query's result (SPARQL JSON; CONSTRUCT and DESCRIBE
    as Turtle), or the guard's error for an update, a ``SERVICE`` off the allowlist or
    a query past the size, nesting or operator limits."""

    name: str = "kg_sparql"
    description: str = (
        "Run one read-only SPARQL query (SELECT, ASK, CONSTRUCT or DESCRIBE) on the "
        "knowledge graph. Results come as SPARQL JSON, CONSTRUCT and DESCRIBE as Turtle, "
        "and are capped in rows. Updates and SERVICE calls are refused."
    )
    args_schema: type[BaseModel] = SparqlInput

    def _run(self, query: str, run_manager: CallbackManagerForToolRun | None = None) -> str:
        try:
            return guarded_sparql(self._runner.graph, self._runner.settings, query)
        except MiddlewareError as err:
            raise ToolException(str(err)) from err


def kg_tools(
    *,
    method: str = "plan",
    graph: GraphOperations | None = None,
    llm: LLM | None = None,
    settings: Settings | None = None,
) -> list[BaseTool]:
    """``[KGAskTool, KGSparqlTool]`` over one graph (opened here when not given; the LLM
    only when ``kg_ask`` first needs it)."""
    settings = settings if settings is not None else Settings.load()
    graph = graph if graph is not None else Workspace(settings).graph()
    shared: dict[str, Any] = {"graph": graph, "llm": llm, "settings": settings}
    return [KGAskTool(method=method, **shared), KGSparqlTool(**shared)]
