"""Settings of the chat route: the Sources section, follow-up questions, kept answers."""

from __future__ import annotations

from dataclasses import dataclass

from middleware.config.fields import setting


@dataclass(frozen=True)
class ChatSettings:
    """What /v1/chat/completions adds for OpenAI clients, and how long answers are kept."""

    chat_sources: bool = setting(
        True,
        "Append a Sources section to chat completion text: the evidence, one short line "
        "each, and the answer's id for GET /v1/answers/{id} (for OpenAI clients, such as "
        "LangChain's, that drop the extra kgmw field).",
    )
    chat_sources_max: int = setting(
        10, "Most evidence lines the Sources section lists.", minimum=1, maximum=100
    )
    chat_follow_ups: bool = setting(
        True,
        "Resolve a follow-up question ('and who directed it?') with the entities of the "
        "earlier turns of the messages the client sends: the last answer's, else its "
        "question's.",
    )
    answers_ttl: float = setting(
        3600.0,
        "Seconds GET /v1/answers/{id} keeps a chat completion's full answer (on disk in "
        "the cache folder, one file per host, or in server_state_url's Redis); 0 keeps none.",
        minimum=0,
    )
    answers_max_mb: float = setting(
        64.0,
        "Space the kept answers may take, in MB (on disk, or in all in Redis); past it the "
        "oldest go first.",
        minimum=0.01,
    )
