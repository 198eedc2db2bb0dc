"""LangChain's ChatOpenAI against the service, as docs/integrations.md shows it."""

from __future__ import annotations

from langchain_openai import ChatOpenAI

from middleware.llm.scripted import ScriptedLLM
from middleware.server import create_app
from tests.integrations.offline import QUESTION, offline_settings, sample_graph
from tests.server.conftest import LiveServer


def test_chat_openai_gets_the_services_grounded_answer() -> None:
    app = create_app(offline_settings(), llm=ScriptedLLM(), graphs={"sample": sample_graph()})
    server = LiveServer(app)
    try:
        chat = ChatOpenAI(
            base_url=f"{server.url}/v1", api_key="unused", model="kgmw-plan", max_retries=0
        )
        reply = chat.invoke(QUESTION)
    finally:
        server.stop()
    assert isinstance(reply.content, str)
    assert "Titanic" in reply.content and "James Cameron" in reply.content
