"""A local stand-in for the Wikidata Query Service (WDQS) over a small Wikidata-shaped
store, answering as WDQS does for the behaviours the middleware depends on.

What it covers:

- ``/sparql`` by GET (``?query=``) and POST (a form with ``query``, or a
  ``application/sparql-query`` body); SELECT and ASK answer SPARQL JSON results
  (``application/sparql-results+json;charset=utf-8``), CONSTRUCT and DESCRIBE Turtle.
- The User-Agent policy: an empty agent, or a library's default one (Python-urllib,
  python-requests, a bare SPARQLWrapper, curl, Java, Go) is refused with 403 and
  WDQS's words; every agent seen is kept in ``agents``.
- Throttling: ``throttle(allowed, refused, retry_after)`` lets ``allowed`` more requests
  through, then answers the next ``refused`` with 429 and ``Retry-After`` (counted, not
  timed, so tests never depend on the clock).
- The time limit (60 s on WDQS): ``time_limit`` seconds here, checked while the results
  are read; past it the answer is WDQS's HTTP 500 with a ``java.util.concurrent.
  TimeoutException`` trace. ``time_limit = 0`` times out every query.
- Syntax errors: HTTP 400 with a ``MalformedQueryException`` trace.
- The label service, ``SERVICE wikibase:label { bd:serviceParam wikibase:language
  "[AUTO_LANGUAGE],en" . }``: the block is removed and each projected ``?xLabel``,
  ``?xDescription`` and ``?xAltLabel`` is filled after the query from ``rdfs:label``,
  ``schema:description`` and ``skos:altLabel`` in the first language that has one
  (``[AUTO_LANGUAGE]`` is ``uselang``, default ``en``). An entity with no label in those
  languages gets its id (``Q4416090``), as WDQS gives it. Unlike WDQS, the filled values
  cannot be used inside the query (FILTER, ORDER BY); explicit ``bd:serviceParam``
  forms and the ``mwapi`` service are not emulated.
"""

from __future__ import annotations

import json
import re
import threading
import time
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import TypeVar
from urllib.parse import parse_qs, urlsplit

import pyoxigraph as ox

RDFS_LABEL = ox.NamedNode("http://www.w3.org/2000/01/rdf-schema#label")
ALT_LABEL = ox.NamedNode("http://www.w3.org/2004/02/skos/core#altLabel")
DESCRIPTION = ox.NamedNode("http://schema.org/description")
PREFIXES = """PREFIX wd: <http://www.wikidata.org/entity/>
PREFIX wdt: <http://www.wikidata.org/prop/direct/>
PREFIX wds: <http://www.wikidata.org/entity/statement/>
PREFIX p: <http://www.wikidata.org/prop/>
PREFIX ps: <http://www.wikidata.org/prop/statement/>
PREFIX pq: <http://www.wikidata.org/prop/qualifier/>
PREFIX wikibase: <http://wikiba.se/ontology#>
PREFIX bd: <http://www.bigdata.com/rdf#>
PREFIX rdfs: <http://www.w3.org/2000/01/rdf-schema#>
PREFIX skos: <http://www.w3.org/2004/02/skos/core#>
PREFIX schema: <http://schema.org/>
"""  # WDQS declares these for every query
_LABEL_SERVICE = re.compile(
    r"SERVICE\s+(?:wikibase:label|<http://wikiba\.se/ontology#label>)\s*\{\s*"
    r"(?:bd:serviceParam|<http://www\.bigdata\.com/rdf#serviceParam>)\s+"
    r"(?:wikibase:language|<http://wikiba\.se/ontology#language>)\s+\"([^\"]*)\"\s*\.?\s*\}",
    re.IGNORECASE,
)
_GENERIC_AGENTS = re.compile(
    r"^(python-urllib|python-requests|sparqlwrapper|curl|java|go-http-client|okhttp|wget)\b",
    re.IGNORECASE,
)
POLICY_403 = (
    "Please set a user-agent and respect our robot policy "
    "https://meta.wikimedia.org/wiki/User-Agent_policy\n"
)
TIMEOUT_BODY = (
    "SPARQL-QUERY: queryStr={query}\n"
    "java.util.concurrent.ExecutionException: java.util.concurrent.TimeoutException\n"
    "\tat java.util.concurrent.FutureTask.report(FutureTask.java:122)\n"
    "\tat java.util.concurrent.FutureTask.get(FutureTask.java:206)\n"
    "\tat com.bigdata.rdf.sail.webapp.BigdataServlet.submitApiTask(BigdataServlet.java:292)\n"
    "Caused by: java.util.concurrent.TimeoutException\n"
)
MALFORMED_BODY = (
    "SPARQL-QUERY: queryStr={query}\n"
    "java.util.concurrent.ExecutionException: org.openrdf.query.MalformedQueryException: "
    "{message}\n"
    "\tat java.util.concurrent.FutureTask.report(FutureTask.java:122)\n"
    "Caused by: org.openrdf.query.MalformedQueryException: {message}\n"
)


