from __future__ import annotations

import sys
from pathlib import Path

import pytest

from toolrelay._settings import read_table
from toolrelay.exceptions import ConfigurationError
from toolrelay.mcp import McpServerConfig
from toolrelay.mcp._config import DEFAULT_CALL_TIMEOUT


def test_stdio_and_http_servers() -> None:
    stdio = McpServerConfig(name="files", command="mcp-files", args=["--root", "/tmp"])
    http = McpServerConfig(name="tickets", url="http://127.0.0.1:9/mcp", prefix="")
    assert stdio.transport == "stdio"
    assert stdio.args == ("--root", "/tmp")
    assert stdio.tool_prefix == "files"
    assert http.transport == "http"
    assert http.tool_prefix == ""


def test_a_bare_python_command_is_the_running_interpreter() -> None:
    for command in ("python", "python3"):
        assert McpServerConfig(name="s", command=command).program == sys.executable
    assert McpServerConfig(name="s", command="/usr/bin/python3").program == "/usr/bin/python3"
    assert McpServerConfig(name="s", command="mcp-files").program == "mcp-files"
    assert McpServerConfig(name="s", url="http://127.0.0.1:9/mcp").program is None


@pytest.mark.parametrize(
    ("fields", "message"),
    [
        ({"name": "x"}, "either a command"),
        ({"name": "x", "command": "a", "url": "http://h/mcp"}, "either a command"),
        ({"name": "has space", "command": "a"}, "name: use 1-40 letters, digits"),
        ({"name": "x", "url": "ftp://h/mcp"}, "http://"),
        ({"name": "x", "command": "a", "timeout": 0}, "timeout"),
        ({"name": "x", "command": "a", "prefix": "a b"}, "prefix"),
        ({"name": "x", "command": "a", "stderr": "file"}, "stderr"),
    ],
)
def test_invalid_servers_are_rejected(fields: dict[str, object], message: str) -> None:
    with pytest.raises(ConfigurationError, match=message):
        McpServerConfig(**fields)  # type: ignore[arg-type]


def test_a_table_read_from_a_file(tmp_path: Path) -> None:
    config = read_table(
        McpServerConfig,
        {
            "name": "payments",
            "command": "python",
            "args": ["servers/payments.py"],
            "env": {"MODE": "test"},
            "prefix": "pay",
            "timeout": 5,
        },
        folder=tmp_path,
    )
    assert config.args == ("servers/payments.py",)
    assert dict(config.env) == {"MODE": "test"}
    assert config.tool_prefix == "pay"
    assert config.timeout == 5.0
    # A stdio server runs in the file's folder, so relative paths in args resolve there.
    assert config.cwd == str(tmp_path)
    assert read_table(
        McpServerConfig, {"name": "p", "command": "python", "cwd": "servers"}, folder=tmp_path
    ).cwd == str(tmp_path / "servers")
    # Built in Python, a cwd is the caller's.
    assert McpServerConfig(name="p", command="python", cwd="servers").cwd == "servers"


def test_a_table_with_defaults_and_http(tmp_path: Path) -> None:
    config = read_table(
        McpServerConfig,
        {"name": "t", "url": "https://example.test/mcp", "headers": {"Authorization": "x"}},
        folder=tmp_path,
    )
    assert config.cwd is None
    assert config.timeout == DEFAULT_CALL_TIMEOUT
    assert dict(config.headers) == {"Authorization": "x"}
    with pytest.raises(TypeError):  # read-only, as the config is frozen
        config.headers["Authorization"] = "y"  # type: ignore[index]


@pytest.mark.parametrize(
    ("table", "message"),
    [
        (
            {"name": "x", "command": "a", "colour": "red"},
            "colour: unknown key; expected one of name, command, args, env, cwd, url, headers, "
            "prefix, timeout, connect_timeout, stderr",
        ),
        ({"command": "a"}, "name: required"),
        ({"name": "x", "command": ["a"]}, 'command: must be a string (got ["a"])'),
        ({"name": "x", "command": "a", "args": "one"}, 'args: must be an array (got "one")'),
        (
            {"name": "x", "url": "http://h/mcp", "headers": {"a": 1}},
            "headers.a: must be a string (got 1)",
        ),
        ({"name": "x", "command": "a", "timeout": True}, "timeout: must be a number (got true)"),
        ({"name": "x", "command": "a", "timeout": -1}, "timeout: must be > 0 (got -1)"),
        (
            {"name": "x", "url": "ftp://h/mcp"},
            'url: must start with http:// or https:// (got "ftp://h/mcp")',
        ),
    ],
)
def test_bad_tables_name_the_key(table: dict[str, object], message: str) -> None:
    with pytest.raises(ConfigurationError) as caught:
        read_table(McpServerConfig, table)
    assert str(caught.value) == message
