"""The Flask service: grounded answers, OpenAI-compatible chat, a read-only SPARQL proxy.

``create_app(settings)`` builds it; ``kgmw serve`` runs it (docs/server.md).
"""

from middleware.server.app import create_app

__all__ = ["create_app"]
