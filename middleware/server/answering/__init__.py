"""Answering over HTTP: ``/v1/answer`` (JSON and server-sent events), the
OpenAI-compatible chat endpoint, kept chat answers, evidence drawn as a graph."""
