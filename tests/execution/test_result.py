from __future__ import annotations

from toolrelay.execution import ToolCallOutcome, ToolCallStatus, ToolExecutionResult
from toolrelay.execution._result import RETURN_DIRECT_FINISH_REASON
from toolrelay.messages import (
    AssistantMessage,
    Generation,
    ToolCall,
    ToolResponse,
    ToolResponseMessage,
    UserMessage,
)


def test_build_generations_one_per_response() -> None:
    responses = (
        ToolResponse(id="1", name="a", data="first"),
        ToolResponse(id="2", name="b", data="second"),
    )
    result = ToolExecutionResult(
        conversation_history=(
            UserMessage(text="q"),
            AssistantMessage(tool_calls=(ToolCall(id="1", name="a"), ToolCall(id="2", name="b"))),
            ToolResponseMessage(responses=responses),
        ),
        return_direct=True,
    )
    assert result.responses == responses
    assert result.build_generations() == (
        Generation(
            message=AssistantMessage(text="first"),
            finish_reason="returnDirect",
            metadata={"tool_id": "1", "tool_name": "a"},
        ),
        Generation(
            message=AssistantMessage(text="second"),
            finish_reason=RETURN_DIRECT_FINISH_REASON,
            metadata={"tool_id": "2", "tool_name": "b"},
        ),
    )


def test_no_tool_response_message_means_no_generations() -> None:
    result = ToolExecutionResult(conversation_history=(UserMessage(text="q"),))
    assert result.tool_response_message is None
    assert result.responses == ()
    assert result.build_generations() == ()


def test_outcome_ok_and_equality_ignores_the_exception() -> None:
    call = ToolCall(id="1", name="a")
    response = ToolResponse(id="1", name="a", data="x", is_error=True)
    first = ToolCallOutcome(
        call=call,
        tool_name="a",
        response=response,
        status=ToolCallStatus.ERROR,
        exception=ValueError("x"),
    )
    second = ToolCallOutcome(
        call=call,
        tool_name="a",
        response=response,
        status=ToolCallStatus.ERROR,
        exception=ValueError("x"),
    )
    assert first == second
    assert not first.ok
    assert ToolCallStatus.ERROR == "error"