class QueryTimedOut(Exception):
    """The query ran past the replay's time limit."""


@dataclass
class WdqsReplay:
    """The replay server's state; tests change ``time_limit`` and call ``throttle``."""

    store: ox.Store
    url: str = ""
    time_limit: float = 60.0
    agents: list[str] = field(default_factory=list)
    requests: int = 0
    _allowed: int | None = None
    _refused: int = 0
    _retry_after: int = 0
    _lock: threading.Lock = field(default_factory=threading.Lock)

    def throttle(self, *, allowed: int = 0, refused: int = 1, retry_after: int = 1) -> None:
        """Let ``allowed`` requests through, then refuse ``refused`` with 429."""
        with self._lock:
            self._allowed, self._refused, self._retry_after = allowed, refused, retry_after

    def reset(self) -> None:
        with self._lock:
            self._allowed, self._refused = None, 0
            self.time_limit = 60.0
            self.agents.clear()
            self.requests = 0

    def _throttled(self) -> int | None:
        """Retry-After seconds when this request is refused, else None."""
        with self._lock:
            self.requests += 1
            if self._allowed is None:
                return None
            if self._allowed > 0:
                self._allowed -= 1
                return None
            if self._refused > 0:
                self._refused -= 1
                return self._retry_after
            self._allowed = None
            return None


def _term_json(term: ox.NamedNode | ox.BlankNode | ox.Literal | ox.Triple) -> dict[str, str]:
    if isinstance(term, ox.NamedNode):
        return {"type": "uri", "value": term.value}
    if isinstance(term, ox.BlankNode):
        return {"type": "bnode", "value": term.value}
    if isinstance(term, ox.Literal):
        out = {"type": "literal", "value": term.value}
        if term.language:
            out["xml:lang"] = term.language
        elif term.datatype.value != "http://www.w3.org/2001/XMLSchema#string":
            out["datatype"] = term.datatype.value
        return out
    raise TypeError(f"no JSON form for {term!r}")


def _languages(spec: str, uselang: str) -> list[str]:
    langs = [part.strip() for part in spec.replace("[AUTO_LANGUAGE]", uselang).split(",")]
    return [lang for lang in langs if lang]


def _in_language(
    store: ox.Store, entity: ox.NamedNode, predicate: ox.NamedNode, langs: list[str]
) -> list[str]:
    values = [q.object for q in store.quads_for_pattern(entity, predicate, None)]
    for lang in langs:
        found = sorted(v.value for v in values if isinstance(v, ox.Literal) and v.language == lang)
        if found:
            return found
    return []


def _fill_labels(
    state: WdqsReplay, variables: list[str], rows: list[dict[str, object]], langs: list[str]
) -> None:
    """What the label service binds: ?xLabel, ?xDescription, ?xAltLabel for bound ?x."""
    for name in variables:
        for suffix, predicate in (
            ("AltLabel", ALT_LABEL),
            ("Label", RDFS_LABEL),
            ("Description", DESCRIPTION),
        ):
            base = name[: -len(suffix)] if name.endswith(suffix) else ""
            if not base or base not in variables:
                continue
            for row in rows:
                entity = row.get(base)
                if isinstance(entity, ox.Literal) and suffix == "Label":
                    row[name] = ox.Literal(entity.value)
                if not isinstance(entity, ox.NamedNode):
                    continue
                found = _in_language(state.store, entity, predicate, langs)
                if found:
                    lang = next(
                        lang
                        for lang in langs
                        if _in_language(state.store, entity, predicate, [lang])
                    )
                    row[name] = ox.Literal(", ".join(found), language=lang)
                elif suffix == "Label":
                    row[name] = ox.Literal(entity.value.rsplit("/", 1)[-1])
            break


def _select_json(
    state: WdqsReplay, solutions: ox.QuerySolutions, langs: list[str] | None, deadline: float
) -> bytes:
    variables = [v.value for v in solutions.variables]
    rows: list[dict[str, object]] = []
    for solution in _until(solutions, deadline):
        rows.append({name: solution[name] for name in variables if solution[name] is not None})
    if langs is not None:
        _fill_labels(state, variables, rows, langs)
    bindings = [
        {name: _term_json(value) for name, value in row.items()}  # type: ignore[arg-type]
        for row in rows
    ]
    return json.dumps({"head": {"vars": variables}, "results": {"bindings": bindings}}).encode()


