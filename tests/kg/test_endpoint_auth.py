"""Endpoint credentials: HTTP Basic, Bearer and custom headers, from the config file or
the environment, and never shown in an error, a name or a settings listing."""

from __future__ import annotations

import base64
from collections.abc import Iterator

import pytest

from middleware.config import Settings
from middleware.errors import ConfigError, EndpointError
from middleware.kg.backends.endpoint import SparqlEndpoint
from middleware.kg.open import open_graph
from tests.auth_proxy import AuthProxy, auth_proxy, redirector
from tests.conftest import free_port

SECRET = "s3cret-Pa55"
ASK = "ASK { ?s ?p ?o }"


def _basic(user: str, password: str) -> str:
    return "Basic " + base64.b64encode(f"{user}:{password}".encode()).decode()


@pytest.fixture
def basic_proxy(oxigraph_server: str) -> Iterator[AuthProxy]:
    with auth_proxy(oxigraph_server, {"Authorization": _basic("alice", SECRET)}) as proxy:
        yield proxy


def _open(**values: object) -> SparqlEndpoint:
    graph = open_graph(Settings.build({"retries": 0, "timeout": 10, **values}))
    assert isinstance(graph, SparqlEndpoint)
    return graph


def _no_secret(err: EndpointError | ConfigError, secret: str = SECRET) -> None:
    assert secret not in str(err) and secret not in (err.hint or "")
    assert secret not in repr(err.to_dict())


def test_password_in_url_is_not_echoed_in_errors() -> None:
    url = f"http://alice:{SECRET}@127.0.0.1:{free_port()}/query"  # nothing listens there
    graph = SparqlEndpoint(url, retries=0)
    assert SECRET not in graph.name and SECRET not in graph.url and "alice" not in graph.name
    with pytest.raises(EndpointError) as caught:
        graph.query(ASK)
    _no_secret(caught.value)
    assert "127.0.0.1" in str(caught.value)


def test_password_in_url_is_sent_as_basic_auth(basic_proxy: AuthProxy) -> None:
    url = basic_proxy.url.replace("http://", f"http://alice:{SECRET}@")
    assert SparqlEndpoint(url, retries=0).query(ASK).boolean is True


def test_basic_auth_from_settings(basic_proxy: AuthProxy) -> None:
    graph = _open(endpoint=basic_proxy.url, endpoint_user="alice", endpoint_password=SECRET)
    assert graph.query(ASK).boolean is True
    wrong = _open(endpoint=basic_proxy.url, endpoint_user="alice", endpoint_password="nope-x1")
    with pytest.raises(EndpointError, match="401") as caught:
        wrong.query(ASK)
    _no_secret(caught.value, "nope-x1")


def test_bearer_token_from_the_environment(
    oxigraph_server: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("SPARQL_TOKEN", SECRET)
    with auth_proxy(oxigraph_server, {"Authorization": f"Bearer {SECRET}"}) as proxy:
        graph = _open(endpoint=proxy.url, endpoint_token="env:SPARQL_TOKEN")
        assert graph.query(ASK).boolean is True
        assert proxy.seen[-1]["Authorization"] == f"Bearer {SECRET}"


def test_missing_environment_variable_is_named(oxigraph_server: str) -> None:
    with pytest.raises(ConfigError, match="NO_SUCH_VARIABLE_X") as caught:
        _open(endpoint=oxigraph_server, endpoint_token="env:NO_SUCH_VARIABLE_X")
    _no_secret(caught.value)


def test_custom_headers(oxigraph_server: str) -> None:
    required = {"X-Api-Key": SECRET, "X-Team": "films"}
    with auth_proxy(oxigraph_server, required) as proxy:
        graph = _open(endpoint=proxy.url, endpoint_headers=f"X-Api-Key: {SECRET}\nX-Team: films")
        assert graph.query("SELECT ?s WHERE { ?s ?p ?o } LIMIT 1").rows
        with pytest.raises(EndpointError, match="401") as caught:
            _open(endpoint=proxy.url, endpoint_headers="X-Team: films").query(ASK)
        _no_secret(caught.value)


def test_malformed_header_setting_is_refused_without_its_value(oxigraph_server: str) -> None:
    with pytest.raises(ConfigError, match="endpoint_headers") as caught:
        _open(endpoint=oxigraph_server, endpoint_headers=f"no colon {SECRET}")
    _no_secret(caught.value)


def test_settings_listing_masks_credentials() -> None:
    settings = Settings.build(
        {
            "endpoint": f"https://alice:{SECRET}@example.org/sparql",
            "endpoint_password": SECRET,
            "endpoint_token": SECRET,
            "endpoint_headers": f"X-Api-Key: {SECRET}",
        }
    )
    shown = settings.as_dict(mask_secrets=True)
    assert SECRET not in repr(shown)
    assert shown["endpoint"] == "https://example.org/sparql"


def test_general_credentials_never_follow_a_named_source() -> None:
    settings = Settings.build(
        {"endpoint": "https://a.example/sparql", "endpoint_token": SECRET},
        sources={
            "other": {"endpoint": "https://b.example/sparql"},
            "own": {"endpoint": "https://c.example/sparql", "endpoint_user": "bob"},
        },
    )
    other = settings.for_source("other")
    assert other.endpoint_token is None and other.endpoint_user is None
    own = settings.for_source("own")
    assert own.endpoint_user == "bob" and own.endpoint_token is None


def test_credentials_do_not_follow_a_redirect_to_another_origin(oxigraph_server: str) -> None:
    with (
        auth_proxy(oxigraph_server, {}) as elsewhere,
        redirector(elsewhere.url) as endpoint,
    ):
        graph = _open(
            endpoint=endpoint.url, endpoint_token=SECRET, endpoint_headers=f"X-Api-Key: {SECRET}"
        )
        assert graph.query(ASK).boolean is True  # the redirect is followed
        assert endpoint.seen[-1]["Authorization"] == f"Bearer {SECRET}"
        assert SECRET not in repr(elsewhere.seen)  # but the credentials stay behind
