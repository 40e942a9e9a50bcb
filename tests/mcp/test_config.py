from __future__ import annotations

import sys
from pathlib import Path

import pytest

from toolrelay.exceptions import ConfigurationError
from toolrelay.mcp import DEFAULT_CALL_TIMEOUT, McpServerConfig


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
        ({"name": "has space", "command": "a"}, "not valid"),
        ({"name": "x", "url": "ftp://h/mcp"}, "http://"),
        ({"name": "x", "command": "a", "timeout": 0}, "timeout"),
        ({"name": "x", "command": "a", "prefix": "a b"}, "prefix"),
        ({"name": "x", "command": "a", "stderr": "file"}, "stderr"),
    ],
)
def test_invalid_servers_are_rejected(fields: dict[str, object], message: str) -> None:
    with pytest.raises(ConfigurationError, match=message):
        McpServerConfig(**fields)  # type: ignore[arg-type]


def test_from_mapping_reads_a_toml_table(tmp_path: Path) -> None:
    config = McpServerConfig.from_mapping(
        {
            "name": "payments",
            "command": "python",
            "args": ["servers/payments.py"],
            "env": {"MODE": "test"},
            "prefix": "pay",
            "timeout": 5,
        },
        base_dir=tmp_path,
    )
    assert config.args == ("servers/payments.py",)
    assert dict(config.env) == {"MODE": "test"}
    assert config.tool_prefix == "pay"
    assert config.timeout == 5.0
    # A stdio server runs in the file's folder, so relative paths in args resolve there.
    assert config.cwd == str(tmp_path / ".")


def test_from_mapping_defaults_and_http(tmp_path: Path) -> None:
    config = McpServerConfig.from_mapping(
        {"name": "t", "url": "https://example.test/mcp", "headers": {"Authorization": "x"}},
        base_dir=tmp_path,
    )
    assert config.cwd is None
    assert config.timeout == DEFAULT_CALL_TIMEOUT
    assert dict(config.headers) == {"Authorization": "x"}


@pytest.mark.parametrize(
    ("table", "message"),
    [
        ({"name": "x", "command": "a", "colour": "red"}, "unknown keys"),
        ({"command": "a"}, "needs a name"),
        ({"name": "x", "command": ["a"]}, "wrong type"),
        ({"name": "x", "command": "a", "args": "one"}, "list of strings"),
        ({"name": "x", "url": "http://h/mcp", "headers": {"a": 1}}, "table of strings"),
        ({"name": "x", "command": "a", "timeout": True}, "wrong type"),
    ],
)
def test_from_mapping_rejects_bad_tables(table: dict[str, object], message: str) -> None:
    with pytest.raises(ConfigurationError, match=message):
        McpServerConfig.from_mapping(table)
