from __future__ import annotations

from collections.abc import AsyncIterator
from typing import Any

import pytest

from toolrelay.client import (
    HIGHEST_PRECEDENCE,
    MEMORY_ADVISOR_ORDER,
    TOOL_CALLING_ADVISOR_ORDER,
    AdvisorChain,
    BaseAdvisor,
    ChatClient,
    ChatClientRequest,
    ChatClientResponse,
    ToolCallingAdvisor,
)
from toolrelay.exceptions import ConfigurationError, ToolsNotSupportedError
from toolrelay.messages import UserMessage
from toolrelay.prompt import ChatOptions, Prompt
from toolrelay.testing import RecordingAdvisor, ScriptedModel, text_response, tool_call_response
from toolrelay.tools import tool


@tool
def ping(host: str) -> str:
    """Ping a host.

    Args:
        host: The host name.
    """
    return f"{host} is up"


def request(text: str = "hi", **context: Any) -> ChatClientRequest:
    return ChatClientRequest(prompt=Prompt(messages=(UserMessage(text=text),)), context=context)


def test_default_orders_put_memory_outside_the_tool_loop() -> None:
    assert HIGHEST_PRECEDENCE < MEMORY_ADVISOR_ORDER < TOOL_CALLING_ADVISOR_ORDER
    assert MEMORY_ADVISOR_ORDER == HIGHEST_PRECEDENCE + 200
    assert TOOL_CALLING_ADVISOR_ORDER == HIGHEST_PRECEDENCE + 300


async def test_advisors_run_by_order_lowest_outermost_and_ties_keep_their_order() -> None:
    log: list[str] = []
    advisors = [
        RecordingAdvisor("c", 30, log),
        RecordingAdvisor("a", 10, log),
        RecordingAdvisor("b1", 20, log),
        RecordingAdvisor("b2", 20, log),
    ]
    chain = AdvisorChain.for_model(ScriptedModel(["ok"]), advisors)
    assert [a.name for a in chain.advisors] == ["a", "b1", "b2", "c"]
    response = await chain.next_call(request())
    assert response.chat_response.text == "ok"
    assert log == ["a", "b1", "b2", "c"]


async def test_the_last_link_calls_the_model_and_keeps_the_context() -> None:
    model = ScriptedModel([text_response("ok", usage=(3, 1))])
    chain = AdvisorChain.for_model(model, [])
    response = await chain.next_call(request("question", conversation_id="c1"))
    assert response.chat_response.text == "ok"
    assert response.context == {"conversation_id": "c1"}
    assert model.prompts[0].messages == (UserMessage(text="question"),)


async def test_the_last_link_refuses_tools_for_a_model_without_tool_support() -> None:
    model = ScriptedModel(["never"], supports_tools=False)
    chain = AdvisorChain.for_model(model, [])
    prompt = Prompt(messages=(UserMessage(text="hi"),), options=ChatOptions(tool_names=("ping",)))
    with pytest.raises(ToolsNotSupportedError, match="ping"):
        await chain.next_call(ChatClientRequest(prompt=prompt))
    with pytest.raises(ToolsNotSupportedError):
        [c async for c in chain.next_stream(ChatClientRequest(prompt=prompt))]
    assert model.call_count == 0


def test_copy_excluding_keeps_only_the_advisors_after_it() -> None:
    a, b, c = RecordingAdvisor("a", 1), RecordingAdvisor("b", 2), RecordingAdvisor("c", 3)
    chain = AdvisorChain.for_model(ScriptedModel([]), [c, a, b])
    assert chain.copy(excluding=a).advisors == (b, c)
    assert chain.copy(excluding=c).advisors == ()
    with pytest.raises(ConfigurationError, match="'x'"):
        chain.copy(excluding=RecordingAdvisor("x", 0))


async def test_a_chain_can_be_called_again_which_is_how_a_loop_repeats() -> None:
    inner = RecordingAdvisor("inner", 5)
    chain = AdvisorChain.for_model(ScriptedModel(["one", "two"]), [inner])
    first = await chain.next_call(request("1"))
    second = await chain.next_call(request("2"))
    assert (first.chat_response.text, second.chat_response.text) == ("one", "two")
    assert [r.prompt.messages[0] for r in inner.requests] == [
        UserMessage(text="1"),
        UserMessage(text="2"),
    ]


