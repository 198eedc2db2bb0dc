"""SparqlEndpoint: any SPARQL 1.1 endpoint through SPARQLWrapper, read-only.

Every query carries a User-Agent and a timeout. 429, 5xx and dropped connections
are retried a bounded number of times with exponential backoff, waiting what a
``Retry-After`` header asks (up to ``max_retry_wait``); other 4xx answers and
timeouts are not retried. Responses are parsed strictly: an HTML page, truncated
JSON or an oversized body ends in an :class:`EndpointError` naming the endpoint.
Virtuoso's habits (``backends/virtuoso.py``) are read from its answers: its SQL-state
errors become clear errors (retried only when transient), a result at its row cap is
marked ``truncated``, and its SELECT-shaped ASK answers become booleans. Blazegraph's
(Wikidata's query service, ``backends/blazegraph.py``) Java traces become
EndpointTimeout (its time limit) or QueryRejected (a malformed query), never retried; a
403 says which User-Agent was refused. A profile's ``time_limit`` caps the wait.
"""

from __future__ import annotations

import http.client
import socket
import time
import urllib.error
from collections.abc import Callable
from typing import Any

import pyoxigraph as ox
from SPARQLWrapper import GET, JSON, POST, TURTLE, SPARQLWrapper
from SPARQLWrapper.SPARQLExceptions import (
    EndPointInternalError,
    EndPointNotFound,
    QueryBadFormed,
    SPARQLWrapperException,
    Unauthorized,
    URITooLong,
)

from middleware.errors import (
    BadRequest,
    EndpointError,
    EndpointTimeout,
    PayloadTooLarge,
    QueryRejected,
    ReadOnlyViolation,
)
from middleware.kg.backends.blazegraph import BlazegraphFailure, endpoint_error
from middleware.kg.backends.endpoint_auth import EndpointAuth
from middleware.kg.backends.sparql_client import Client, Forbidden
from middleware.kg.backends.virtuoso import (
    INCOMPLETE,
    MAX_ROWS_HEADER,
    MESSAGE_HEADER,
    STATE_HEADER,
    VirtuosoError,
    VirtuosoFailure,
    ask_answer,
    row_cap,
)
from middleware.kg.base import QueryResult, cap_result
from middleware.kg.operations import GraphOperations
from middleware.kg.profiles import Profile, load_profile
from middleware.kg.sparql_guard import QueryDataset
from middleware.kg.terms import Term
from middleware.support.retry import Retryable, parse_retry_after, retry_call
from middleware.support.urls import split_credentials
from middleware.support.version import default_user_agent

RETRY_STATUSES = {429, 500, 502, 503, 504}
MAX_GET_URL = 2000
TIME_LIMIT_GRACE = 5.0  # seconds beyond a profile's time_limit for the answer to arrive
MAX_RESPONSE_BYTES = 64 * 1024 * 1024
_RESULT_TYPES = {
    "application/sparql-results+json": ox.QueryResultsFormat.JSON,
    "application/json": ox.QueryResultsFormat.JSON,
    "application/sparql-results+xml": ox.QueryResultsFormat.XML,
    "application/xml": ox.QueryResultsFormat.XML,
    "text/xml": ox.QueryResultsFormat.XML,
    "text/csv": ox.QueryResultsFormat.CSV,
    "text/tab-separated-values": ox.QueryResultsFormat.TSV,
}
_GRAPH_TYPES = {
    "text/turtle": ox.RdfFormat.TURTLE,
    "application/x-turtle": ox.RdfFormat.TURTLE,
    "application/n-triples": ox.RdfFormat.N_TRIPLES,
    "text/plain": ox.RdfFormat.N_TRIPLES,
    "application/rdf+xml": ox.RdfFormat.RDF_XML,
    "application/ld+json": ox.RdfFormat.JSON_LD,
    "text/rdf+n3": ox.RdfFormat.N3,
    "text/n3": ox.RdfFormat.N3,
}


