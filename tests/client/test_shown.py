"""What a request shows the model on each tool search channel (``toolrelay.client._shown``)."""

from __future__ import annotations

from toolrelay.client._shown import carried_definitions, shown_tools
from toolrelay.messages import (
    AssistantMessage,
    ToolCall,
    ToolChangeMessage,
    ToolResponse,
    ToolResponseMessage,
    UserMessage,
)
from toolrelay.prompt import ChatOptions, Prompt
from toolrelay.tools import as_tools, tool
from toolrelay.tools._base import ToolDefinition
from toolrelay.toolsearch._search_tool import definition_hit, definitions_answer


@tool
def tool_search(query: str) -> str:
    """Find tools."""
    return "[]"


RETRY = ToolDefinition(name="refund.retry", description="Retry a refund.")
STATUS = ToolDefinition(name="refund.status", description="Status of a refund.")


def prompt(*messages: object) -> Prompt:
    return Prompt(
        messages=(UserMessage(text="hi"), *messages),  # type: ignore[arg-type]
        options=ChatOptions(tools=as_tools(tool_search)),
    )


def test_the_tool_list_alone_on_the_rewrite_channel() -> None:
    request = prompt()
    assert shown_tools(request) == ("tool_search",)
    assert [d.name for d in carried_definitions(request)] == ["tool_search"]


def test_tool_changes_add_and_retire_tools_on_the_native_channel() -> None:
    added = ToolChangeMessage(added=(definition_hit(RETRY), definition_hit(STATUS)))
    retired = ToolChangeMessage(removed=("refund.retry",))
    request = prompt(added, retired)
    assert shown_tools(request) == ("tool_search", "refund.status")
    carried = carried_definitions(request)
    assert [d.name for d in carried] == ["tool_search", "refund.status"]
    assert carried[1].description == "Status of a refund."


def test_definitions_a_search_answer_gave_on_the_proxy_channel() -> None:
    call = ToolCall(id="c1", name="tool_search", arguments='{"queries": ["refund"]}')
    answer = definitions_answer([definition_hit(RETRY)])[0]
    request = prompt(
        AssistantMessage(tool_calls=(call,)),
        ToolResponseMessage(responses=(ToolResponse(id="c1", name="tool_search", data=answer),)),
    )
    assert shown_tools(request) == ("tool_search", "refund.retry")
    # The definitions are text of the messages, not tools the request carries.
    assert [d.name for d in carried_definitions(request)] == ["tool_search"]
