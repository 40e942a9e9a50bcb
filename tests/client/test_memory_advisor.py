from __future__ import annotations

import pytest

from toolrelay.client import (
    HIGHEST_PRECEDENCE,
    MEMORY_ADVISOR_ORDER,
    ChatClient,
    MessageChatMemoryAdvisor,
)
from toolrelay.client._memory_advisor import answer_message
from toolrelay.exceptions import ConfigurationError
from toolrelay.memory import MessageWindowChatMemory
from toolrelay.messages import (
    AssistantMessage,
    ChatResponse,
    Generation,
    SystemMessage,
    ToolCall,
    UserMessage,
)
from toolrelay.testing import ScriptedModel


def client_with(
    memory: MessageChatMemoryAdvisor, *answers: str
) -> tuple[ChatClient, ScriptedModel]:
    model = ScriptedModel(list(answers))
    client = ChatClient.builder(model).default_system("sys").default_advisors(memory).build()
    return client, model


def test_the_default_order_is_outside_the_tool_loop() -> None:
    advisor = MessageChatMemoryAdvisor(MessageWindowChatMemory())
    assert advisor.order == MEMORY_ADVISOR_ORDER == HIGHEST_PRECEDENCE + 200


async def test_a_missing_conversation_id_names_the_parameter() -> None:
    client, model = client_with(MessageChatMemoryAdvisor(MessageWindowChatMemory()), "x")
    with pytest.raises(ConfigurationError, match="'conversation_id'"):
        await client.prompt("hi").acall()
    assert model.call_count == 0


async def test_conversations_are_kept_apart_and_prepended_after_the_system_text() -> None:
    memory = MessageWindowChatMemory()
    client, model = client_with(MessageChatMemoryAdvisor(memory), "a1", "b1", "a2")
    await client.prompt("a: first").conversation("a").acall()
    await client.prompt("b: first").conversation("b").acall()
    await client.prompt("a: second").conversation("a").acall()
    assert model.prompts[2].messages == (
        SystemMessage(text="sys"),
        UserMessage(text="a: first"),
        AssistantMessage(text="a1"),
        UserMessage(text="a: second"),
    )
    assert await memory.get("b") == [UserMessage(text="b: first"), AssistantMessage(text="b1")]


async def test_a_default_conversation_id_is_used_when_the_request_names_none() -> None:
    memory = MessageWindowChatMemory()
    client, _ = client_with(MessageChatMemoryAdvisor(memory, conversation_id="main"), "ok")
    await client.prompt("hi").acall()
    assert await memory.get("main") == [UserMessage(text="hi"), AssistantMessage(text="ok")]


async def test_a_streamed_answer_is_stored_whole() -> None:
    memory = MessageWindowChatMemory()
    client, _ = client_with(MessageChatMemoryAdvisor(memory), "a rather long answer")
    [c async for c in client.prompt("hi").conversation("c").stream().content()]
    assert await memory.get("c") == [
        UserMessage(text="hi"),
        AssistantMessage(text="a rather long answer"),
    ]


def test_answer_message_prefers_the_generation_with_tool_calls() -> None:
    calls = AssistantMessage(tool_calls=(ToolCall(id="1", name="t"),))
    response = ChatResponse(
        generations=(
            Generation(message=AssistantMessage(text="plain")),
            Generation(message=calls),
        )
    )
    assert answer_message(response) == calls
    assert answer_message(ChatResponse()) is None
    assert answer_message(ChatResponse(generations=response.generations[:1])) == AssistantMessage(
        text="plain"
    )
