"""What the service holds between requests: a ``Workspace`` (sources, LLM, encoder,
methods) and the service's own parts (the address gate, the penalty box, kept answers).
"""

from __future__ import annotations

import sqlite3
from collections.abc import Mapping
from typing import Any

from middleware.config import Settings
from middleware.errors import ConfigError
from middleware.kg.operations import GraphOperations
from middleware.llm.base import LLM
from middleware.server.answering.answer_store import AnswerStore, store_path
from middleware.server.connections.address_gate import AddressGate
from middleware.server.guard import PenaltyBox
from middleware.workspace import DEFAULT_SOURCE, Workspace

__all__ = ["DEFAULT_SOURCE", "ServiceState"]


class ServiceState(Workspace):
    """A workspace with what only the service needs: the addresses it refuses at the
    connection, the penalty box of ``/sparql`` callers and the kept chat answers.

    ``graphs`` and ``llm`` replace what the settings would open (tests and library
    users hand in their own); the first graph given is the default source.
    """

    def __init__(
        self,
        settings: Settings,
        *,
        llm: LLM | None = None,
        graphs: Mapping[str, GraphOperations] | None = None,
        gate: AddressGate | None = None,
        default: str | None = None,
        overrides: Mapping[str, Any] | None = None,
    ) -> None:
        super().__init__(settings, llm=llm, graphs=graphs, default=default, overrides=overrides)
        self.gate = gate or AddressGate()  # addresses the server refuses at the connection
        self.penalties = PenaltyBox(settings.sparql_penalty, gate=self.gate)  # /sparql callers
        self._answers: AnswerStore | None = None

    # -- kept answers --------------------------------------------------------------------
    @property
    def keys_enabled(self) -> bool:
        return bool(self.settings.server_api_keys or self.settings.key_grants)

    @property
    def answer_store(self) -> AnswerStore | None:
        """Where chat answers are kept for ``GET /v1/answers/{id}``; None when
        ``answers_ttl`` is 0."""
        if self.settings.answers_ttl <= 0:
            return None
        with self._lock:
            if self._answers is None:
                path = store_path(self.settings.cache_dir)
                try:
                    self._answers = AnswerStore(
                        path,
                        ttl=self.settings.answers_ttl,
                        max_bytes=int(self.settings.answers_max_mb * 1_000_000),
                    )
                except (OSError, sqlite3.Error) as err:
                    raise ConfigError(
                        f"cannot keep chat answers in {path}: {err}",
                        hint="set cache_dir to a writable folder, or answers_ttl = 0",
                    ) from err
            return self._answers
