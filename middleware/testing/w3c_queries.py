"""The W3C SPARQL 1.1 query evaluation tests, run on the engine and through ``/sparql``.

For each test (``w3c_manifest.query_cases``) the data is loaded into a pyoxigraph
store; the query then runs (a) on the engine itself, ``Store.query`` with the query
file's IRI as base, and (b) through the service: ``create_app`` over that store with
``sparql_base_iri`` set to the same IRI, the query POSTed as
``application/sparql-query`` once per result format (JSON, XML and TSV results;
N-Triples, Turtle and RDF/XML graphs). Both results are compared with the expected one
(``w3c_results.same``). With ``on_disk`` the store is written to a folder first, so
``/sparql`` runs the query in an executor process, as it does for a store on disk.
What the proxy must hold: every test the engine passes, it passes too.
"""

from __future__ import annotations

import tempfile
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path

import pyoxigraph as ox

from middleware.config import Settings
from middleware.kg.backends.local import LocalStore
from middleware.server import create_app
from middleware.server.context import STATE_KEY
from middleware.testing import w3c_results
from middleware.testing.w3c_manifest import QueryCase, query_cases

MEDIA_TYPES = {  # each asked of /sparql in turn, by the kind of the expected result
    "solutions": (
        "application/sparql-results+json",
        "application/sparql-results+xml",
        "text/tab-separated-values",
    ),
    "boolean": ("application/sparql-results+json", "application/sparql-results+xml"),
    "graph": ("application/n-triples", "text/turtle", "application/rdf+xml"),
    "csv": ("text/csv",),
}


@dataclass(frozen=True)
class Verdict:
    """One test's result on the engine and through the proxy: "pass", or what went wrong."""

    case: QueryCase
    engine: str
    proxy: str
    identical: bool = False  # the proxy's result is the engine's, spelled the same


@dataclass
class Report:
    """The suites' figures; ``regressions`` must stay empty."""

    verdicts: list[Verdict] = field(default_factory=list)
    skipped: list[QueryCase] = field(default_factory=list)

    @property
    def engine_passed(self) -> list[Verdict]:
        return [v for v in self.verdicts if v.engine == "pass"]

    @property
    def proxy_passed(self) -> list[Verdict]:
        return [v for v in self.verdicts if v.proxy == "pass"]

    @property
    def engine_failures(self) -> dict[str, str]:
        return {v.case.id: v.engine for v in self.verdicts if v.engine != "pass"}

    @property
    def regressions(self) -> list[Verdict]:
        """Tests the engine passes and the proxy does not."""
        return [v for v in self.engine_passed if v.proxy != "pass"]

    def summary(self) -> dict[str, object]:
        return {
            "tests": len(self.verdicts) + len(self.skipped),
            "run": len(self.verdicts),
            "skipped": {c.id: c.skip for c in self.skipped},
            "passed_by_engine": len(self.engine_passed),
            "passed_through_proxy": len(self.proxy_passed),
            "proxy_result_identical_to_engine": sum(v.identical for v in self.verdicts),
            "engine_passes_proxy_does_not": {v.case.id: v.proxy for v in self.regressions},
            "proxy_passes_engine_does_not": [
                v.case.id for v in self.proxy_passed if v.engine != "pass"
            ],
            "failed_by_engine": self.engine_failures,
        }


def run_suites(
    root: Path,
    *,
    on_disk: bool = False,
    only: Callable[[QueryCase], bool] | None = None,
    progress: Callable[[Verdict], None] | None = None,
) -> Report:
    """Run every query evaluation test under ``root`` (a checkout of w3c/rdf-tests)."""
    report = Report()
    for case in query_cases(root):
        if only is not None and not only(case):
            continue
        if case.skip:
            report.skipped.append(case)
            continue
        verdict = run_case(case, on_disk=on_disk)
        report.verdicts.append(verdict)
        if progress is not None:
            progress(verdict)
    return report


