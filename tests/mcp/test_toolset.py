"""The toolset against a real MCP server over stdio (one process for the module)."""

from __future__ import annotations

import json
import os
import sys
import time
from pathlib import Path
from typing import Any

import pytest

from tests.extras import needs_extra

pytest.importorskip("mcp_types", reason=needs_extra("mcp"))
from demo_server import CHINESE_NAME, LONG_A, LONG_B

from tests.mcp.mcp_helpers import demo_stdio
from toolrelay.exceptions import (
    ConfigurationError,
    McpServerError,
    ToolArgumentError,
    ToolExecutionError,
)
from toolrelay.execution import (
    DEFAULT_MAX_RESULT_CHARS,
    ToolCallingManager,
    ToolCallStatus,
    ToolExecutionResult,
)
from toolrelay.mcp import McpServerConfig, McpTool, McpToolset
from toolrelay.mcp._annotations import IDEMPOTENT, MCP_NAME, MCP_SERVER
from toolrelay.messages import UserMessage
from toolrelay.prompt import ChatOptions, Prompt
from toolrelay.testing import tool_call_response
from toolrelay.tools import ToolContext, provider_safe_name
from toolrelay.tools._base import call_sync


def tool(toolset: McpToolset, name: str) -> McpTool:
    found = toolset.catalog.get(name)
    assert isinstance(found, McpTool), f"{name} not in {toolset.catalog.names()}"
    return found


async def run_round(
    toolset: McpToolset, *calls: tuple[str, dict[str, Any]], context: dict[str, Any] | None = None
) -> ToolExecutionResult:
    prompt = Prompt(
        messages=(UserMessage(text="go"),),
        options=ChatOptions(tools=tuple(toolset.tools), tool_context=context or {}),
    )
    return await ToolCallingManager().execute_tool_calls(prompt, tool_call_response(*calls))


def test_tools_are_listed_with_server_prefixes(stdio_toolset: McpToolset) -> None:
    names = stdio_toolset.catalog.names()
    assert names[:9] == [
        "demo.add",
        "demo.delete_record",
        "demo.create_order",
        "demo.echo_context",
        "demo.protocol",
        "demo.fail",
        "demo.slow",
        "demo.die",
        "demo.grow",
    ]
    assert all(len(provider_safe_name(n)) <= 64 for n in names)
    assert [t.original_name for t in stdio_toolset.tools_of("demo")][-3:] == [
        LONG_A,
        LONG_B,
        "search docs",
    ]


def test_long_and_unsafe_names_stay_distinct_and_call_the_original(
    stdio_toolset: McpToolset,
) -> None:
    long_a, long_b, search = stdio_toolset.tools[-3:]
    assert long_a.definition.name != long_b.definition.name
    assert long_a.definition.name.startswith("demo.get_the_monthly_revenue")
    assert search.definition.name.startswith("demo.search_docs_")
    assert call_sync(long_b, '{"region": "emea"}') == "revenue for emea"
    assert call_sync(search, '{"query": "mcp"}') == "docs about mcp"


def test_a_chinese_name_is_kept_found_by_its_sent_form_and_calls_the_original(
    stdio_toolset: McpToolset,
) -> None:
    weather = tool(stdio_toolset, f"demo.{CHINESE_NAME}")
    assert weather.original_name == CHINESE_NAME
    sent = provider_safe_name(weather.definition.name)
    assert sent.startswith("demo_")
    assert stdio_toolset.catalog.get(sent) is weather
    assert call_sync(weather, '{"city": "北京"}') == "北京：晴"


def test_definitions_and_metadata_come_from_the_server(stdio_toolset: McpToolset) -> None:
    add = tool(stdio_toolset, "demo.add")
    assert add.definition.description == "Add two whole numbers."
    assert add.definition.input_schema == add.info.input_schema
    assert add.definition.input_schema["required"] == ["a", "b"]
    assert add.metadata.read_only is True
    assert add.metadata.extra[IDEMPOTENT] is True
    assert add.metadata.extra[MCP_SERVER] == "demo"
    assert add.metadata.extra[MCP_NAME] == "add"
    assert add.metadata.timeout == 10.0
    delete = tool(stdio_toolset, "demo.delete_record")
    assert (delete.metadata.read_only, delete.metadata.destructive) == (False, True)


async def test_calling_a_tool(stdio_toolset: McpToolset) -> None:
    assert await tool(stdio_toolset, "demo.add").call('{"a": 2, "b": 3}') == "5"


def test_calling_from_synchronous_code(stdio_toolset: McpToolset) -> None:
    assert call_sync(tool(stdio_toolset, "demo.add"), '{"a": 20, "b": 22}') == "42"


async def test_arguments_are_validated_before_sending(stdio_toolset: McpToolset) -> None:
    order = tool(stdio_toolset, "demo.create_order")
    with pytest.raises(ToolArgumentError) as caught:
        await order.call('{"items": [{"sku": "A", "quantity": "two"}, {"quantity": 1}]}')
    assert [str(p) for p in caught.value.problems] == [
        "customer: Field required",
        'items.0.quantity: "two" is not of type "integer"',
        "items.1.sku: Field required",
    ]
    # The execution layer turns it into feedback the model can act on.
    result = await run_round(stdio_toolset, ("demo__create_order", {"items": "none"}))
    (outcome,) = result.outcomes
    assert outcome.status is ToolCallStatus.INVALID_ARGUMENTS
    assert outcome.response.is_error
    assert "customer: Field required" in outcome.response.data


