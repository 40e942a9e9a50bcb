"""The gateway end to end: the official MCP client over stdio and streamable HTTP."""

from __future__ import annotations

import json
import socket
import subprocess
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from mcp import Client, StdioServerParameters
from mcp_types import CallToolResult, TextContent

from ._helpers import PYTHON, demo_server_table, toml_string

MODULE = '''
from toolrelay.tools import tool


@tool(name="ops.server_time", read_only=True)
def server_time() -> str:
    """The current server time in UTC."""
    return "2026-11-30T12:00:00Z"
'''


@pytest.fixture(scope="module")
def gateway_file(tmp_path_factory: pytest.TempPathFactory) -> Path:
    folder = tmp_path_factory.mktemp("gateway")
    (folder / "ops_tools.py").write_text(MODULE, encoding="utf-8")
    path = folder / "gateway.toml"
    path.write_text(
        f"""
[gateway]
name = "test-gateway"

[search]
index = "bm25"
max_results = 3

[context]
tenant_id = "acme"

{demo_server_table()}

[[modules]]
path = {toml_string("ops_tools.py")}
""",
        encoding="utf-8",
    )
    return path


def text_of(result: CallToolResult) -> str:
    block = result.content[0]
    assert isinstance(block, TextContent)
    return block.text


async def exercise(client: Client) -> None:
    """One client session: list, search, call (ok, error, context, module tool, unknown)."""
    listed = await client.list_tools()
    assert [t.name for t in listed.tools] == ["tool_search", "call_tool"]
    assert "tool_search" in (client.instructions or "")

    search = await client.call_tool("tool_search", {"queries": ["add two whole numbers"]})
    hits = json.loads(text_of(search))
    assert hits[0]["name"] == "demo.add"
    assert hits[0]["input_schema"]["required"] == ["a", "b"]

    added = await client.call_tool("call_tool", {"name": "demo.add", "arguments": {"a": 2, "b": 3}})
    assert (added.is_error, text_of(added)) == (False, "5")

    failed = await client.call_tool(
        "call_tool", {"name": "demo.fail", "arguments": {"reason": "card declined"}}
    )
    assert failed.is_error
    assert "card declined" in text_of(failed)

    invalid = await client.call_tool("call_tool", {"name": "demo.add", "arguments": {"a": "x"}})
    assert invalid.is_error
    assert "b: Field required" in text_of(invalid)

    # The caller's _meta reaches the upstream server; the configured tenant wins.
    echoed = await client.call_tool(
        "call_tool",
        {"name": "demo.echo_context", "arguments": {}},
        meta={"tenant_id": "forged", "user_id": "u1"},
    )
    assert json.loads(text_of(echoed))["meta"] == {"tenant_id": "acme", "user_id": "u1"}

    clock = await client.call_tool("call_tool", {"name": "ops.server_time"})
    assert text_of(clock) == "2026-11-30T12:00:00Z"

    unknown = await client.call_tool("call_tool", {"name": "demo.nope", "arguments": {}})
    assert unknown.is_error
    assert "not available" in text_of(unknown)


async def test_over_stdio(gateway_file: Path) -> None:
    # Through the real command line: ``toolrelay serve CONFIG``.
    parameters = StdioServerParameters(
        command=PYTHON, args=["-m", "toolrelay", "serve", str(gateway_file)]
    )
    async with Client(parameters, read_timeout_seconds=30) as client:
        await exercise(client)


@pytest.fixture
def http_gateway(gateway_file: Path) -> Iterator[str]:
    port = _free_port()
    process = subprocess.Popen(
        [PYTHON, "-m", "toolrelay", "serve", str(gateway_file), "-t", "http", "--port", str(port)],
        stdin=subprocess.DEVNULL,
        stdout=subprocess.DEVNULL,
    )
    try:
        _wait_for_port(port, process)
        yield f"http://127.0.0.1:{port}/mcp"
    finally:
        process.terminate()
        try:
            process.wait(timeout=10)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()


async def test_over_streamable_http(http_gateway: str) -> None:
    async with Client(http_gateway, read_timeout_seconds=30) as client:
        await exercise(client)


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port: int = probe.getsockname()[1]
        return port


def _wait_for_port(port: int, process: subprocess.Popen[Any], timeout: float = 30.0) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if process.poll() is not None:
            raise RuntimeError(f"the gateway exited with {process.returncode}")
        try:
            with socket.create_connection(("127.0.0.1", port), timeout=0.2):
                return
        except OSError:
            time.sleep(0.1)
    raise RuntimeError("the gateway did not start listening")
