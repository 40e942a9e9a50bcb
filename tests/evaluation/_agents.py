"""Scripted agents for evaluation tests: they follow a plan of calls, searching when they must.

:func:`plan_model` gives a model that, in every run afresh, makes the plan's calls one per
request. In tool search mode a step whose tool is not shown yet is preceded by a search with
the tool's name as the query; a step whose search did not show the tool calls it anyway (so
a miss shows as a call of a tool not shown). When the plan is done it answers.

The controlled failures the scoring must catch are plans too: the wrong tool, bad arguments,
an unknown name, a forbidden tool; :func:`silent_model` never calls a tool and
:func:`endless_model` never stops calling.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from toolrelay.client._shown import shown_tools
from toolrelay.messages import AssistantMessage, Message, UserMessage
from toolrelay.prompt import Prompt
from toolrelay.testing import FunctionModel, text_response, tool_call_response
from toolrelay.testing._responses import UsageSpec
from toolrelay.tools import provider_safe_name
from toolrelay.toolsearch._reveal import REVEAL_CALL_ID

Plan = Sequence[tuple[str, Mapping[str, Any]]]


def _turn(messages: Sequence[Message]) -> list[AssistantMessage]:
    """The model's own messages of the turn: the proxy channel's reveal is not one of them."""
    start = max(i for i, m in enumerate(messages) if isinstance(m, UserMessage))
    return [
        m
        for m in messages[start:]
        if isinstance(m, AssistantMessage)
        and not any(c.id.startswith(REVEAL_CALL_ID) for c in m.tool_calls)
    ]


def plan_model(
    plan: Plan,
    answer: str = "Done.",
    *,
    usage: UsageSpec = None,
    searches: bool = True,
    name: str = "planner",
) -> FunctionModel:
    """Makes the plan's calls; with ``searches=False`` it never searches, even when it must."""

    def reply(prompt: Prompt) -> Any:
        said = _turn(prompt.messages)
        calls = [c for m in said for c in m.tool_calls]
        done = sum(c.name != "tool_search" for c in calls)
        if done >= len(plan):
            return text_response(answer, usage=usage)
        tool, arguments = plan[done]
        listed = {provider_safe_name(t.definition.name) for t in prompt.options.tools}
        shown = {provider_safe_name(name) for name in shown_tools(prompt)}
        searched = bool(calls) and calls[-1].name == "tool_search"
        if provider_safe_name(tool) in shown - listed and "call_tool" in listed:
            # The proxy channel: a tool a search answer showed runs through call_tool.
            call = {"name": tool, "arguments": dict(arguments)}
            return tool_call_response(("call_tool", call), usage=usage)
        if (
            provider_safe_name(tool) in shown
            or searched
            or not searches
            or "tool_search" not in listed
        ):
            return tool_call_response((provider_safe_name(tool), dict(arguments)), usage=usage)
        query = tool.replace(".", " ").replace("_", " ")
        return tool_call_response(("tool_search", {"queries": [query]}), usage=usage)

    return FunctionModel(reply, name=name)


def silent_model(answer: str = "I cannot help with that.") -> FunctionModel:
    return FunctionModel(lambda prompt: answer, name="silent")


def endless_model(tool: str, arguments: Mapping[str, Any]) -> FunctionModel:
    return FunctionModel(
        lambda prompt: tool_call_response((provider_safe_name(tool), dict(arguments))),
        name="endless",
    )