T = TypeVar("T")


def _until(items: Iterable[T], deadline: float) -> Iterator[T]:
    for item in items:
        if time.monotonic() >= deadline:
            raise QueryTimedOut
        yield item
    if time.monotonic() >= deadline:
        raise QueryTimedOut


def answer(state: WdqsReplay, query: str, uselang: str) -> tuple[int, str, bytes]:
    """Status, content type and body of WDQS's answer to ``query``."""
    langs: list[str] | None = None
    match = _LABEL_SERVICE.search(query)
    if match:
        langs = _languages(match.group(1), uselang)
        query = query[: match.start()] + query[match.end() :]
    deadline = time.monotonic() + state.time_limit
    try:
        result = state.store.query(PREFIXES + query)
        if isinstance(result, ox.QueryBoolean):
            if time.monotonic() >= deadline:
                raise QueryTimedOut
            body = json.dumps({"head": {}, "boolean": bool(result)}).encode()
            return 200, "application/sparql-results+json;charset=utf-8", body
        if isinstance(result, ox.QuerySolutions):
            body = _select_json(state, result, langs, deadline)
            return 200, "application/sparql-results+json;charset=utf-8", body
        triples = list(_until(result, deadline))
        graph = ox.serialize(triples, format=ox.RdfFormat.TURTLE) or b""
        return 200, "text/turtle;charset=utf-8", graph
    except SyntaxError as err:
        said = str(err).replace("\n", " ")
        text = MALFORMED_BODY.format(query=query, message=f'Encountered "{said}"')
        return 400, "text/plain;charset=utf-8", text.encode()
    except QueryTimedOut:
        return 500, "text/plain;charset=utf-8", TIMEOUT_BODY.format(query=query).encode()


class _Handler(BaseHTTPRequestHandler):
    server: _Server

    def log_message(self, format: str, *args: object) -> None:
        """Quiet: tests read the state, not a log."""

    def do_GET(self) -> None:
        self._serve(parse_qs(urlsplit(self.path).query))

    def do_POST(self) -> None:
        size = int(self.headers.get("Content-Length") or 0)
        body = self.rfile.read(size).decode("utf-8")
        params = parse_qs(urlsplit(self.path).query)
        if (self.headers.get("Content-Type") or "").startswith("application/sparql-query"):
            params["query"] = [body]
        else:
            params.update(parse_qs(body))
        self._serve(params)

    def _serve(self, params: dict[str, list[str]]) -> None:
        state = self.server.state
        if urlsplit(self.path).path != "/sparql":
            return self._send(404, "text/plain", b"Not Found\n")
        agent = self.headers.get("User-Agent") or ""
        state.agents.append(agent)
        if not agent.strip() or _GENERIC_AGENTS.match(agent.strip()):
            return self._send(403, "text/plain;charset=utf-8", POLICY_403.encode())
        wait = state._throttled()
        if wait is not None:
            body = f"Too Many Requests - Please retry in {wait} seconds.\n".encode()
            return self._send(429, "text/plain", body, {"Retry-After": str(wait)})
        query = (params.get("query") or [""])[0]
        if not query:
            return self._send(400, "text/plain", b"Missing query parameter\n")
        uselang = (params.get("uselang") or ["en"])[0]
        status, content_type, body = answer(state, query, uselang)
        self._send(status, content_type, body)

    def _send(
        self, status: int, content_type: str, body: bytes, headers: dict[str, str] | None = None
    ) -> None:
        self.send_response(status)
        self.send_header("Content-Type", content_type)
        self.send_header("Content-Length", str(len(body)))
        self.send_header("Server", "nginx/1.18.0")
        for name, value in (headers or {}).items():
            self.send_header(name, value)
        self.end_headers()
        self.wfile.write(body)


class _Server(ThreadingHTTPServer):
    daemon_threads = True

    def __init__(self, state: WdqsReplay) -> None:
        super().__init__(("127.0.0.1", 0), _Handler)
        self.state = state


def start_replay(data: Path) -> tuple[WdqsReplay, _Server]:
    """A replay server over ``data`` (Turtle) on a free port, serving in a thread."""
    store = ox.Store()
    store.load(path=str(data), format=ox.RdfFormat.TURTLE)
    state = WdqsReplay(store)
    server = _Server(state)
    state.url = f"http://127.0.0.1:{server.server_address[1]}/sparql"
    threading.Thread(target=server.serve_forever, daemon=True).start()
    return state, server
