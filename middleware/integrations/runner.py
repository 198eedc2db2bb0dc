"""A registered method over one graph, built on first use: what the integrations run.

Settings, graph and LLM may be given; what is not given is resolved the way ``kgmw``
resolves it (config file and environment; ``store``/``endpoint`` or the sample graph;
the configured LLM), when first needed, so a retriever of a method that needs no LLM
call never loads one.
"""

from __future__ import annotations

import asyncio
import threading

from middleware.config import Settings
from middleware.errors import BadRequest
from middleware.integrations.records import EvidenceRecord, evidence_records
from middleware.kg.operations import GraphOperations
from middleware.llm.base import LLM
from middleware.methods.aio import aask
from middleware.methods.answer import Answer
from middleware.methods.method import Method
from middleware.methods.registry import SPECS, MethodSpec, method_spec
from middleware.workspace import Workspace


def evidence_methods() -> list[str]:
    """The registered methods whose answers carry graph evidence."""
    return [spec.name for spec in SPECS if spec.collects_evidence]


def check_k(k: object) -> int:
    """``k`` as a count of results, or a BadRequest naming what was wrong."""
    if isinstance(k, bool) or not isinstance(k, int) or k < 1:
        raise BadRequest(
            f"k must be a whole number of at least 1, not {k!r}",
            hint="pass how many evidence items to return, e.g. k=4",
        )
    return k


class MethodRunner:
    """Method ``method`` (a registered name) over ``graph``; with ``require_evidence``
    a method that collects no graph evidence (a baseline) is refused up front."""

    def __init__(
        self,
        method: str,
        *,
        graph: GraphOperations | None = None,
        llm: LLM | None = None,
        settings: Settings | None = None,
        require_evidence: bool = False,
    ) -> None:
        self.spec: MethodSpec = method_spec(method)
        if require_evidence and not self.spec.collects_evidence:
            raise BadRequest(
                f"method {self.spec.name} collects no graph evidence, so it has nothing "
                "to retrieve",
                hint=f"use a method that does: {', '.join(evidence_methods())}",
            )
        self._settings = settings
        self._graph = graph
        self._llm = llm
        self._workspace: Workspace | None = None
        self._lock = threading.Lock()

    @property
    def settings(self) -> Settings:
        with self._lock:
            if self._settings is None:
                self._settings = Settings.load()
            return self._settings

    @property
    def workspace(self) -> Workspace:
        """Where the graph, the LLM and the method come from, as for every front end."""
        settings = self.settings
        with self._lock:
            if self._workspace is None:
                given = None if self._graph is None else {self._graph.name: self._graph}
                self._workspace = Workspace(settings, llm=self._llm, graphs=given)
            return self._workspace

    @property
    def graph(self) -> GraphOperations:
        return self.workspace.graph()

    def method(self) -> Method:
        """The method, built once (opening the LLM only now when none was given)."""
        return self.workspace.method(self.spec.name)

    def answer(self, question: str) -> Answer:
        return self.method().run(question)

    async def arecords(self, question: str, k: object) -> list[EvidenceRecord]:
        """``records`` awaited through the library's async API: a cancelled await stops
        the method at its next LLM call."""
        count = check_k(k)
        method = await asyncio.to_thread(self.method)  # may open the LLM: not on the loop
        return evidence_records(await aask(method, question), count)

    def records(self, question: str, k: object) -> list[EvidenceRecord]:
        """The first ``k`` evidence items of the method's answer to ``question``."""
        count = check_k(k)
        return evidence_records(self.answer(question), count)
