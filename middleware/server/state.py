"""What the service holds between requests: a ``Workspace`` (sources, LLM, encoder,
methods) and the service's own parts (the address gate, the penalty box, kept answers).
"""

from __future__ import annotations

import hashlib
import sqlite3
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from middleware.config import Settings
from middleware.config.methods import PlanSettings
from middleware.errors import ConfigError
from middleware.kg.operations import GraphOperations
from middleware.llm.base import LLM
from middleware.planning.memory import memory_location
from middleware.server.answering.answer_store import AnswerStore, store_path
from middleware.server.connections.address_gate import AddressGate
from middleware.server.guard import PenaltyBox
from middleware.server.shared.kept_answers import SharedAnswerStore
from middleware.server.shared.redis_state import SharedRedis
from middleware.server.shared.refusals import SharedRefusals
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
        # server_state_url: limits, penalties and kept answers shared by every host
        self.shared = SharedRedis.from_settings(settings)
        if self.shared is not None:
            self.penalties.share(SharedRefusals(self.shared, self.penalties.hold))
        self._answers: AnswerStore | SharedAnswerStore | None = None
        self._digests: dict[tuple[str, int, int, int, int], str] = {}  # file stat: sha256

    # -- kept answers --------------------------------------------------------------------
    @property
    def keys_enabled(self) -> bool:
        return bool(self.settings.server_api_keys or self.settings.key_grants)

    @property
    def answer_store(self) -> AnswerStore | SharedAnswerStore | None:
        """Where chat answers are kept for ``GET /v1/answers/{id}``: the shared Redis,
        else a file of this host; None when ``answers_ttl`` is 0."""
        if self.settings.answers_ttl <= 0:
            return None
        with self._lock:
            if self._answers is None and self.shared is not None:
                self._answers = SharedAnswerStore(
                    self.shared,
                    ttl=self.settings.answers_ttl,
                    max_bytes=int(self.settings.answers_max_mb * 1_000_000),
                )
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

    # -- what every host must share -----------------------------------------------------
    def plan_memory(self, name: str) -> dict[str, Any] | None:
        """The path memory source ``name`` plans with and its SHA-256 (None while the
        file is missing), so hosts behind one balancer can be seen to agree; None when
        it is not known yet (no ``plan_memory`` setting and the source not opened)."""
        configured = self.source_settings(name).table(PlanSettings).memory
        with self._lock:
            graph = self._graphs.get(name)
        if configured is None and graph is None:
            return None
        path = (
            memory_location(graph, configured, self.source_settings(name).cache_dir)
            if graph is not None
            else Path(configured or "").expanduser()
        )
        return {"path": str(path), "sha256": self._digest(path)}

    def _digest(self, path: Path) -> str | None:
        try:
            stat = path.stat()
        except OSError:
            return None
        # the change time too: a copy that keeps the modification time and size
        # (cp -p, rsync -t) still changes it
        key = (str(path), stat.st_ino, stat.st_mtime_ns, stat.st_ctime_ns, stat.st_size)
        with self._lock:
            known = self._digests.get(key)
        if known is None:
            with path.open("rb") as file:
                known = hashlib.file_digest(file, "sha256").hexdigest()
            with self._lock:
                if len(self._digests) > 64:  # files rewritten many times: forget the old
                    self._digests.clear()
                self._digests[key] = known
        return known

    def close(self) -> None:
        """The workspace's sources and executors, and the shared state's connections."""
        if self.penalties.shared is not None:
            self.penalties.shared.stop()
        if self.shared is not None:
            self.shared.close()
        super().close()