class SparqlEndpoint(GraphOperations):
    """A remote SPARQL 1.1 query endpoint.

    >>> ep = SparqlEndpoint("http://localhost:7878/query", profile="generic")
    >>> ep.name
    'localhost:7878'
    """

    def __init__(
        self,
        url: str,
        *,
        profile: str | Profile | None = None,
        name: str | None = None,
        timeout: float = 30.0,
        retries: int = 3,
        backoff: float = 0.5,
        max_retry_wait: float = 30.0,
        user_agent: str | None = None,
        sleep: Callable[[float], None] = time.sleep,
        auth: EndpointAuth | None = None,
    ) -> None:
        bare, user, password = split_credentials(url)
        if not bare.startswith(("http://", "https://")):
            raise BadRequest(f"endpoint URL must start with http:// or https://, got {bare!r}")
        self.url = bare  # credentials in the URL become Basic auth, never shown
        self.auth = auth or EndpointAuth()
        if user is not None and not self.auth.sends_credentials:
            self.auth = EndpointAuth(user=user, password=password)
        self.profile = (
            profile if isinstance(profile, Profile) else load_profile(profile or "generic")
        )
        self.name = name or bare.split("://", 1)[1].split("/", 1)[0]
        self.default_timeout = timeout
        self.retries = max(0, retries)
        self.backoff = backoff
        self.max_retry_wait = max_retry_wait
        user_agent = default_user_agent() if user_agent is None else user_agent
        if not user_agent.strip():
            raise BadRequest(
                "user_agent must not be empty",
                hint="public endpoints (Wikidata's) refuse requests without one; name the "
                "tool, its version and a contact",
            )
        self.user_agent = user_agent
        self._sleep = sleep
        # the profile's row cap until the server announces its own
        self.server_row_cap: int | None = self.profile.row_cap
        super().__init__()

    def _execute(
        self,
        sparql: str,
        timeout: float,
        max_rows: int | None = None,
        dataset: QueryDataset | None = None,
    ) -> QueryResult:
        if self.profile.time_limit is not None:
            # the server answers by its own limit: waiting longer only delays the error
            timeout = min(timeout, self.profile.time_limit + TIME_LIMIT_GRACE)
        return retry_call(
            lambda: cap_result(self._attempt(sparql, timeout, dataset), max_rows),
            retries=self.retries,
            backoff=self.backoff,
            max_wait=self.max_retry_wait,
            too_long=self._asked_too_long,
            sleep=self._sleep,
        )

    def _retry(self, reason: str, retry_after: float | None = None) -> Retryable:
        """A failure worth another try; past the last one, an EndpointError saying why."""
        return Retryable(
            lambda attempts: EndpointError(
                f"endpoint {self.url} failed after {attempts} attempts: {reason}",
                hint="the endpoint may be overloaded; try later or raise the retries setting",
                endpoint=self.url,
            ),
            reason=reason,
            retry_after=retry_after,
        )

    def _asked_too_long(self, wait: float, reason: str) -> EndpointError:
        return EndpointError(
            f"endpoint {self.url} asked to retry after {wait:g} s ({reason})",
            hint=f"that is longer than max_retry_wait ({self.max_retry_wait:g} s)",
            endpoint=self.url,
        )

    def _client(self, sparql: str, timeout: float) -> SPARQLWrapper:
        credentials = self.auth.http_headers()
        client = Client(self.url, agent=self.user_agent, secret_headers=set(credentials))
        for header, value in credentials.items():
            client.addCustomHttpHeader(header, value)
        client.setQuery(sparql)
        if client.isSparqlUpdateRequest():
            raise ReadOnlyViolation("refusing to send a SPARQL update to an endpoint")
        graph_query = client.queryType in ("CONSTRUCT", "DESCRIBE")
        client.setReturnFormat(TURTLE if graph_query else JSON)
        client.setTimeout(max(1, round(timeout)))
        long_query = len(self.url) + 3 * len(sparql) > MAX_GET_URL
        client.setMethod(POST if long_query else GET)
        return client

    def _attempt(
        self, sparql: str, timeout: float, dataset: QueryDataset | None = None
    ) -> QueryResult:
        client = self._client(sparql, timeout)
        for graph in dataset.default_graphs if dataset else ():
            client.addDefaultGraph(graph)
        for graph in dataset.named_graphs if dataset else ():
            client.addNamedGraph(graph)
        deadline = time.monotonic() + timeout
        try:
            response = client.query().response
            content_type = (
                (response.headers.get("Content-Type") or "").split(";")[0].strip().lower()
            )
            announced = row_cap(response.headers.get(MAX_ROWS_HEADER))
            self.server_row_cap = announced or self.server_row_cap
            if (response.headers.get(STATE_HEADER) or "").strip() == INCOMPLETE:
                raise self._incomplete(response.headers.get(MESSAGE_HEADER) or "")
            body = self._read(response, deadline, timeout)
        except VirtuosoFailure as failure:
            raise self._virtuoso_error(failure.error) from None
        except BlazegraphFailure as failure:
            raise endpoint_error(failure.error, self.url, self.profile.time_limit) from None
        except Forbidden as err:
            raise EndpointError(
                f"endpoint {self.url} answered HTTP 403 Forbidden: {err.said[:200]}",
                hint=f"the server refused the request (User-Agent sent: {self.user_agent!r}); "
                "some services, Wikidata's among them, refuse generic agents: set user_agent "
                "to name your tool, its version and a contact (docs/settings.md)",
                endpoint=self.url,
            ) from err
        except urllib.error.HTTPError as err:
            retry_after = parse_retry_after(err.headers.get("Retry-After") if err.headers else None)
            if err.code in RETRY_STATUSES:
                raise self._retry(f"HTTP {err.code} {err.reason}", retry_after) from None
            raise EndpointError(
                f"endpoint {self.url} answered HTTP {err.code} {err.reason}", endpoint=self.url
            ) from err
        except EndPointInternalError as err:
            raise self._retry(f"HTTP 500: {_short(err)}") from None
        except (QueryBadFormed, URITooLong) as err:
            raise QueryRejected(
                f"endpoint {self.url} rejected the query: {_short(err)}", endpoint=self.url
            ) from err
        except Unauthorized as err:
            raise self._unauthorized() from err
        except EndPointNotFound as err:
            raise EndpointError(f"endpoint {self.url}: {_short(err)}", endpoint=self.url) from err
        except SPARQLWrapperException as err:
            raise EndpointError(f"endpoint {self.url}: {_short(err)}", endpoint=self.url) from err
        except TimeoutError as err:
            raise self._timeout(timeout) from err
        except urllib.error.URLError as err:
            if isinstance(err.reason, TimeoutError | socket.timeout):
                raise self._timeout(timeout) from err
            if isinstance(err.reason, ConnectionRefusedError | socket.gaierror):
                raise self._unreachable(err.reason) from None
            raise self._retry(f"cannot connect: {err.reason}") from None
        except ConnectionRefusedError as err:
            raise self._unreachable(err) from None
        except (ConnectionError, http.client.HTTPException) as err:
            raise self._retry(f"connection dropped: {err!r}") from None
        result = self._parse(body, content_type, client.queryType or "SELECT")
        cap = announced if result.kind == "select" else self.server_row_cap
        if cap is not None and max(len(result.rows), len(result.triples)) >= cap:
            result.truncated = True  # the server stopped at its cap: there may be more
        return result

    def _unreachable(self, reason: OSError) -> EndpointError:
        """Nothing listens there, or the host name is unknown: no retry can help."""
        refused = isinstance(reason, ConnectionRefusedError)
        return EndpointError(
            f"endpoint {self.url}: "
            + ("connection refused" if refused else f"host not found ({reason})"),
            hint="check the URL and that the endpoint is running"
            if refused
            else "check the host name in the URL",
            endpoint=self.url,
        )

    def _incomplete(self, message: str) -> EndpointTimeout:
        said = message.split("Activity:")[0].strip()
        return EndpointTimeout(
            f"endpoint {self.url} stopped the query at its time limit and sent incomplete "
            f"results (Virtuoso {INCOMPLETE}: {said[:200]})",
            hint="the server's time limit (Virtuoso: MaxQueryExecutionTime) cut it; narrow the "
            "query or add a LIMIT",
            endpoint=self.url,
        )

    def _virtuoso_error(self, error: VirtuosoError) -> Exception:
        kind = error.kind
        if kind == "transient":
            return self._retry(str(error))
        if kind == "timeout":
            return EndpointTimeout(
                f"endpoint {self.url} gave up on the query: {error}",
                hint="the server's own time limit (Virtuoso: MaxQueryExecutionTime) ended it; "
                "narrow the query or add a LIMIT",
                endpoint=self.url,
            )
        if kind == "rejected":
            return QueryRejected(
                f"endpoint {self.url} rejected the query: {error}",
                hint="Virtuoso cannot run this query as written (its SPARQL dialect, or an "
                "error in evaluating it); rewrite it",
                endpoint=self.url,
            )
        return EndpointError(
            f"endpoint {self.url} failed: {error}",
            hint="an error inside the server; its log says more",
            endpoint=self.url,
        )

    def _unauthorized(self) -> EndpointError:
        sent = "the credentials sent were refused" if self.auth.sends_credentials else "none sent"
        return EndpointError(
            f"endpoint {self.url} answered HTTP 401 Unauthorized ({sent})",
            hint="set endpoint_user and endpoint_password, endpoint_token or endpoint_headers "
            "for this source (docs/settings.md)",
            endpoint=self.url,
        )

    def _timeout(self, timeout: float) -> EndpointTimeout:
        return EndpointTimeout(
            f"endpoint {self.url} did not answer within {timeout:g} s",
            hint="simplify the query, or raise the timeout setting (--timeout, KGMW_TIMEOUT)",
            endpoint=self.url,
        )

    def _read(self, response: Any, deadline: float, timeout: float) -> bytes:
        chunks: list[bytes] = []
        size = 0
        # read1 returns whatever has arrived, so a trickling body still meets the deadline
        read = getattr(response, "read1", response.read)
        while True:
            if time.monotonic() > deadline:
                raise self._timeout(timeout)
            chunk = read(65536)
            if not chunk:
                return b"".join(chunks)
            size += len(chunk)
            if size > MAX_RESPONSE_BYTES:
                raise EndpointError(
                    f"endpoint {self.url} sent more than {MAX_RESPONSE_BYTES // 2**20} MiB",
                    hint="add a LIMIT to the query",
                    endpoint=self.url,
                )
            chunks.append(chunk)

    def _parse(self, body: bytes, content_type: str, query_type: str) -> QueryResult:
        try:
            if query_type in ("CONSTRUCT", "DESCRIBE"):
                fmt = _GRAPH_TYPES.get(content_type)
                if fmt is None:
                    raise self._unexpected(content_type, body)
                triples = [(q.subject, q.predicate, q.object) for q in ox.parse(body, fmt)]
                return QueryResult("graph", triples=triples)
            result_fmt = _RESULT_TYPES.get(content_type)
            if result_fmt is None:
                raise self._unexpected(content_type, body)
            parsed = ox.parse_query_results(body, result_fmt)
            if isinstance(parsed, ox.QueryBoolean):
                return QueryResult("ask", boolean=bool(parsed))
            variables = [v.value for v in parsed.variables]
            rows: list[dict[str, Term]] = []
            for solution in parsed:
                rows.append(
                    {name: solution[name] for name in variables if solution[name] is not None}
                )
            if query_type == "ASK":
                first = next((term.value for row in rows for term in row.values()), None)
                answer = ask_answer(variables, len(rows), first)
                if answer is not None:
                    return QueryResult("ask", boolean=answer)
            return QueryResult("select", variables=variables, rows=rows)
        except SyntaxError as err:
            raise EndpointError(
                f"endpoint {self.url} sent malformed or truncated results ({content_type}): {err}",
                endpoint=self.url,
            ) from err
        except MemoryError as err:  # the parser's buffer cap: one value of over 16 MiB
            raise PayloadTooLarge(
                f"endpoint {self.url} sent a value too large to read ({_short(err)})",
                hint="select fewer or shorter values",
            ) from err

    def _unexpected(self, content_type: str, body: bytes) -> EndpointError:
        preview = body[:200].decode("utf-8", "replace").replace("\n", " ").strip()
        kind = (
            "an HTML page"
            if "html" in content_type or preview.lower().startswith("<!doctype html")
            else (f"content of type {content_type or 'unknown'!r}")
        )
        return EndpointError(
            f"endpoint {self.url} sent {kind} instead of SPARQL results: {preview[:120]!r}",
            hint="check that the URL is the SPARQL query endpoint",
            endpoint=self.url,
        )


def _short(err: Exception) -> str:
    text = str(err).replace("\\n", " ").replace("\n", " ")
    return text if len(text) < 300 else text[:297] + "..."
