"""The question page's files: which ones ``/static/`` serves, as what, under which policy."""

from __future__ import annotations

# The files under static/ that /static/ serves (vendor/README.md says where each came from).
PAGE_FILES = (
    "app.js",
    "graph.js",
    "app.css",
    "vendor/cytoscape.min.js",
    "vendor/layout-base.js",
    "vendor/cose-base.js",
    "vendor/cytoscape-fcose.js",
)
PAGE_TYPES = {
    "html": "text/html; charset=utf-8",
    "js": "text/javascript; charset=utf-8",
    "css": "text/css; charset=utf-8",
}
# Only the app's own files; the one inline style allowed is the fixed rule Cytoscape puts
# in the page (".__________cytoscape_container { position: relative; }"), by its hash.
PAGE_POLICY = (
    "default-src 'self'; script-src 'self'; "
    "style-src 'self' 'sha256-pgvDUBa4IjFA2yuSJ2cqcyxmNYJMborsd0ORcRv9vw8='; "
    "img-src 'self' data:"
)
