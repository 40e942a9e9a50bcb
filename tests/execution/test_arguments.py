from __future__ import annotations

import json

import pytest
from pydantic import BaseModel, field_validator

from toolrelay.exceptions import InvalidJsonError, ToolNotFoundError
from toolrelay.execution import (
    ApprovalInterceptor,
    AuditInterceptor,
    LoggingAuditSink,
    Proceed,
    ToolCallingManager,
    ToolCallOutcome,
    ToolCallStatus,
    ToolInvocation,
)
from toolrelay.execution._arguments import parse_arguments
from toolrelay.messages import ToolCall, UserMessage
from toolrelay.prompt import ChatOptions, Prompt
from toolrelay.testing import tool_call_response
from toolrelay.tools import FunctionTool, tool
from toolrelay.tools._arguments import decode_arguments


@pytest.mark.parametrize("text", ["", "   ", "\n\t"])
def test_blank_means_empty_object(text: str) -> None:
    parsed = parse_arguments("t", text)
    assert parsed.text == "{}"
    assert dict(parsed.values) == {}


def test_object_is_kept_verbatim() -> None:
    parsed = parse_arguments("t", '{"a": [1, 2], "b": {"c": null}}')
    assert parsed.text == '{"a": [1, 2], "b": {"c": null}}'
    assert dict(parsed.values) == {"a": [1, 2], "b": {"c": None}}


def test_values_are_read_only() -> None:
    parsed = parse_arguments("t", '{"a": 1}')
    with pytest.raises(TypeError):
        parsed.values["a"] = 2  # type: ignore[index]


def test_double_encoded_object_is_unwrapped() -> None:
    parsed = parse_arguments("t", '"{\\"city\\": \\"Paris\\"}"')
    assert parsed.text == '{"city": "Paris"}'
    assert dict(parsed.values) == {"city": "Paris"}


@pytest.mark.parametrize(
    ("text", "message"),
    [
        (
            "{",
            "Arguments are not valid JSON: Expecting property name enclosed in double quotes "
            "at line 1, column 2.",
        ),
        (
            "{'a': 1}",
            "Arguments are not valid JSON: Expecting property name enclosed in double "
            "quotes at line 1, column 2.",
        ),
        ('{"a": 1} x', "Arguments are not valid JSON: Extra data at line 1, column 10."),
        ("[1, 2]", "Arguments must be a JSON object, not an array."),
        ('"Paris"', "Arguments must be a JSON object, not a string."),
        ('"{not json"', "Arguments must be a JSON object, not a string."),
        ("42", "Arguments must be a JSON object, not a number."),
        ("true", "Arguments must be a JSON object, not a boolean."),
        ("null", "Arguments must be a JSON object, not null."),
        (
            "[" * 100_000,
            "Arguments are nested too deeply (more than 100 levels). Send flatter ones.",
        ),
    ],
)
def test_unusable_text_raises_with_one_problem(text: str, message: str) -> None:
    with pytest.raises(InvalidJsonError) as info:
        parse_arguments("get_weather", text)
    assert info.value.tool == "get_weather"
    assert [str(p) for p in info.value.problems] == [message]


def test_integer_beyond_the_digit_limit_is_reported_not_raised_raw() -> None:
    with pytest.raises(InvalidJsonError) as info:
        parse_arguments("t", '{"n": ' + "9" * 5000 + "}")
    assert info.value.problems[0].message.startswith("Arguments are not usable JSON: ")


@pytest.mark.parametrize("text", ["[1, 2]", '"Paris"', "42", "true", "null"])
def test_a_value_that_is_not_an_object_reads_as_in_the_tools_layer(text: str) -> None:
    # One wording, whichever layer notices: the manager's parser or a tool called directly.
    with pytest.raises(InvalidJsonError) as parsed:
        parse_arguments("get_weather", text)
    with pytest.raises(InvalidJsonError) as decoded:
        decode_arguments("get_weather", text)
    assert parsed.value.problems == decoded.value.problems
    assert str(parsed.value) == str(decoded.value)


# --- arguments that are not text ----------------------------------------------------------------


def test_none_means_no_arguments_like_blank_text() -> None:
    parsed = parse_arguments("t", None)
    assert (parsed.text, dict(parsed.values)) == ("{}", {})


def test_a_mapping_is_the_object_already_decoded() -> None:
    parsed = parse_arguments("t", {"city": "Zürich", "days": [1, 2]})
    assert parsed.text == '{"city": "Zürich", "days": [1, 2]}'
    assert dict(parsed.values) == {"city": "Zürich", "days": [1, 2]}


