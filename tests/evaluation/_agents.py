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

from toolrelay.messages import AssistantMessage, Message, UserMessage
from toolrelay.prompt import Prompt
from toolrelay.testing import FunctionModel, text_response, tool_call_response
from toolrelay.testing._responses import UsageSpec
from toolrelay.tools import provider_safe_name

Plan = Sequence[tuple[str, Mapping[str, Any]]]


def _turn(messages: Sequence[Message]) -> list[AssistantMessage]:
    start = max(i for i, m in enumerate(messages) if isinstance(m, UserMessage))
    return [m for m in messages[start:] if isinstance(m, AssistantMessage)]


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
        shown = {provider_safe_name(t.definition.name) for t in prompt.options.tools}
        searched = bool(calls) and calls[-1].name == "tool_search"
        if (
            provider_safe_name(tool) in shown
            or searched
            or not searches
            or "tool_search" not in shown
        ):
            return tool_call_response((provider_safe_name(tool), dict(arguments)), usage=usage)
        query = tool.replace(".", " ").replace("_", " ")
        return tool_call_response(("tool_search", {"query": query}), usage=usage)

    return FunctionModel(reply, name=name)


def silent_model(answer: str = "I cannot help with that.") -> FunctionModel:
    return FunctionModel(lambda prompt: answer, name="silent")


def endless_model(tool: str, arguments: Mapping[str, Any]) -> FunctionModel:
    return FunctionModel(
        lambda prompt: tool_call_response((provider_safe_name(tool), dict(arguments))),
        name="endless",
    )
