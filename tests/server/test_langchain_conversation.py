"""A LangChain ``ChatOpenAI`` conversation of three turns against the service.

LangChain keeps only the message text, so each turn's evidence must survive in the
Sources section and behind GET /v1/answers/{id}; the follow-up ("and who directed
it?") must carry Titanic from the earlier turns into its evidence.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Any
from urllib.parse import unquote

import httpx
import pytest
from flask import Flask
from langchain_core.messages import AIMessage, BaseMessage, HumanMessage
from langchain_openai import ChatOpenAI

from middleware.kg.backends.local import LocalStore
from middleware.llm.base import LLM
from middleware.llm.local import EmbeddedLLM, repacking_crashes
from middleware.server import create_app
from tests.server.conftest import LiveServer, settings
from tests.server.conversation_script import conversation_script

KEY = "conversation-key"
TURNS = (
    "Which 1997 film starred Kate Winslet and Leonardo DiCaprio?",
    "and who directed it?",
    "What else did he direct?",
)
DIRECTED = ("Titanic", "directed_by", "James Cameron")
KEPT = re.compile(r"\(full answer: GET /v1/answers/(chatcmpl-kgmw-[0-9a-f]{32})\)$")


def facts(answer: dict[str, Any]) -> set[tuple[str, str, str]]:
    """Every evidence triple as (subject, relation, object) local names."""
    triples = [hop["triple"] for path in answer["evidence"]["paths"] for hop in path["hops"]]
    triples += answer["evidence"]["triples"]

    def local(term: dict[str, str]) -> str:
        return unquote(term["value"].rsplit("/", 1)[-1])

    return {(local(t["subject"]), local(t["predicate"]), local(t["object"])) for t in triples}


def converse(server: LiveServer) -> list[tuple[str, dict[str, Any]]]:
    """Three turns, the last one streamed: each reply's text and its kept answer."""
    chat = ChatOpenAI(
        base_url=f"{server.url}/v1", api_key=KEY, model="kgmw-rok", max_retries=0, timeout=600
    )
    history: list[BaseMessage] = []
    turns = []
    for number, question in enumerate(TURNS):
        history.append(HumanMessage(question))
        if number < len(TURNS) - 1:
            reply = chat.invoke(history)
            answer_id = reply.response_metadata["id"]
        else:
            chunks = list(chat.stream(history))
            reply = AIMessage("".join(str(chunk.content) for chunk in chunks))
            answer_id = None
        text = str(reply.content)
        found = KEPT.search(text)
        assert found, f"turn {number + 1} has no full-answer line: {text!r}"
        assert answer_id in (None, found.group(1))
        kept = httpx.get(
            f"{server.url}/v1/answers/{found.group(1)}",
            headers={"Authorization": f"Bearer {KEY}"},
        )
        assert kept.status_code == 200, kept.text
        turns.append((text, kept.json()))
        history.append(AIMessage(text))
    return turns


def check(turns: list[tuple[str, dict[str, Any]]]) -> None:
    for text, answer in turns:
        assert answer["evidence"]["paths"] or answer["evidence"]["triples"], answer["warnings"]
        assert "\n\nSources:\n[1] " in text
    follow_text, follow = turns[1]
    assert "Titanic" in follow["question"], follow.get("conversation")
    assert "Titanic" in [c["label"] for c in follow["conversation"]["carried"]]
    assert DIRECTED in facts(follow)
    assert "Titanic —directed by→ James Cameron" in follow_text


def start(serve: Callable[[Flask], LiveServer], graph: LocalStore, llm: LLM) -> LiveServer:
    return serve(create_app(settings(server_api_keys=KEY), llm=llm, graphs={"sample": graph}))


def test_a_langchain_conversation_keeps_its_evidence_scripted(
    serve: Callable[[Flask], LiveServer], sample_graph: LocalStore
) -> None:
    turns = converse(start(serve, sample_graph, conversation_script()))
    check(turns)
    assert turns[0][1]["answer"] == "Titanic"
    assert turns[2][1]["conversation"]["question"] == "What else did James Cameron direct?"


@pytest.mark.slow
@pytest.mark.xfail(
    not repacking_crashes(),
    reason="written against the model's unpacked weights (AVX-512 machines); with the "
    "weights repacked, RoK's filter reply drops the fact the second turn needs "
    "(docs/llm.md)",
    strict=False,
)
def test_a_langchain_conversation_keeps_its_evidence_embedded(
    serve: Callable[[Flask], LiveServer], sample_graph: LocalStore, embedded_llm: EmbeddedLLM
) -> None:
    """The same conversation answered by the embedded model."""
    check(converse(start(serve, sample_graph, embedded_llm)))
