from __future__ import annotations

import pytest

from toolrelay.exceptions import ModelError, ToolsNotSupportedError
from toolrelay.messages import UserMessage
from toolrelay.models._chunks import merge_chunks
from toolrelay.prompt import ChatOptions, Prompt
from toolrelay.testing import FunctionModel, ScriptedModel, text_response, tool_call_response
from toolrelay.tools import FunctionTool, tool


@tool
def lookup(key: str) -> str:
    """Look a key up.

    Args:
        key: The key.
    """
    return key


def ask(text: str, *, tools: bool = False) -> Prompt:
    options = ChatOptions(tools=(FunctionTool.from_function(lookup),) if tools else ())
    return Prompt(messages=(UserMessage(text=text),), options=options)


async def test_scripted_model_replies_in_order_and_records_prompts() -> None:
    async def echo(prompt: Prompt) -> str:
        return f"echo: {prompt.messages[-1].text}"  # type: ignore[union-attr]

    model = ScriptedModel(["first", text_response("second"), echo, lambda p: "fourth"])
    replies = [
        (await model.call(ask("a", tools=True))).text,
        (await model.call(ask("b"))).text,
        (await model.call(ask("c"))).text,
        (await model.call(ask("d"))).text,
    ]
    assert replies == ["first", "second", "echo: c", "fourth"]
    assert [p.messages[0] for p in model.prompts] == [UserMessage(text=t) for t in "abcd"]
    assert model.tool_names_shown(0) == ["lookup"]
    assert model.tool_definitions[1] == ()
    assert model.last_prompt.messages[0] == UserMessage(text="d")
    assert (model.call_count, model.remaining) == (4, 0)


async def test_a_scripted_model_that_runs_out_says_so() -> None:
    model = ScriptedModel(["only"], name="script-a")
    await model.call(ask("1"))
    with pytest.raises(ModelError, match=r"script-a ran out of script: request #2"):
        await model.call(ask("2"))


async def test_last_prompt_before_any_call_is_an_error() -> None:
    with pytest.raises(ModelError, match="not been called"):
        ScriptedModel([]).last_prompt  # noqa: B018


async def test_missing_tool_call_ids_are_filled_across_calls() -> None:
    model = ScriptedModel(
        [
            tool_call_response(("a", {}), ("b", {})),
            tool_call_response(("c", {})),
        ]
    )
    first = await model.call(ask("x"))
    second = await model.call(ask("y"))
    ids = [c.id for r in (first, second) for c in r.generations[0].message.tool_calls]
    assert ids == ["call_1", "call_2", "call_3"]


async def test_a_model_without_tool_support_refuses_tools() -> None:
    model = ScriptedModel(["x"], supports_tools=False)
    with pytest.raises(ToolsNotSupportedError):
        await model.call(ask("x", tools=True))
    assert model.call_count == 0
    assert (await model.call(ask("x"))).text == "x"


async def test_function_model_decides_each_reply() -> None:
    model = FunctionModel(lambda prompt: f"{len(prompt.messages)} message(s)")
    assert (await model.call(ask("x"))).text == "1 message(s)"
    assert model.call_count == 1


async def test_a_reply_of_the_wrong_type_is_a_model_error() -> None:
    model = FunctionModel(lambda prompt: 42)  # type: ignore[arg-type,return-value]
    with pytest.raises(ModelError, match="not a ChatResponse"):
        await model.call(ask("x"))


async def test_streams_are_small_chunks_that_merge_into_the_reply() -> None:
    reply = tool_call_response(("lookup", {"key": "value"}), text="Looking up", usage=(3, 3))
    model = ScriptedModel([reply, reply], chunk_size=3)
    chunks = [c async for c in model.stream(ask("x"))]
    called = await model.call(ask("x"))
    assert len(chunks) > 5
    streamed = merge_chunks(chunks)
    # The same reply, except that each emission got the next id.
    assert [c.id for c in streamed.generations[0].message.tool_calls] == ["call_1"]
    assert [c.id for c in called.generations[0].message.tool_calls] == ["call_2"]
    assert streamed.text == called.text == "Looking up"
    assert streamed.usage == called.usage
    assert streamed.generations[0].message.tool_calls[0].arguments == '{"key": "value"}'
