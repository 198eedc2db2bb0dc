"""Adapters that put kg-middleware inside other tools' ecosystems (agent hosts, frameworks)."""
