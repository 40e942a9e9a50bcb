"""``toolrelay serve -t http``: says where it listens and who may call, and a client reaches
it there."""

from __future__ import annotations

import re
import subprocess
import sys
import threading
from pathlib import Path

import pytest

from tests.extras import needs_extra

pytest.importorskip("mcp_types", reason=needs_extra("mcp"))

from mcp import Client
from typer.testing import CliRunner

from toolrelay.cli import app

MODULE = '''
from toolrelay.tools import tool


@tool(name="ops.server_time", read_only=True)
def server_time() -> str:
    """The current server time in UTC."""
    return "2026-11-30T12:00:00Z"
'''

_LISTENS = re.compile(r"listens at (http://\S+/mcp) \((.*)\); Ctrl\+C stops it")


def _gateway_file(folder: Path) -> Path:
    (folder / "ops_tools.py").write_text(MODULE, encoding="utf-8")
    path = folder / "gateway.toml"
    path.write_text(
        '[gateway]\nname = "t"\n\n[search]\nindex = "bm25"\n\n[[modules]]\npath = "ops_tools.py"\n',
        encoding="utf-8",
    )
    return path


async def test_http_prints_the_url_it_listens_on(tmp_path: Path) -> None:
    config = str(_gateway_file(tmp_path))
    # Any free port: the printed URL says which.
    command = [sys.executable, "-m", "toolrelay", "serve", config, "-t", "http", "--port", "0"]
    process = subprocess.Popen(  # noqa: ASYNC220 - started once; a thread reads its stderr
        command,
        stdin=subprocess.DEVNULL,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        text=True,
    )
    lines: list[str] = []
    announced = threading.Event()

    def read() -> None:
        assert process.stderr is not None
        for line in process.stderr:
            lines.append(line)
            if _LISTENS.search(line):
                announced.set()

    reader = threading.Thread(target=read, daemon=True)
    reader.start()
    try:
        assert announced.wait(timeout=60), "".join(lines)
        url, callers = next(m.groups() for line in lines if (m := _LISTENS.search(line)))
        # No [auth] on loopback: the local caller says who it is, and the line says so.
        assert callers == "_meta identity trusted: loopback, no authenticator"
        assert re.fullmatch(r"http://127\.0\.0\.1:\d+/mcp", url)
        assert not url.endswith(":0/mcp")  # the port it bound, not the one asked for
        async with Client(url, read_timeout_seconds=30) as client:
            listed = await client.list_tools()
        assert [t.name for t in listed.tools] == ["tool_search", "call_tool"]
    finally:
        process.terminate()
        try:
            process.wait(timeout=10)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()
        reader.join(timeout=5)
    assert lines[0].startswith("toolrelay serve: the MCP gateway listens at http://127.0.0.1:")


def test_a_malformed_gateway_file_is_a_one_line_error_naming_file_and_key(
    tmp_path: Path,
) -> None:
    config = _gateway_file(tmp_path)
    config.write_text(config.read_text() + '\n[[servers]]\nname = "pay"\nurl = 8080\n')
    result = CliRunner().invoke(app, ["serve", str(config)])
    assert result.exit_code == 1
    assert result.stderr == (f"error: {config}: [[servers]] #1 url: must be a string (got 8080)\n")
