"""Caller SPARQL on a local store runs here: in executor processes with no network.

``caller_queries`` (a store's pool, made on first use), ``pool`` (the executors, their
limits and who goes first), ``process`` (an executor's life), ``outlets`` (the only way
out, for an allowlist), ``snapshot`` (an in-memory store made openable), ``spawning``
(the fork server).
"""