@pytest.mark.parametrize(
    ("arguments", "message"),
    [
        ([1, 2], "Arguments must be a JSON object, not an array."),
        ((1, 2), "Arguments must be a JSON object, not an array."),
        (3, "Arguments must be a JSON object, not a number."),
        (2.5, "Arguments must be a JSON object, not a number."),
        (True, "Arguments must be a JSON object, not a boolean."),
        (b'{"a": 1}', "Arguments must be a JSON object, not a value of type bytes."),
        ({1, 2}, "Arguments must be a JSON object, not a value of type set."),
        (
            {"amount": float("nan")},
            "Arguments are not valid JSON: NaN is not a JSON number; send a finite number or null.",
        ),
        (
            {"when": object()},
            "Arguments must hold JSON values only: Object of type object is not JSON serializable.",
        ),
    ],
)
def test_other_values_are_refused_naming_what_came(arguments: object, message: str) -> None:
    with pytest.raises(InvalidJsonError) as info:
        parse_arguments("get_weather", arguments)  # type: ignore[arg-type]
    assert [str(p) for p in info.value.problems] == [message]


def test_a_mapping_that_refers_to_itself_is_refused() -> None:
    looped: dict[str, object] = {}
    looped["self"] = looped
    with pytest.raises(InvalidJsonError, match="Circular reference"):
        parse_arguments("t", looped)


@tool
def forecast(city: str = "Paris") -> str:
    """The forecast for a city."""
    return f"sunny in {city}"


async def answer(call: ToolCall) -> ToolCallOutcome:
    return await ToolCallingManager().run_call(call, [FunctionTool.from_function(forecast)])


@pytest.mark.parametrize(
    ("arguments", "expected"),
    [(None, "sunny in Paris"), ({"city": "Oslo"}, "sunny in Oslo"), ({}, "sunny in Paris")],
)
async def test_the_manager_runs_a_call_whose_arguments_are_none_or_a_mapping(
    arguments: object, expected: str
) -> None:
    outcome = await answer(ToolCall(id="c1", name="forecast", arguments=arguments))  # type: ignore[arg-type]
    assert (outcome.status, outcome.response.data) == (ToolCallStatus.OK, expected)


@pytest.mark.parametrize(
    ("arguments", "problem"),
    [
        ([1, 2], "Arguments must be a JSON object, not an array."),
        (3, "Arguments must be a JSON object, not a number."),
        ("[1, 2]", "Arguments must be a JSON object, not an array."),
        ('"x"', "Arguments must be a JSON object, not a string."),
        ("3", "Arguments must be a JSON object, not a number."),
        ("null", "Arguments must be a JSON object, not null."),
        ({"city": 5}, "city: Input should be a valid string"),
    ],
)
async def test_unusable_arguments_are_the_models_mistake_never_the_tools(
    arguments: object, problem: str
) -> None:
    outcome = await answer(ToolCall(id="c1", name="forecast", arguments=arguments))  # type: ignore[arg-type]
    assert outcome.status is ToolCallStatus.INVALID_ARGUMENTS
    assert outcome.response.data == (
        f"Invalid arguments for tool 'forecast':\n- {problem}\n"
        "Fix the arguments and call the tool again."
    )


@pytest.mark.parametrize(("name", "kind"), [(None, "null"), (7, "a number"), (["f"], "an array")])
async def test_a_name_that_is_not_text_is_an_unknown_tool(name: object, kind: str) -> None:
    outcome = await answer(ToolCall(id="c1", name=name, arguments="{}"))  # type: ignore[arg-type]
    assert outcome.status is ToolCallStatus.UNKNOWN_TOOL
    assert outcome.tool_name is None
    assert (outcome.response.name, outcome.response.id) == ("", "c1")
    assert outcome.response.data == (
        f"This tool call has no tool name (its name is {kind}, not text). Call one of the "
        "available tools with its exact name."
    )


async def test_a_name_that_is_not_text_raises_not_found_when_asked_to() -> None:
    manager = ToolCallingManager(unknown_tool="raise")
    with pytest.raises(ToolNotFoundError):
        await manager.run_call(ToolCall(id="c1", name=None, arguments=""), [])  # type: ignore[arg-type]


# --- validated once -----------------------------------------------------------------------------

validations: list[str] = []
received: list[object] = []


class Refund(BaseModel):
    order_id: str
    amount: int

    @field_validator("amount")
    @classmethod
    def _count(cls, value: int) -> int:
        validations.append("amount")  # runs each time pydantic validates the input
        return value


@tool
def refund(request: Refund) -> str:
    """Refund an order."""
    received.append(request)
    return f"refunded {request.amount} on {request.order_id}"