async def test_an_error_result_becomes_an_error_response(stdio_toolset: McpToolset) -> None:
    with pytest.raises(ToolExecutionError, match="card declined"):
        await tool(stdio_toolset, "demo.fail").call('{"reason": "card declined"}')
    result = await run_round(
        stdio_toolset, ("demo__fail", {"reason": "card declined"}), ("demo__add", {"a": 1, "b": 1})
    )
    failed, ok = result.outcomes
    assert failed.status is ToolCallStatus.ERROR
    assert failed.response.is_error
    assert failed.response.data == "Error executing tool fail: card declined"  # the server's
    assert (ok.response.is_error, ok.response.data) == (False, "2")


async def test_the_context_travels_as_meta_not_arguments(stdio_toolset: McpToolset) -> None:
    echo = tool(stdio_toolset, "demo.echo_context")
    context = ToolContext(tenant_id="t1", user_id="u7", handle=object())
    answer = json.loads(await echo.call('{"note": "hi"}', context))
    assert answer == {"meta": {"tenant_id": "t1", "user_id": "u7"}, "note": "hi"}
    assert "tenant_id" not in echo.definition.input_schema.get("properties", {})
    result = await run_round(stdio_toolset, ("demo__echo_context", {}), context={"tenant_id": "t2"})
    assert json.loads(result.outcomes[0].response.data)["meta"] == {"tenant_id": "t2"}


async def test_a_long_result_of_a_server_is_bounded_like_any_tools(
    stdio_toolset: McpToolset,
) -> None:
    note = "x" * 30_000
    result = await run_round(stdio_toolset, ("demo__echo_context", {"note": note}))
    (outcome,) = result.outcomes
    full = outcome.full_result
    assert full is not None
    assert outcome.truncated
    assert json.loads(full) == {"meta": {}, "note": note}
    shown = outcome.response.data
    assert shown.startswith(full[:DEFAULT_MAX_RESULT_CHARS])
    assert shown.endswith(
        f"[Result cut: these are the first 20,000 of {len(full):,} characters. "
        "For what was left out, call the tool again asking for less: a narrower query, one "
        "page, or fewer fields.]"
    )


def test_tools_of_an_unknown_server(stdio_toolset: McpToolset) -> None:
    with pytest.raises(ConfigurationError, match="no MCP server named 'nope'"):
        stdio_toolset.tools_of("nope")


async def test_a_closed_toolset_refuses_calls() -> None:
    toolset = McpToolset(demo_stdio())
    with pytest.raises(ConfigurationError, match="not open"):
        await toolset.refresh()


def test_server_names_must_differ() -> None:
    with pytest.raises(ConfigurationError, match="repeated"):
        McpToolset([demo_stdio("a"), demo_stdio("a")])


def test_a_missing_command_fails_to_start() -> None:
    config = McpServerConfig(name="ghost", command="/nonexistent/mcp-server", stderr="discard")
    with pytest.raises(McpServerError, match=r"'ghost' .* could not be started") as caught:
        McpToolset(config).open()
    assert caught.value.server == "ghost"


def test_a_python_command_is_this_interpreter_whatever_path_holds(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # A `python` first on PATH that is not this interpreter (no virtual environment active).
    impostor = tmp_path / "python"
    impostor.write_text("#!/bin/sh\nexit 3\n")
    impostor.chmod(0o755)
    monkeypatch.setenv("PATH", f"{tmp_path}{os.pathsep}{os.environ.get('PATH', '')}")
    config = demo_stdio("bare").model_copy(update={"command": "python"})
    assert config.program == sys.executable
    with McpToolset(config) as toolset:
        assert "bare.add" in toolset.catalog.names()


def test_a_server_that_exits_at_once_fails_to_start() -> None:
    config = McpServerConfig(
        name="quitter",
        command=sys.executable,
        args=("-c", "raise SystemExit(1)"),
        stderr="discard",
        connect_timeout=10,
    )
    with pytest.raises(McpServerError, match="'quitter'"):
        McpToolset(config).open()


def test_an_unreachable_url_fails_to_connect() -> None:
    config = McpServerConfig(name="gone", url="http://127.0.0.1:9/mcp", connect_timeout=10)
    with pytest.raises(McpServerError, match=r"'gone' .* could not be reached"):
        McpToolset(config).open()


def test_a_server_that_never_answers_times_out_without_hanging() -> None:
    config = McpServerConfig(
        name="mute",
        command=sys.executable,
        args=("-c", "import time; time.sleep(60)"),
        stderr="discard",
        connect_timeout=1,
    )
    started = time.monotonic()
    with pytest.raises(McpServerError, match="'mute' did not start and list its tools within 1 s"):
        McpToolset(config).open()
    assert time.monotonic() - started < 15
