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


def _pinned_sha256() -> str:
    found = re.search(
        r"`cytoscape\.min\.js` \| cytoscape \| ([\d.]+) .*`([0-9a-f]{64})`",
        (VENDOR / "README.md").read_text(),
    )
    assert found, "vendor/README.md names the version and sha256 of cytoscape.min.js"
    return found.group(2)


def test_vendored_cytoscape_is_the_pinned_file() -> None:
    data = (VENDOR / "cytoscape.min.js").read_bytes()
    assert hashlib.sha256(data).hexdigest() == _pinned_sha256()
    assert "Permission is hereby granted" in (VENDOR / "cytoscape.LICENSE").read_text()


def test_vendored_script_is_served_with_the_page_policy(scripted_server: LiveServer) -> None:
    response = httpx.get(f"{scripted_server.url}/static/vendor/cytoscape.min.js")
    assert response.status_code == 200
    assert response.headers["content-type"].startswith("text/javascript")
    assert hashlib.sha256(response.content).hexdigest() == _pinned_sha256()
    page = httpx.get(f"{scripted_server.url}/")
    assert '<script src="/static/vendor/cytoscape.min.js"' in page.text
    policy = page.headers["content-security-policy"]
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
