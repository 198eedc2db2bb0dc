"""A scripted LLM for RoK that reads the question it is given, so a conversation's
turns get different evidence (and a follow-up without its entity gets none)."""

from __future__ import annotations

import re

from middleware.llm.scripted import ScriptedLLM

NAMES = ("Kate Winslet", "Leonardo DiCaprio", "Titanic", "James Cameron")


def _question(prompt: str) -> str:
    asked = re.findall(r"^Question: (.*)$", prompt, flags=re.MULTILINE)
    return asked[-1] if asked else ""


def _entities(prompt: str) -> str:
    question = _question(prompt)
    return "; ".join(name for name in NAMES if name.lower() in question.lower()) or "none"


def _facts(prompt: str) -> str:
    question = _question(prompt).lower()
    wanted = "directed by" if "direct" in question else "starred"
    facts = re.findall(r"^\s*(\d+)\. (.*)$", prompt.split("Facts:")[-1], flags=re.MULTILINE)
    picked = [number for number, fact in facts if wanted in fact]
    return ", ".join(picked[:4]) or "1"


def _answer(prompt: str) -> str:
    question = _question(prompt).lower()
    if "else" in question:
        return "Avatar"
    return "James Cameron" if "direct" in question else "Titanic"


def conversation_script() -> ScriptedLLM:
    return ScriptedLLM(
        [
            ("Reasoning:$", "Let me think about the films named."),
            ("Key entities:$", _entities),
            ("Useful facts:$", _facts),
            ("Answer:$", _answer),
            ("Choice:$", "1"),
        ],
        default="I am not sure.",
    )