async def test_a_validating_tools_arguments_are_validated_once_per_call() -> None:
    validations.clear()
    received.clear()
    seen: list[object] = []

    async def look(invocation: ToolInvocation, proceed: Proceed, /) -> ToolCallOutcome:
        seen.append(invocation.arguments.native)
        return await proceed(invocation)

    manager = ToolCallingManager(
        audit=AuditInterceptor(LoggingAuditSink()),
        interceptors=[look],
        approval=ApprovalInterceptor(),
    )
    tools = (FunctionTool.from_model_function(refund),)
    prompt = Prompt(messages=(UserMessage(text="go"),), options=ChatOptions(tools=tools))
    response = tool_call_response(
        ToolCall(id="c1", name="refund", arguments='{"order_id": "A1", "amount": "5"}'),
        ToolCall(id="c2", name="refund", arguments='{"order_id": "B2", "amount": 7}'),
    )
    result = await manager.execute_tool_calls(prompt, response)
    assert [o.response.data for o in result.outcomes] == ["refunded 5 on A1", "refunded 7 on B2"]
    assert validations == ["amount", "amount"]  # once per call, none in the tool
    assert received == seen  # the tool ran with the very input the pipeline saw
    one = await manager.run_call(
        ToolCall(id="g1", name="refund", arguments='{"order_id": "C3", "amount": 1}'), tools
    )
    assert one.status is ToolCallStatus.OK
    assert validations == ["amount"] * 3


# --- one reader for every shape, at every door -------------------------------------------------


def _nested(depth: int) -> dict[str, object]:
    value: dict[str, object] = {}
    for _ in range(depth - 1):
        value = {"a": value}
    return value


@pytest.mark.parametrize(
    ("given", "values"),
    [
        ({"city": "Paris"}, {"city": "Paris"}),
        ('{"city": "Paris"}', {"city": "Paris"}),
        ('"{\\"city\\": \\"Paris\\"}"', {"city": "Paris"}),
        (None, {}),
        ("", {}),
    ],
)
def test_every_shape_of_an_object_reads_the_same(given: object, values: dict[str, object]) -> None:
    assert dict(parse_arguments("t", given).values) == values


@pytest.mark.parametrize(
    ("given", "message"),
    [
        ([1, 2], "Arguments must be a JSON object, not an array."),
        (42, "Arguments must be a JSON object, not a number."),
        ({"a": float("nan")}, "Arguments are not valid JSON: NaN is not a JSON number"),
        (_nested(101), "Arguments are nested too deeply (more than 100 levels)."),
        (json.dumps(_nested(101)), "Arguments are nested too deeply (more than 100 levels)."),
    ],
)
def test_what_is_not_an_object_is_one_problem_naming_what_came(given: object, message: str) -> None:
    with pytest.raises(InvalidJsonError) as info:
        parse_arguments("t", given)
    assert str(info.value.problems[0]).startswith(message)


def test_a_mapping_nested_past_python_s_own_limit_is_a_problem_not_a_crash() -> None:
    deep: dict[str, object] = {}
    for _ in range(5_000):
        deep = {"a": deep}
    with pytest.raises(InvalidJsonError, match="nested too deeply"):
        parse_arguments("t", deep)


def test_arguments_up_to_the_depth_limit_are_read() -> None:
    assert parse_arguments("t", _nested(100)).values == _nested(100)


def test_text_over_the_bound_is_refused_unread() -> None:
    with pytest.raises(InvalidJsonError) as info:
        parse_arguments("t", '{"a": "' + "x" * 50 + '"}', max_length=20)
    assert "characters long" in str(info.value.problems[0])


@pytest.mark.parametrize(
    ("name", "arguments", "kept"),
    [
        (None, '{"city": "Paris"}', ToolCall(id="c1", name="", arguments='{"city": "Paris"}')),
        (7, None, ToolCall(id="c1", name="", arguments="")),
        (
            "get_weather",
            {"city": "Paris"},
            ToolCall(id="c1", name="get_weather", arguments='{"city": "Paris"}'),
        ),
        ("get_weather", [1, 2], ToolCall(id="c1", name="get_weather", arguments="{}")),
    ],
)
async def test_the_history_keeps_every_call_well_formed(
    name: object, arguments: object, kept: ToolCall
) -> None:
    @tool
    def get_weather(city: str) -> str:
        """Weather."""
        return f"sunny in {city}"

    call = ToolCall(id="c1", name=name, arguments=arguments)  # type: ignore[arg-type]
    prompt = Prompt(
        messages=(UserMessage(text="weather?"),),
        options=ChatOptions(tools=(FunctionTool.from_function(get_weather),)),
    )
    result = await ToolCallingManager().execute_tool_calls(prompt, tool_call_response(call))
    assistant = result.conversation_history[-2]
    assert assistant.tool_calls == (kept,)  # type: ignore[union-attr]
    assert result.outcomes[0].call == kept
    assert result.outcomes[0].response.id == "c1"
