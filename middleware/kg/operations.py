"""Every graph operation, written once over ``_execute()`` and the SPARQL templates.

A backend (local store, SPARQL endpoint, rdflib graph) only implements
``_execute(sparql, timeout, max_rows)``; :class:`GraphOperations` renders the
``sparql/*.rq`` templates with bound terms and turns rows into :class:`Triple`,
:class:`Path` and :class:`Entity` objects (label lookups: ``kg/lookups.py``).
"""

from __future__ import annotations

import re
import threading
from abc import ABC, abstractmethod
from collections.abc import Iterable
from functools import partial
from typing import TYPE_CHECKING

from pyoxigraph import Literal, NamedNode

from middleware.errors import BadRequest, EndpointError, NotFound, QueryRejected
from middleware.kg.base import (
    SORT_WINDOW,
    Capabilities,
    Direction,
    Entity,
    QueryResult,
    Triple,
    checked_limit,
)
from middleware.kg.degrees import DegreeCounts
from middleware.kg.described import entity_of
from middleware.kg.lookups import NOTHING, LabelLookups
from middleware.kg.ordered_rows import Ordering, rows_in_order
from middleware.kg.path_reads import PathSearch
from middleware.kg.profiles import Profile
from middleware.kg.remote_guard import refuse_extension_functions, refuse_service_words
from middleware.kg.result_rows import predicate_of, subject_of
from middleware.kg.result_size import check_size, result_bytes
from middleware.kg.sampling import EntitySampling
from middleware.kg.sparql_guard import (
    QueryDataset,
    QueryPolicy,
    guard_query,
    with_base,
)
from middleware.kg.step_reads import StepReads
from middleware.kg.terms import Term, to_iri
from middleware.kg.walks import RelationWalks
from middleware.support.tracing import span

if TYPE_CHECKING:
    from middleware.kg.executors.caller_queries import CallerQueries

LABEL_BATCH = 200


