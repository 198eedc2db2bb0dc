"""The chat request's ``messages``: the question (last user message) and earlier turns.

>>> question, turns = conversation([
...     {"role": "system", "content": "Be brief."},
...     {"role": "user", "content": "Which film did Kate Winslet star in?"},
...     {"role": "assistant", "content": "Titanic"},
...     {"role": "user", "content": [{"type": "text", "text": "and who directed it?"}]},
... ])
>>> question, turns
('and who directed it?', [Turn(question='Which film did Kate Winslet star in?', answer='Titanic')])
"""

from __future__ import annotations

from typing import Any

from middleware.errors import BadRequest
from middleware.text.follow_ups import Turn


def conversation(messages: Any) -> tuple[str, list[Turn]]:
    """The last user message's text and the turns before it (each user message with
    the assistant reply that followed it); a malformed list is a BadRequest."""
    if not isinstance(messages, list) or not messages:
        raise BadRequest("'messages' must be a non-empty list of chat messages")
    for index, message in enumerate(messages):
        if not isinstance(message, dict) or not isinstance(message.get("role"), str):
            raise BadRequest(
                f"messages[{index}] must be an object with a string 'role'",
                hint='e.g. {"role": "user", "content": "Who directed Titanic?"}',
            )
    users = [i for i, message in enumerate(messages) if message["role"] == "user"]
    if not users:
        raise BadRequest("no message with role 'user'", hint="put the question in a user message")
    last = users[-1]
    question = _text(messages[last], last)
    if not question.strip():
        raise BadRequest("the last user message has no text content")
    turns: list[Turn] = []
    pending: str | None = None
    for index, message in enumerate(messages[:last]):
        if message["role"] == "user":
            if pending is not None:
                turns.append(Turn(pending))
            pending = _text(message, index)
        elif message["role"] == "assistant" and pending is not None:
            turns.append(Turn(pending, _text(message, index)))
            pending = None
    if pending is not None:
        turns.append(Turn(pending))
    return question, turns


def _text(message: dict[str, Any], index: int) -> str:
    """A message's text: string content, or its text parts joined; no content is ''."""
    content = message.get("content")
    if content is None:
        return ""
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        texts = [
            part.get("text")
            for part in content
            if isinstance(part, dict) and part.get("type") == "text"
        ]
        return " ".join(text for text in texts if isinstance(text, str))
    raise BadRequest(
        f"messages[{index}].content must be a string or a list of content parts",
        hint='e.g. "content": "Who directed Titanic?"',
    )
