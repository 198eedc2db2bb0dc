"""The SPARQLWrapper client an endpoint uses, opening requests through its own opener:
credentials never follow a redirect to another origin.

urllib's redirect handler copies every header onto the redirected request, wherever it
goes; an endpoint (or whoever controls it) could send a 302 to a host of its choosing
and receive the Authorization header or an API key. Here a redirect to another scheme,
host or port drops the credential headers first.

>>> handler = SameOriginRedirects({"x-api-key"})
>>> old = urllib.request.Request("https://a.example/sparql", headers={"X-Api-Key": "k"})
>>> moved = handler.redirect_request(old, None, 302, "Found", {}, "https://b.example/q")
>>> moved.has_header("X-api-key"), moved.full_url
(False, 'https://b.example/q')
>>> handler.redirect_request(old, None, 302, "Found", {}, "https://a.example/v2").has_header(
...     "X-api-key")
True
"""

from __future__ import annotations

import urllib.error
import urllib.request
from http.client import HTTPResponse
from typing import IO, Any
from urllib.parse import urlsplit

from SPARQLWrapper import SPARQLWrapper
from SPARQLWrapper.SPARQLExceptions import (
    EndPointInternalError,
    EndPointNotFound,
    QueryBadFormed,
    Unauthorized,
    URITooLong,
)

from middleware.kg.backends.blazegraph import BlazegraphFailure
from middleware.kg.backends.blazegraph import parse_error as blazegraph_error
from middleware.kg.backends.virtuoso import VirtuosoFailure, parse_error

_RAISED = {
    400: QueryBadFormed,
    401: Unauthorized,
    404: EndPointNotFound,
    414: URITooLong,
    500: EndPointInternalError,
}


def _origin(url: str) -> tuple[str, str, int | None]:
    parts = urlsplit(url)
    default = {"http": 80, "https": 443}.get(parts.scheme)
    return parts.scheme, (parts.hostname or "").lower(), parts.port or default


class SameOriginRedirects(urllib.request.HTTPRedirectHandler):
    """Follows redirects, dropping the named headers (lower case) and Authorization when
    the new URL is on another origin."""

    def __init__(self, secret_headers: set[str]) -> None:
        self.secret_headers = {name.lower() for name in secret_headers} | {"authorization"}

    def redirect_request(
        self,
        req: urllib.request.Request,
        fp: IO[bytes] | None,
        code: int,
        msg: str,
        headers: Any,
        newurl: str,
    ) -> urllib.request.Request | None:
        new = super().redirect_request(req, fp, code, msg, headers, newurl)  # type: ignore[arg-type]
        if new is not None and _origin(newurl) != _origin(req.full_url):
            for table in (new.headers, new.unredirected_hdrs):
                for name in [n for n in table if n.lower() in self.secret_headers]:
                    del table[name]
        return new


class Forbidden(Exception):
    """HTTP 403, with the first words of the server's body."""

    def __init__(self, body: bytes) -> None:
        said = body[:300].decode("utf-8", "replace").replace("\n", " ").strip()
        super().__init__(said)
        self.said = said


class Client(SPARQLWrapper):
    """SPARQLWrapper with ``opener`` in place of the global ``urlopen``; HTTP errors
    map to the same exceptions SPARQLWrapper raises, except a Virtuoso error body, which
    is a :class:`VirtuosoFailure` (its SQL state says what kind of failure it is), a
    Blazegraph one (Wikidata's query service), a :class:`BlazegraphFailure`, and a 403,
    a :class:`Forbidden` carrying the server's words."""

    def __init__(self, endpoint: str, *, agent: str, secret_headers: set[str]) -> None:
        super().__init__(endpoint, agent=agent)
        self.opener = urllib.request.build_opener(SameOriginRedirects(secret_headers))

    def _query(self) -> tuple[HTTPResponse, str]:
        request = self._createRequest()
        try:
            response = self.opener.open(request, timeout=self.timeout or None)
        except urllib.error.HTTPError as err:
            body = err.read()
            said = parse_error(body)
            if said is not None:
                raise VirtuosoFailure(err.code, said) from err
            failure = blazegraph_error(body)
            if failure is not None:
                raise BlazegraphFailure(err.code, failure) from err
            if err.code == 403:
                raise Forbidden(body) from err
            raised = _RAISED.get(err.code)
            if raised is None:
                raise
            raise raised(body) from err
        return response, self.returnFormat
