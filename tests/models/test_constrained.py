"""The prompt and grammars of two-step constrained tool calling (no llama.cpp needed)."""

from __future__ import annotations

from typing import Literal

from toolrelay.messages import (
    AssistantMessage,
    SystemMessage,
    ToolCall,
    ToolResponse,
    ToolResponseMessage,
    UserMessage,
)
from toolrelay.models._constrained import (
    CALL_PREFIX,
    bounded_schema,
    choice_grammar,
    chosen_name,
    render_messages,
    tool_catalog,
    tool_line,
)
from toolrelay.tools import FunctionTool, tool


@tool(name="refund.find_failed_orders")
def find_failed(day: str | None = None, limit: int = 20) -> list[str]:
    """Find refunds that failed on a day. Yesterday when no day is given.

    Args:
        day: The day, YYYY-MM-DD.
        limit: At most this many.
    """
    return []


@tool
def convert(value: float, unit: Literal["c", "f"], tags: list[str]) -> float:
    """Convert a temperature."""
    return value


FIND = FunctionTool.from_function(find_failed).definition
CONVERT = FunctionTool.from_function(convert).definition


def test_a_tool_line_has_the_safe_name_parameters_and_first_sentence() -> None:
    assert tool_line(FIND) == (
        "- refund__find_failed_orders(day?: string, limit?: integer): "
        "Find refunds that failed on a day."
    )
    assert tool_line(CONVERT) == (
        '- convert(value: number, unit: "c" | "f", tags: list[string]): Convert a temperature.'
    )
    assert tool_catalog([FIND, CONVERT]).count("\n") == 1


def test_choice_grammar_lists_exactly_the_names_and_the_answer_branch() -> None:
    grammar = choice_grammar(["refund__find_failed_orders", "convert"], allow_answer=True)
    assert "root ::= call | answer" in grammar
    assert 'name ::= "refund__find_failed_orders" | "convert"' in grammar
    assert "answer ::=" in grammar
    required = choice_grammar(["convert"], allow_answer=False)
    assert "root ::= call\n" in required
    assert "answer" not in required


def test_chosen_name_reads_an_opened_call_or_none_for_text() -> None:
    assert chosen_name(f'{CALL_PREFIX}convert"') == "convert"
    assert chosen_name("The answer is 4.") is None


def test_the_conversation_is_rendered_with_tools_calls_and_results() -> None:
    history = [
        SystemMessage(text="You are a refund assistant."),
        UserMessage(text="Which refunds failed?"),
        AssistantMessage(
            tool_calls=(ToolCall(id="c1", name="refund.find_failed_orders", arguments=""),)
        ),
        ToolResponseMessage(
            responses=(
                ToolResponse(id="c1", name="refund.find_failed_orders", data='["RF-1"]'),
                ToolResponse(id="c2", name="convert", data="bad unit", is_error=True),
            )
        ),
    ]
    rendered = render_messages(history, [FIND, CONVERT], tool_role="user")
    assert [m["role"] for m in rendered] == ["system", "user", "assistant", "user", "user"]
    system = rendered[0]["content"]
    assert system.startswith("You are a refund assistant.\n\nYou can call these tools:")
    assert "- refund__find_failed_orders(" in system
    assert '"arguments"' in system
    assert rendered[2]["content"] == ('{"name": "refund__find_failed_orders", "arguments": {}}')
    assert rendered[3]["content"] == 'Tool refund__find_failed_orders returned: ["RF-1"]'
    assert rendered[4]["content"] == "Tool convert failed: bad unit"


def test_without_tools_there_is_no_tools_section() -> None:
    rendered = render_messages([UserMessage(text="hi")], [])
    assert rendered == [{"role": "user", "content": "hi"}]


def test_bounded_schema_limits_free_strings_and_arrays_only() -> None:
    schema = {
        "type": "object",
        "properties": {
            "text": {"type": "string"},
            "short": {"type": "string", "maxLength": 5},
            "day": {"type": "string", "format": "date"},
            "unit": {"type": "string", "enum": ["c", "f"]},
            "tags": {"type": "array", "items": {"type": "string"}},
            "maybe": {"anyOf": [{"type": "string"}, {"type": "null"}]},
        },
        "$defs": {"Item": {"type": "object", "properties": {"sku": {"type": "string"}}}},
    }
    bounded = bounded_schema(schema, max_string_length=40, max_items=3)
    properties = bounded["properties"]
    assert properties["text"]["maxLength"] == 40
    assert properties["short"]["maxLength"] == 5
    assert "maxLength" not in properties["day"]
    assert "maxLength" not in properties["unit"]
    assert properties["tags"]["maxItems"] == 3
    assert properties["tags"]["items"]["maxLength"] == 40
    assert properties["maybe"]["anyOf"][0]["maxLength"] == 40
    assert bounded["$defs"]["Item"]["properties"]["sku"]["maxLength"] == 40
    assert "maxLength" not in schema["properties"]["text"]  # the original is unchanged