class GraphOperations(
    LabelLookups, RelationWalks, PathSearch, DegreeCounts, EntitySampling, StepReads, ABC
):
    """Graph operations over ``_execute``; subclasses provide the transport."""

    name: str
    profile: Profile
    default_timeout: float
    capabilities: Capabilities = Capabilities(templates=True)
    neighbors_limit: int = 100
    paths_limit: int = 100
    default_max_hops: int = 2

    def __init__(self) -> None:
        super().__init__()
        self.query_count = 0  # every query this object ran, in any thread
        self._per_thread = threading.local()
        self._count_lock = threading.Lock()

    caller_queries: CallerQueries | None = None  # a local store's executors
    stored_profile: str | None = None  # as a store folder's loads recorded it

    @property
    def version(self) -> int:
        """Changes when the content changes; remote graphs cannot tell and stay at 0."""
        return 0

    def refresh(self) -> bool:
        """Nothing to move to (a store folder's reader overrides it)."""
        return False

    @property
    def thread_query_count(self) -> int:
        """Queries run by the calling thread: what one request spent, even when several
        requests share this graph at once."""
        return int(getattr(self._per_thread, "count", 0))

    # -- transport ---------------------------------------------------------------------
    @abstractmethod
    def _execute(
        self,
        sparql: str,
        timeout: float,
        max_rows: int | None = None,
        dataset: QueryDataset | None = None,
    ) -> QueryResult:
        """Run one read-only query and return its parsed result, at most ``max_rows``
        rows or triples (``truncated`` set when more were there), over ``dataset``
        when one is given."""

    def query(
        self,
        sparql: str,
        *,
        timeout: float | None = None,
        max_rows: int | None = None,
        policy: QueryPolicy | None = None,
        dataset: QueryDataset | None = None,
        base_iri: str | None = None,
    ) -> QueryResult:
        """Run a caller's SPARQL query: checked by ``guard_query`` under ``policy`` (read
        only, within limits, no SERVICE off its allowlist), then the checked canonical
        text runs, never the caller's own. ``dataset`` and ``base_iri`` are what the
        SPARQL Protocol lets a request name besides the query."""
        policy = policy or QueryPolicy()
        guarded = guard_query(with_base(sparql, base_iri), policy)
        if dataset:
            dataset.check()
        try:
            return self._run(guarded.text, timeout, max_rows, dataset or None, caller=policy)
        except QueryRejected as err:
            raise BadRequest(f"not a valid SPARQL query: {err.message}", hint=err.hint) from err

    def _run(
        self,
        sparql: str,
        timeout: float | None = None,
        max_rows: int | None = None,
        dataset: QueryDataset | None = None,
        *,
        kind: str = "query",
        caller: QueryPolicy | None = None,
    ) -> QueryResult:
        """Run ``sparql`` (checked already), counted and traced; ``kind`` names it in the
        trace: ``query`` for a caller's own text, else the template's name. A caller's
        text (``caller``: the policy it was checked under) runs through
        ``_execute_caller``."""
        with self._count_lock:
            self.query_count += 1
        self._per_thread.count = self.thread_query_count + 1
        timeout = self.default_timeout if timeout is None else timeout
        with span("kgmw.sparql", source=self.name, kind=kind) as traced:
            if caller is None:
                result = self._execute(sparql, timeout, max_rows, dataset)
            else:
                result = self._execute_caller(sparql, timeout, max_rows, dataset, caller)
            traced.set(result=result.kind, rows=len(result.rows) + len(result.triples))
        return result

    def _execute_caller(
        self,
        sparql: str,
        timeout: float,
        max_rows: int | None,
        dataset: QueryDataset | None,
        policy: QueryPolicy,
    ) -> QueryResult:
        """Run a caller's checked text on a remote engine, which makes any call itself:
        without an allowlist ``service`` outside IRIs and strings is refused, and so is
        an extension function off ``policy.functions`` (``remote_guard.py``). An engine
        in this process (``capabilities.in_process``) is refused unless its backend
        overrides this with isolation of its own (``LocalStore``: executors)."""
        if self.capabilities.in_process:
            raise BadRequest(
                f"source {self.name!r} has no isolated way to run a caller's SPARQL",
                hint="load the data into a local store (kgmw load) to query it",
            )
        if not policy.services:
            refuse_service_words(sparql, why="the remote engine would make the call")
        refuse_extension_functions(sparql, policy.functions)
        result = self._execute(sparql, timeout, max_rows, dataset)
        check_size(result_bytes(result), policy.limits.max_result_bytes)
        return result

    def _select(
        self, template: str, order: Ordering | None = None, /, **bindings: object
    ) -> list[dict[str, Term]]:
        """The rows of a template; with ``order``, sorted and cut (``ordered_rows.py``)."""
        text, here = self.templates.render(template, **bindings), self.capabilities.in_process
        run = partial(self._select_text, template)
        return rows_in_order(order, text, run, in_process=here, templates=self.templates)

    def _select_text(self, template: str, text: str) -> list[dict[str, Term]]:
        result = self._run(text, kind=template)
        if result.truncated:
            raise EndpointError(
                f"graph {self.name!r} cut the {template} query's results at "
                f"{len(result.rows)} rows",
                hint="the server caps result rows (Virtuoso: ResultSetMaxRows in its ini); "
                "raise the cap or lower the limit",
            )
        return result.rows

    def run_template(self, template: str, **bindings: object) -> list[dict[str, Term]]:
        """The rows of ``sparql/TEMPLATE.rq`` bound with ``bindings`` (profile overrides apply)."""
        return self._select(template, **bindings)

    def _common_bindings(self) -> dict[str, object]:
        return {
            "skipped": list(self.profile.skipped_predicates),
            "label_predicates": list(self.profile.label_predicates),
        }

    # -- operations --------------------------------------------------------------------
    def neighbors(
        self, entity: str | NamedNode, *, direction: Direction = "both", limit: int | None = None
    ) -> list[Triple]:
        """Triples around ``entity`` (``out``: it is the subject; ``in``; ``both``), label and
        ignored predicates left out, ordered (outgoing first, then by predicate and other
        end), cut at ``limit``; past ``SORT_WINDOW`` rows a side, of a sample (a hub).
        In a store in this process, rows whose ends are all IRIs are sorted here
        (``kg/ordered_rows.py``): Oxigraph's own sort of a hub's window costs ten times
        the read."""
        node = to_iri(entity)
        limit = checked_limit(self.neighbors_limit if limit is None else limit, "neighbors")
        if direction not in ("out", "in", "both"):
            raise BadRequest(f"direction must be 'out', 'in' or 'both', got {direction!r}")
        found: list[Triple] = []
        common = {"entity": node, **self._common_bindings()}
        if direction in ("out", "both"):
            for row in self._side(node, "neighbors_out", ("p", "o"), limit, common):
                found.append(Triple(node, predicate_of(row["p"]), row["o"], self.name))
        if direction in ("in", "both") and len(found) < limit:
            for row in self._side(node, "neighbors_in", ("p", "s"), limit - len(found), common):
                found.append(Triple(subject_of(row["s"]), predicate_of(row["p"]), node, self.name))
        return found

    def _side(
        self,
        node: NamedNode,
        template: str,
        keys: tuple[str, str],
        limit: int,
        common: dict[str, object],
    ) -> list[dict[str, Term]]:
        """One side's rows of ``neighbors``, ordered by ``keys`` and cut at ``limit``
        (``limit`` is bound too: a profile's own template may order and cut itself).
        In a store in this process the first ``limit`` rows the engine gives are read
        first: all of the side when fewer come back; else, at a hub (more than
        ``SORT_WINDOW`` edges, a capped count kept per version), they are the sample,
        and only another node's side is read again from its window."""
        window = max(limit, SORT_WINDOW)
        if self.capabilities.in_process and limit < SORT_WINDOW:  # else one read is the window
            first = self._select(
                template, Ordering(keys, limit), limit=limit, window=limit, **common
            )
            if (
                len(first) < limit
                or self.degrees([node], at_most=SORT_WINDOW + 1)[node] > SORT_WINDOW
            ):
                return first
        return self._select(template, Ordering(keys, limit), limit=limit, window=window, **common)

    def labels(self, entities: Iterable[Term]) -> dict[Term, str]:
        """The best label of each entity (profile language first); literals label themselves."""
        result: dict[Term, str] = {}
        iris: list[NamedNode] = []
        for term in dict.fromkeys(entities):
            if isinstance(term, Literal):
                result[term] = term.value
            elif isinstance(term, NamedNode):
                iris.append(term)
        for start in range(0, len(iris), LABEL_BATCH):
            batch = iris[start : start + LABEL_BATCH]
            best: dict[Term, tuple[int, str]] = {}
            rows = self._select(
                "labels", entities=batch, limit=len(batch) * 20, **self._common_bindings()
            )
            for row in rows:
                label = row["label"]
                if not isinstance(label, Literal):
                    continue
                rank = self._language_rank(label)
                entity = row["e"]
                if entity not in best or (rank, label.value) < best[entity]:
                    best[entity] = (rank, label.value)
            result.update({entity: text for entity, (_, text) in best.items()})
        return result

    def _language_rank(self, literal: Literal) -> int:
        language = literal.language
        if self.profile.language and language == self.profile.language:
            return 0
        if language is None:
            return 1
        if self.profile.language and language.split("-")[0] == self.profile.language:
            return 2
        return 3

    def search(self, text: str, *, limit: int = 10) -> list[Entity]:
        """Entities whose label or alias contains ``text`` (case-insensitive), shortest first."""
        limit = checked_limit(limit, "search")
        needle = text.strip()
        if not needle:
            raise BadRequest("search text is empty")
        rows = self._select(
            "search",
            text=Literal(needle),
            limit=limit * 5,
            names=list(self.profile.label_predicates + self.profile.alias_predicates),
            language=Literal(self.profile.language or ""),
            phrase=Literal('"' + " ".join(re.findall(r"\w+", needle)) + '"'),
        )
        entities: dict[NamedNode, Entity] = {}
        for row in rows:
            entity, label = row["e"], row["label"]
            if isinstance(entity, NamedNode) and entity not in entities:
                entities[entity] = Entity(entity, label.value, self.name, match="search")
            if len(entities) >= limit:
                break
        return list(entities.values())

    def has_triples(self, *, timeout: float | None = None) -> bool:
        """Whether the graph holds any triple at all (readiness probes, doctor)."""
        return bool(
            self._run(
                self.templates.render("has_triples"), timeout=timeout, kind="has_triples"
            ).boolean
        )

    def has_triple(self, triple: Triple) -> bool:
        """Whether the graph states ``triple`` (its ``source`` is ignored)."""
        query = self.templates.render(
            "has_triple", subject=triple.subject, predicate=triple.predicate, object=triple.object
        )
        return bool(self._run(query, kind="has_triple").boolean)

    def describe(self, entity: str | NamedNode) -> Entity:
        """Label, aliases and description of ``entity``; NotFound when the graph lacks it."""
        node = to_iri(entity)
        rows = self._select(
            "describe",
            entity=node,
            label_predicates=list(self.profile.label_predicates),
            alias_predicates=list(self.profile.alias_predicates) or [NOTHING],
            description_predicates=list(self.profile.description_predicates) or [NOTHING],
        )
        if not rows:
            raise NotFound(
                f"{node.value} is not in graph {self.name!r}",
                hint="check the IRI, or link a label with `kgmw link`",
            )
        return entity_of(node, rows, self.name, self._language_rank)

    def close(self) -> None:
        """Release resources; the default holds none."""
