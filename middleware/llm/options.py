"""Reading a model's pick out of its reply: lenient parsing, strict validation.

>>> match_option(' "Paris". ', ["Paris", "Lyon"])
0
>>> match_option('{"choice": "Lyon"}', ["Paris", "Lyon"])
1
>>> match_option("Par", ["Paris", "Lyon"]) is None
True
"""

from __future__ import annotations

import json
import unicodedata
from collections.abc import Sequence

from middleware.llm.base import Message
from middleware.llm.prompt_templates import one_line, render


def _norm(text: str) -> str:
    text = unicodedata.normalize("NFKC", text).casefold().strip()
    return text.strip(" \t\"'`.,;:!*").strip()


def _unique(hits: list[int]) -> int | None:
    return hits[0] if len(set(hits)) == 1 else None


def match_option(reply: str, options: Sequence[str]) -> int | None:
    """Index of the option the reply names, or None when none (or several) match."""
    text = reply.strip()
    if text.startswith("{"):
        try:
            data = json.loads(text)
        except json.JSONDecodeError:
            data = None
        if isinstance(data, dict) and isinstance(data.get("choice"), str):
            text = data["choice"]
    shown = [one_line(o) for o in options]
    for forms in (list(options), shown):
        if text in forms:
            return forms.index(text)
    candidates = [text, text.splitlines()[0] if text else text]
    for candidate in candidates:
        wanted = _norm(candidate)
        if not wanted:
            continue
        found = _unique([i for i, o in enumerate(shown) if _norm(o) == wanted])
        if found is not None:
            return found
    return None


def with_options(messages: Sequence[Message], options: Sequence[str]) -> list[Message]:
    """The conversation with the option list added to its last user message."""
    listed = list(messages)
    task = ""
    if listed and listed[-1]["role"] == "user":
        task = listed.pop()["content"].rstrip()
    prompt = render("choose", task=task, options=list(options))
    return listed + prompt.messages


def retry_messages(
    messages: Sequence[Message], reply: str, options: Sequence[str]
) -> list[Message]:
    """The conversation plus the bad reply and one request to pick from the list."""
    prompt = render("choose_retry", reply=one_line(reply)[:200], options=list(options))
    return [*messages, {"role": "assistant", "content": reply}, *prompt.messages]
