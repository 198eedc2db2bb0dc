"""The page's files: served from the package, the vendored library as pinned, the CSP."""

from __future__ import annotations

import base64
import hashlib
import re
from pathlib import Path

import httpx

from middleware.server import create_app
from tests.server.conftest import LiveServer, settings

STATIC = Path(__file__).parents[2] / "middleware" / "server" / "static"
VENDOR = STATIC / "vendor"


def _pinned() -> dict[str, str]:
    """File name to sha256, from the table in vendor/README.md."""
    rows = re.findall(
        r"^\| `([\w.-]+\.js)` \| [\w-]+ \| [\d.]+ \| .* \| `([0-9a-f]{64})` \|$",
        (VENDOR / "README.md").read_text(),
        re.M,
    )
    return dict(rows)


def test_vendored_files_are_the_pinned_files() -> None:
    pinned = _pinned()
    assert set(pinned) == {p.name for p in VENDOR.glob("*.js")}
    assert {"cytoscape.min.js", "cytoscape-fcose.js"} <= set(pinned)
    for name, digest in pinned.items():
        assert hashlib.sha256((VENDOR / name).read_bytes()).hexdigest() == digest, name
        licence = VENDOR / (name.removesuffix(".min.js").removesuffix(".js") + ".LICENSE")
        assert "Permission is hereby granted" in licence.read_text(), licence


def test_every_vendored_file_is_served_and_loaded(scripted_server: LiveServer) -> None:
    page = httpx.get(f"{scripted_server.url}/")
    for name, digest in _pinned().items():
        response = httpx.get(f"{scripted_server.url}/static/vendor/{name}")
        assert response.status_code == 200, name
        assert response.headers["content-type"].startswith("text/javascript")
        assert hashlib.sha256(response.content).hexdigest() == digest
        assert f'<script src="/static/vendor/{name}"' in page.text


def test_page_policy_allows_only_the_apps_own_scripts(scripted_server: LiveServer) -> None:
    policy = httpx.get(f"{scripted_server.url}/").headers["content-security-policy"]
    assert "script-src 'self';" in policy and "unsafe" not in policy


def test_policy_allows_only_the_stylesheet_cytoscape_inserts(scripted_server: LiveServer) -> None:
    """Cytoscape adds one fixed <style> to the page; its hash, and nothing else inline."""
    script = (VENDOR / "cytoscape.min.js").read_text()
    assert "position: relative; }" in script  # the rule whose text is hashed below
    rule = ".__________cytoscape_container { position: relative; }"
    digest = base64.b64encode(hashlib.sha256(rule.encode()).digest()).decode()
    policy = httpx.get(f"{scripted_server.url}/").headers["content-security-policy"]
    assert f"style-src 'self' 'sha256-{digest}';" in policy


def test_only_the_page_files_are_served(scripted_server: LiveServer) -> None:
    for name in (
        "other.js",
        "vendor/other.js",
        "vendor/README.md",
        "../app.py",
        "..%2Fapp.py",
        "vendor/../../app.py",
        "index.html",
    ):
        assert httpx.get(f"{scripted_server.url}/static/{name}").status_code == 404, name


def test_static_files_are_package_data() -> None:
    """Every file the page loads is inside the package folder (a wheel carries it)."""
    app = create_app(settings())
    page = app.test_client().get("/").get_data(as_text=True)
    for src in re.findall(r'(?:src|href)="/static/([^"]+)"', page):
        assert (STATIC / src).is_file(), src
        assert app.test_client().get(f"/static/{src}").status_code == 200, src


def test_page_files_are_revalidated_not_sent_again(scripted_server: LiveServer) -> None:
    url = f"{scripted_server.url}/static/vendor/cytoscape.min.js"
    first = httpx.get(url)
    tag = first.headers["etag"]
    again = httpx.get(url, headers={"If-None-Match": tag})
    assert again.status_code == 304 and again.content == b""
    assert httpx.get(url, headers={"If-None-Match": '"other"'}).status_code == 200


def test_the_page_has_room_for_an_answer_the_graph_does_not_hold() -> None:
    """Without a browser: the page's places for the guess and the support, hidden until
    an answer fills them, and its script sets text only (graph and answer text is
    untrusted). test_browser.py shows them filled."""
    page = (STATIC / "index.html").read_text()
    for tag in ('<p id="guess" hidden>', '<div id="support-box" hidden>', '<ol id="support">'):
        assert tag in page, tag
    script = (STATIC / "app.js").read_text()
    assert "The graph does not hold the answer." in script
    assert "Best guess (not supported by the graph)" in script
    assert "innerHTML" not in script and "insertAdjacentHTML" not in script