def run_case(case: QueryCase, *, on_disk: bool = False) -> Verdict:
    try:
        store = load(case)
        want = w3c_results.expected(case.result, case.result_iri, case.kind)
    except (OSError, SyntaxError, ValueError) as err:
        failed = f"setup: {type(err).__name__}: {err}"
        return Verdict(case, failed, failed)
    query = case.query.read_text("utf-8")
    direct, engine = _judge(want, lambda: on_engine(case, store, query))
    proxy, identical = "pass", direct is not None
    with serving(case, store, on_disk=on_disk) as ask:
        for media in MEDIA_TYPES[want.kind]:
            served, verdict = _judge(want, lambda: ask(query, media))  # noqa: B023
            if verdict != "pass" and proxy == "pass":
                proxy = f"as {media}: {verdict}"
            identical = identical and served is not None
            identical = identical and w3c_results.same(direct, served, strict=True)  # type: ignore[arg-type]
    return Verdict(case, engine, proxy, identical)


def load(case: QueryCase) -> ox.Store:
    """The test's dataset: ``qt:data`` in the default graph, ``qt:graphData`` named."""
    store = ox.Store()
    for path, iri in case.data:
        store.load(path=str(path), base_iri=iri)
    for path, iri, name in case.graphs:
        store.load(path=str(path), base_iri=iri, to_graph=ox.NamedNode(name))
    return store


def on_engine(case: QueryCase, store: ox.Store, query: str) -> w3c_results.Outcome:
    result = store.query(query, base_iri=case.query_iri)
    if case.kind == "csv":
        if not isinstance(result, ox.QuerySolutions):
            raise ValueError("a CSV result format test whose query is not a SELECT")
        text = result.serialize(format=ox.QueryResultsFormat.CSV) or b""
        return w3c_results.csv_outcome(text.decode("utf-8"))
    return w3c_results.engine(result)


@contextmanager
def serving(
    case: QueryCase, store: ox.Store, *, on_disk: bool = False
) -> Iterator[Callable[[str, str], w3c_results.Outcome]]:
    """The service over ``store``, as a function that POSTs a query to its ``/sparql``
    asking for a media type and returns the outcome (a RuntimeError for any status
    but 200)."""
    with tempfile.TemporaryDirectory(prefix="kgmw-w3c-") as folder:
        graph = _on_disk(store, Path(folder)) if on_disk else LocalStore(store=store, name="w3c")
        settings = Settings.load(
            config_path=None,
            env={},
            overrides={"progress": False, "cache_dir": folder, "sparql_base_iri": case.query_iri},
        )
        app = create_app(settings, graphs={"w3c": graph})

        def ask(query: str, media: str) -> w3c_results.Outcome:
            response = app.test_client().post(
                "/sparql",
                data=query.encode("utf-8"),
                headers={"Content-Type": "application/sparql-query", "Accept": media},
            )
            body = response.get_data()
            if response.status_code != 200:
                raise RuntimeError(f"{response.status_code}: {body[:300].decode(errors='replace')}")
            return w3c_results.response(body, response.content_type or "")

        try:
            yield ask
        finally:
            app.config[STATE_KEY].close()  # the executors, when on disk
            graph.close()


def _on_disk(store: ox.Store, folder: Path) -> LocalStore:
    dump = folder / "data.nq"
    store.dump(str(dump), ox.RdfFormat.N_QUADS)
    writer = LocalStore(folder / "store", name="w3c")
    writer.load([dump])
    writer.close()
    return LocalStore(folder / "store", name="w3c", read_only=True)


def _judge(
    want: w3c_results.Outcome, run: Callable[[], w3c_results.Outcome]
) -> tuple[w3c_results.Outcome | None, str]:
    """The outcome of ``run`` and the verdict on it: "pass", or what went wrong."""
    try:
        got = run()
    except Exception as err:  # the engine's or the service's refusal: the test failed
        return None, f"error: {type(err).__name__}: {str(err)[:300]}"
    if w3c_results.same(want, got):
        return got, "pass"
    return got, f"different: expected {want.describe()}, got {got.describe()}"


__all__ = ["Report", "Verdict", "query_cases", "run_case", "run_suites"]