async def test_recording_advisors_around_and_inside_the_tool_loop() -> None:
    """The loop calls ``copy(excluding=self)``: advisors inside it run once per model call,
    advisors outside once per turn."""
    log: list[str] = []
    outer = RecordingAdvisor("outer", TOOL_CALLING_ADVISOR_ORDER - 1, log)
    inner = RecordingAdvisor("inner", TOOL_CALLING_ADVISOR_ORDER + 1, log)
    model = ScriptedModel(
        [
            tool_call_response(("ping", {"host": "a"})),
            tool_call_response(("ping", {"host": "b"})),
            "both up",
        ]
    )
    client = ChatClient.builder(model).default_tools(ping).default_advisors(inner, outer).build()
    assert client.prompt("ping a and b").call().content() == "both up"
    assert log == ["outer", "inner", "inner", "inner"]
    assert len(outer.responses) == 1
    assert [r.chat_response.has_tool_calls for r in inner.responses] == [True, True, False]
    # The inner advisor sees each round's growing history.
    assert [len(r.prompt.messages) for r in inner.requests] == [1, 3, 5]


async def test_streams_pass_through_stream_advisors_in_order() -> None:
    log: list[str] = []
    first, second = RecordingAdvisor("first", 1, log), RecordingAdvisor("second", 2, log)
    chain = AdvisorChain.for_model(ScriptedModel(["streamed text"]), [second, first])
    chunks = [c async for c in chain.next_stream(request())]
    assert log == ["first", "second"]
    assert "".join(c.chat_response.text or "" for c in chunks) == "streamed text"
    assert len(first.responses) == len(chunks) > 1


class CallOnly:
    name = "call-only"
    order = 1

    def __init__(self) -> None:
        self.calls = 0

    async def advise_call(
        self, request: ChatClientRequest, chain: AdvisorChain
    ) -> ChatClientResponse:
        self.calls += 1
        return await chain.next_call(request)


async def test_an_advisor_without_advise_stream_is_skipped_when_streaming() -> None:
    advisor = CallOnly()
    chain = AdvisorChain.for_model(ScriptedModel(["x", "y"]), [advisor])
    [c async for c in chain.next_stream(request())]
    assert advisor.calls == 0
    await chain.next_call(request())
    assert advisor.calls == 1


class Tagging(BaseAdvisor):
    def __init__(self) -> None:
        super().__init__(order=7)
        self.seen: list[str | None] = []

    async def before(self, request: ChatClientRequest, chain: AdvisorChain) -> ChatClientRequest:
        return request.with_messages([UserMessage(text="rewritten")]).with_context(tag="t")

    async def after(self, response: ChatClientResponse, chain: AdvisorChain) -> ChatClientResponse:
        self.seen.append(response.chat_response.text)
        return response.with_context(after=True)


async def test_base_advisor_runs_before_and_after_for_calls() -> None:
    model = ScriptedModel(["answer"])
    advisor = Tagging()
    response = await AdvisorChain.for_model(model, [advisor]).next_call(request())
    assert model.prompts[0].messages == (UserMessage(text="rewritten"),)
    assert response.context == {"tag": "t", "after": True}
    assert advisor.seen == ["answer"]
    assert advisor.name == "Tagging"
    assert "order=7" in repr(advisor)


async def test_base_advisor_sees_the_whole_answer_after_a_stream() -> None:
    model = ScriptedModel(["a streamed answer"])
    advisor = Tagging()
    chain = AdvisorChain.for_model(model, [advisor])
    chunks = [c async for c in chain.next_stream(request())]
    assert len(chunks) > 1
    assert advisor.seen == ["a streamed answer"]


async def _no_chunks(request: ChatClientRequest) -> AsyncIterator[ChatClientResponse]:
    return
    yield  # pragma: no cover


async def test_a_chain_with_custom_last_links() -> None:
    async def answer(req: ChatClientRequest) -> ChatClientResponse:
        return ChatClientResponse(chat_response=text_response("custom"), context=req.context)

    chain = AdvisorChain([ToolCallingAdvisor()], call_model=answer, stream_model=_no_chunks)
    assert (await chain.next_call(request())).chat_response.text == "custom"
