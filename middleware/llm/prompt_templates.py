"""Prompt templates: one YAML file per method step under ``middleware/llm/prompts/``.

A file holds ``system`` text, few-shot ``examples`` (user/assistant pairs), the final
``user`` text, and optional ``stop`` strings and ``max_tokens``. Fields are written
``{{name}}``; ``{{name|graph}}`` renders a list of graph facts inside a delimited block
that graph text cannot close or imitate, ``{{name|lines}}`` one item per line and
``{{name|numbered}}`` a numbered list.

Chat models get the template as messages. Base models get one completion-style text
(``flatten()``): system text, then each example's user text followed by its answer,
then the final user text, which ends with a cue the model continues.

>>> t = PromptTemplate.parse("demo", {"user": "Facts:\\n{{facts|graph}}\\nQ: {{q}}\\nA:"})
>>> p = t.render(facts=["Heat | directed by | Michael Mann"], q="Who directed Heat?")
>>> print(p.messages[-1]["content"])
Facts:
<graph>
Heat | directed by | Michael Mann
</graph>
Q: Who directed Heat?
A:
"""

from __future__ import annotations

import functools
import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from importlib import resources
from typing import Any

import yaml

from middleware.errors import BadRequest, ConfigError, NotFound
from middleware.llm.base import Message

FIELD = re.compile(r"\{\{\s*(\w+)\s*(?:\|\s*(\w+)\s*)?\}\}")
GRAPH_OPEN, GRAPH_CLOSE = "<graph>", "</graph>"
_CONTROL = re.compile(r"[\x00-\x08\x0b-\x1f\x7f]")
_FENCE = re.compile(r"</?\s*graph\s*>", re.IGNORECASE)


def one_line(text: str) -> str:
    """Graph text as a single line: no newlines, control characters or fence tags."""
    flat = _CONTROL.sub(" ", str(text).replace("\r", " ").replace("\n", " "))
    return _FENCE.sub(lambda m: m.group(0).replace("<", "(").replace(">", ")"), flat).strip()


def _items(value: Any) -> list[str]:
    if isinstance(value, str):
        return [value]
    if isinstance(value, Sequence):
        return [str(v) for v in value]
    raise BadRequest(f"a list field needs a list of strings, got {type(value).__name__}")


def _graph(value: Any) -> str:
    lines = [one_line(v) for v in _items(value)]
    body = "\n".join(line for line in lines if line) or "(nothing found)"
    return f"{GRAPH_OPEN}\n{body}\n{GRAPH_CLOSE}"


FILTERS: dict[str, Callable[[Any], str]] = {
    "graph": _graph,
    "lines": lambda v: "\n".join(one_line(x) for x in _items(v)),
    "numbered": lambda v: "\n".join(f"{i}. {one_line(x)}" for i, x in enumerate(_items(v), 1)),
}


def fill(text: str, values: Mapping[str, Any], *, where: str) -> str:
    """Replace every ``{{field}}``; a missing field is an error naming the template."""

    def substitute(match: re.Match[str]) -> str:
        name, filt = match.group(1), match.group(2)
        if name not in values:
            raise BadRequest(f"prompt {where!r} needs field {name!r}")
        value = values[name]
        if filt is None:
            return str(value)
        if filt not in FILTERS:
            raise ConfigError(f"prompt {where!r}: unknown filter {filt!r}")
        return FILTERS[filt](value)

    return FIELD.sub(substitute, text)


@dataclass(frozen=True)
class Prompt:
    """A rendered prompt: chat messages plus the stop strings and length it asks for."""

    name: str
    messages: list[Message]
    stop: tuple[str, ...] = ()
    max_tokens: int | None = None


@dataclass(frozen=True)
class PromptTemplate:
    name: str
    user: str
    system: str = ""
    examples: tuple[tuple[str, str], ...] = ()
    stop: tuple[str, ...] = ()
    max_tokens: int | None = None
    fields: frozenset[str] = field(default=frozenset())

    @classmethod
    def parse(cls, name: str, data: Mapping[str, Any]) -> PromptTemplate:
        if not isinstance(data, Mapping) or not isinstance(data.get("user"), str):
            raise ConfigError(f"prompt {name!r} needs a 'user' text")
        examples = []
        for i, ex in enumerate(data.get("examples") or []):
            if not (isinstance(ex, Mapping) and {"user", "assistant"} <= set(ex)):
                raise ConfigError(f"prompt {name!r}: example {i + 1} needs 'user' and 'assistant'")
            examples.append((str(ex["user"]).rstrip(), str(ex["assistant"]).strip()))
        stop = data.get("stop") or []
        max_tokens = data.get("max_tokens")
        user = str(data["user"]).rstrip()
        system = str(data.get("system") or "").strip()
        return cls(
            name=name,
            user=user,
            system=system,
            examples=tuple(examples),
            stop=tuple(str(s) for s in stop),
            max_tokens=int(max_tokens) if max_tokens is not None else None,
            fields=frozenset(m.group(1) for m in FIELD.finditer(system + "\n" + user)),
        )

    def render(self, **values: Any) -> Prompt:
        """Messages with every field filled in."""
        messages: list[Message] = []
        if self.system:
            messages.append(
                {"role": "system", "content": fill(self.system, values, where=self.name)}
            )
        for question, answer in self.examples:
            messages.append({"role": "user", "content": question})
            messages.append({"role": "assistant", "content": answer})
        messages.append(
            {"role": "user", "content": fill(self.user, values, where=self.name).strip()}
        )
        return Prompt(self.name, messages, self.stop, self.max_tokens)


@functools.cache
def load_template(name: str) -> PromptTemplate:
    """The packaged template ``middleware/llm/prompts/NAME.yaml``."""
    if not re.fullmatch(r"[a-z0-9_]+", name):
        raise NotFound(f"no prompt template named {name!r}")
    resource = resources.files("middleware.llm").joinpath("prompts", f"{name}.yaml")
    try:
        text = resource.read_text(encoding="utf-8")
    except FileNotFoundError:
        raise NotFound(f"no prompt template named {name!r}") from None
    try:
        data = yaml.safe_load(text)
    except yaml.YAMLError as err:
        raise ConfigError(f"prompt template {name!r} is not valid YAML: {err}") from err
    return PromptTemplate.parse(name, data)


def render(name: str, **values: Any) -> Prompt:
    """Shorthand for ``load_template(name).render(**values)``."""
    return load_template(name).render(**values)


def flatten(messages: Sequence[Message]) -> str:
    """One completion-style text for base models.

    >>> flatten([{"role": "system", "content": "Answer briefly."},
    ...          {"role": "user", "content": "Q: 2+2?\\nA:"}, {"role": "assistant", "content": "4"},
    ...          {"role": "user", "content": "Q: 3+3?\\nA:"}])
    'Answer briefly.\\n\\nQ: 2+2?\\nA: 4\\n\\nQ: 3+3?\\nA:'
    """
    blocks: list[str] = []
    pending: str | None = None
    for message in messages:
        content = message["content"]
        if message["role"] == "system":
            blocks.append(content.strip())
        elif message["role"] == "user":
            if pending is not None:
                blocks.append(pending)
            pending = content.rstrip()
        else:
            reply = content.strip()
            blocks.append(f"{pending} {reply}" if pending is not None else reply)
            pending = None
    if pending is not None:
        blocks.append(pending)
    return "\n\n".join(b for b in blocks if b)
