"""Every text the model reads when a tool call goes wrong, kept in one place.

The texts are addressed to the model (what happened and what to do next), short, and stable:
tests assert them exactly, and prompts tuned against them should not drift.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence

from toolrelay._plural import plural
from toolrelay.exceptions import ArgumentProblem
from toolrelay.tools.names import provider_safe_name

__all__ = [
    "denied",
    "invalid_arguments",
    "per_tool_limit",
    "timed_out",
    "tool_failed_without_message",
    "total_limit",
    "unknown_tool",
]

_MAX_SHOWN_NAME = 80


def _shown(name: str) -> str:
    """Quote a name the model wrote, shortened so a runaway name cannot flood the context."""
    if len(name) > _MAX_SHOWN_NAME:
        name = name[:_MAX_SHOWN_NAME] + "..."
    return repr(name)


def unknown_tool(name: str, suggestions: Sequence[str], *, any_tools: bool = True) -> str:
    """No tool answers to ``name``.

    Suggestions are shown in their provider-safe form, the form the model was shown. For
    ``unknown_tool("getWether", ["get_weather", "get_time"])`` the text is::

        Unknown tool 'getWether'. Available tools with similar names: get_weather, get_time.
        Call one of the available tools with its exact name.

    (on one line). Without suggestions the middle sentence says no tool has a similar name;
    when ``any_tools`` is false the model is told to answer without tools.
    """
    if suggestions:
        listed = ", ".join(provider_safe_name(s) for s in suggestions)
        return (
            f"Unknown tool {_shown(name)}. Available tools with similar names: {listed}. "
            "Call one of the available tools with its exact name."
        )
    if any_tools:
        return (
            f"Unknown tool {_shown(name)}. No available tool has a similar name. "
            "Call one of the available tools with its exact name."
        )
    return f"Unknown tool {_shown(name)}. No tools are available; answer without calling tools."


def invalid_arguments(tool_name: str, problems: Iterable[ArgumentProblem]) -> str:
    """The arguments were unusable; one line per problem.

    >>> from toolrelay.exceptions import ArgumentProblem
    >>> print(invalid_arguments("get_weather", [ArgumentProblem(location="city",
    ...                                          message="Field required")]))
    Invalid arguments for tool 'get_weather':
    - city: Field required
    Fix the arguments and call the tool again.
    """
    lines = "\n".join(f"- {p}" for p in problems) or "- the arguments were rejected"
    return (
        f"Invalid arguments for tool {_shown(tool_name)}:\n{lines}\n"
        "Fix the arguments and call the tool again."
    )


def tool_failed_without_message(tool_name: str, exc: BaseException) -> str:
    """A tool raised an exception whose message is empty (Spring AI's wording)."""
    return f"Exception occurred in tool: {tool_name} ({type(exc).__name__})"


def timed_out(tool_name: str, seconds: float) -> str:
    """The tool ran longer than its timeout and was cancelled.

    >>> timed_out("slow_search", 2.0)
    "Tool 'slow_search' timed out after 2 s and was cancelled."
    """
    return f"Tool {_shown(tool_name)} timed out after {seconds:g} s and was cancelled."


def denied(tool_name: str) -> str:
    """Used when a guard denies a call with an empty reason."""
    return f"The call to tool {_shown(tool_name)} was denied."


def per_tool_limit(tool_name: str, limit: int) -> str:
    """The tool was called more often in this turn than its limit allows."""
    return (
        f"Tool call limit reached: {_shown(tool_name)} may be called at most "
        f"{plural(limit, 'time')} per turn. Do not call it again; answer with the information "
        "you have."
    )


def total_limit(limit: int) -> str:
    """The turn made more tool calls than the total limit allows."""
    return (
        f"Tool call limit reached: at most {plural(limit, 'tool call')} "
        f"{'is' if limit == 1 else 'are'} allowed per turn. Do not call more tools; answer "
        "with the information you have."
    )
