"""Guards, deprecated: each still denies as before, as an interceptor, and warns."""

from __future__ import annotations

import warnings

import pytest

from toolrelay.execution import ToolCallingManager, ToolCallStatus, ToolInvocation
from toolrelay.messages import ToolCall, UserMessage
from toolrelay.prompt import ChatOptions, Prompt
from toolrelay.testing import tool_call_response
from toolrelay.tools import as_tools, tool

ran: list[str] = []


@tool
def delete(path: str) -> str:
    """Delete a file."""
    ran.append(path)
    return f"deleted {path}"


PROMPT = Prompt(messages=(UserMessage(text="go"),), options=ChatOptions(tools=as_tools(delete)))


def calls(*paths: str) -> object:
    return tool_call_response(
        *(
            ToolCall(id=f"c{i}", name="delete", arguments=f'{{"path": "{p}"}}')
            for i, p in enumerate(paths)
        )
    )


async def test_a_managers_guards_still_deny_and_warn_once_at_construction() -> None:
    ran.clear()

    async def no_etc(invocation: ToolInvocation, /) -> str | None:
        return "Not /etc." if invocation.arguments["path"].startswith("/etc") else None

    async def empty(invocation: ToolInvocation, /) -> str | None:
        return "" if invocation.arguments["path"] == "/boot" else None

    with pytest.warns(DeprecationWarning, match=r"ToolCallingManager\(guards=\.\.\.\)"):
        manager = ToolCallingManager(guards=[no_etc, empty])
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # running the round warns no more
        result = await manager.execute_tool_calls(PROMPT, calls("/etc/x", "/boot", "/tmp/x"))
    assert [(o.status, o.response.data) for o in result.outcomes] == [
        (ToolCallStatus.DENIED, "Not /etc."),
        (ToolCallStatus.DENIED, "The call to tool 'delete' was denied."),
        (ToolCallStatus.OK, "deleted /tmp/x"),
    ]
    assert ran == ["/tmp/x"]


async def test_a_rounds_guards_still_deny_and_warn() -> None:
    ran.clear()

    async def never(invocation: ToolInvocation, /) -> str | None:
        return "no"

    with pytest.warns(DeprecationWarning, match=r"execute_tool_calls\(guards=\.\.\.\)"):
        result = await ToolCallingManager().execute_tool_calls(
            PROMPT,
            calls("/tmp/x"),
            guards=[never],  # type: ignore[list-item]
        )
    assert result.outcomes[0].status is ToolCallStatus.DENIED
    assert ran == []


def test_the_old_names_import_with_a_warning() -> None:
    import toolrelay.execution as execution

    with pytest.warns(DeprecationWarning, match="use ToolInvocation"):
        request = execution.ToolCallRequest
    assert request is ToolInvocation
    with pytest.warns(DeprecationWarning, match="ToolCallGuard is deprecated"):
        assert execution.ToolCallGuard is not None
