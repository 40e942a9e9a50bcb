"""How to reach one MCP server: a command to run (stdio) or a URL (streamable HTTP).

::

    McpServerConfig(name="payments", command="python", args=("servers/payments.py",))
    McpServerConfig(name="tickets", url="http://127.0.0.1:8000/mcp", prefix="")

The same fields read from a TOML table (``[[servers]]`` of a gateway file) with
:meth:`McpServerConfig.from_mapping`. A bare ``python`` (or ``python3``) command is the
interpreter running toolrelay, so a server written in Python finds the packages toolrelay runs
with, from a virtual environment that was never activated too; give a path to run another one.
"""

from __future__ import annotations

import re
import sys
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from types import MappingProxyType
from typing import Any, Literal

from toolrelay.exceptions import ConfigurationError
from toolrelay.mcp._names import validate_prefix

__all__ = ["DEFAULT_CALL_TIMEOUT", "DEFAULT_CONNECT_TIMEOUT", "PYTHON_COMMANDS", "McpServerConfig"]

DEFAULT_CALL_TIMEOUT = 60.0
"""Seconds a tool call may take before the server counts as not answering."""

DEFAULT_CONNECT_TIMEOUT = 30.0
"""Seconds to start or reach a server and list its tools."""

PYTHON_COMMANDS = frozenset({"python", "python3"})
"""Commands that start the interpreter running toolrelay (``sys.executable``), not whichever
``python`` comes first on ``PATH``."""

_SERVER_NAME = re.compile(r"^[A-Za-z0-9_-]{1,40}$")
_FIELDS = (
    "name",
    "command",
    "args",
    "env",
    "cwd",
    "url",
    "headers",
    "prefix",
    "timeout",
    "connect_timeout",
    "stderr",
)


@dataclass(frozen=True, kw_only=True)
class McpServerConfig:
    """One MCP server and how its tools are named.

    Attributes:
        name: Names the server in errors and tool metadata; letters, digits, ``_``, ``-``.
        command: The program that runs a stdio server (with ``args``, ``env``, ``cwd``);
            ``python`` or ``python3`` is the interpreter running toolrelay (see
            :attr:`program`).
        args: Its arguments.
        env: Extra environment variables; the server also inherits the SDK's safe defaults
            (``PATH``, ``HOME``, ...), never the whole environment.
        cwd: Its working directory.
        url: The endpoint of a streamable HTTP server (``http://host:port/mcp``).
        headers: HTTP headers sent with every request (e.g. ``Authorization``).
        prefix: Put in front of each tool name as a category; ``None`` uses ``name``, ``""``
            none (see ``mcp_tool_name``).
        timeout: Seconds one tool call may take (``None``: no limit). Also the tool's
            ``ToolMetadata.timeout``, so the execution layer cancels it at the same time.
        connect_timeout: Seconds to start or reach the server and list its tools.
        stderr: Where a stdio server's standard error goes: ``"inherit"`` (this process's)
            or ``"discard"``.

    Raises:
        ConfigurationError: Neither or both of ``command`` and ``url``, a bad name, prefix
            or timeout.
    """

    name: str
    command: str | None = None
    args: tuple[str, ...] = ()
    env: Mapping[str, str] = field(default_factory=dict)
    cwd: str | None = None
    url: str | None = None
    headers: Mapping[str, str] = field(default_factory=dict)
    prefix: str | None = None
    timeout: float | None = DEFAULT_CALL_TIMEOUT
    connect_timeout: float = DEFAULT_CONNECT_TIMEOUT
    stderr: Literal["inherit", "discard"] = "inherit"

    def __post_init__(self) -> None:
        if not _SERVER_NAME.fullmatch(self.name):
            raise ConfigurationError(
                f"MCP server name {self.name!r} is not valid; use 1-40 letters, digits, '_', '-'"
            )
        if (self.command is None) == (self.url is None):
            raise ConfigurationError(
                f"MCP server {self.name!r} needs either a command (stdio) or a url "
                "(streamable HTTP), not both or neither"
            )
        if self.url is not None and not self.url.startswith(("http://", "https://")):
            raise ConfigurationError(
                f"MCP server {self.name!r}: url must start with http:// or https://"
            )
        if self.timeout is not None and self.timeout <= 0:
            raise ConfigurationError(f"MCP server {self.name!r}: timeout must be > 0")
        if self.connect_timeout <= 0:
            raise ConfigurationError(f"MCP server {self.name!r}: connect_timeout must be > 0")
        if self.stderr not in ("inherit", "discard"):
            raise ConfigurationError(
                f"MCP server {self.name!r}: stderr must be 'inherit' or 'discard'"
            )
        validate_prefix(self.tool_prefix, what=f"MCP server {self.name!r}: prefix")
        object.__setattr__(self, "args", tuple(self.args))
        object.__setattr__(self, "env", MappingProxyType(dict(self.env)))
        object.__setattr__(self, "headers", MappingProxyType(dict(self.headers)))

    @property
    def transport(self) -> Literal["stdio", "http"]:
        """``"stdio"`` for a command, ``"http"`` for a URL."""
        return "stdio" if self.command is not None else "http"

    @property
    def program(self) -> str | None:
        """The program a stdio server is started with (``None`` for a URL).

        ``command``, except that a bare ``python`` or ``python3`` is ``sys.executable``: the
        server then has the packages toolrelay has, whether or not its virtual environment
        is activated (``PATH`` need not lead to it).
        """
        if self.command in PYTHON_COMMANDS and sys.executable:
            return sys.executable
        return self.command

    @property
    def tool_prefix(self) -> str:
        """The prefix tool names get (``""`` for none)."""
        return self.name if self.prefix is None else self.prefix

    @classmethod
    def from_mapping(
        cls, data: Mapping[str, Any], *, base_dir: str | Path | None = None
    ) -> McpServerConfig:
        """Read a server from a mapping (e.g. a TOML table), with the field names above.

        Args:
            data: The fields; unknown keys are an error.
            base_dir: A relative ``cwd`` is relative to this folder, and a stdio server
                without ``cwd`` runs in it (so paths in ``args`` are relative to the file).

        Raises:
            ConfigurationError: Unknown keys, wrong value types, or an invalid server.
        """
        label = f"MCP server {data.get('name', '?')!r}"
        unknown = sorted(set(data) - set(_FIELDS))
        if unknown:
            raise ConfigurationError(
                f"{label}: unknown keys {unknown}; expected some of {list(_FIELDS)}"
            )
        name = _typed(data, "name", str, label)
        if name is None:
            raise ConfigurationError("an MCP server entry needs a name")
        cwd = _typed(data, "cwd", str, label)
        if base_dir is not None and data.get("command") is not None:
            cwd = str(Path(base_dir, cwd or "."))
        timeout = _typed(data, "timeout", (int, float), label)
        connect_timeout = _typed(data, "connect_timeout", (int, float), label)
        stderr = _typed(data, "stderr", str, label) or "inherit"
        return cls(
            name=name,
            command=_typed(data, "command", str, label),
            args=tuple(_strings(data, "args", label)),
            env=_string_map(data, "env", label),
            cwd=cwd,
            url=_typed(data, "url", str, label),
            headers=_string_map(data, "headers", label),
            prefix=_typed(data, "prefix", str, label),
            timeout=DEFAULT_CALL_TIMEOUT if timeout is None else float(timeout),
            connect_timeout=(
                DEFAULT_CONNECT_TIMEOUT if connect_timeout is None else float(connect_timeout)
            ),
            stderr=stderr,  # type: ignore[arg-type]  # checked in __post_init__
        )


def _typed(data: Mapping[str, Any], key: str, kind: type | tuple[type, ...], label: str) -> Any:
    value = data.get(key)
    if value is None:
        return None
    if not isinstance(value, kind) or isinstance(value, bool):
        raise ConfigurationError(f"{label}: {key} has the wrong type ({type(value).__name__})")
    return value


def _strings(data: Mapping[str, Any], key: str, label: str) -> list[str]:
    value = data.get(key, [])
    if not isinstance(value, list | tuple) or not all(isinstance(v, str) for v in value):
        raise ConfigurationError(f"{label}: {key} must be a list of strings")
    return list(value)


def _string_map(data: Mapping[str, Any], key: str, label: str) -> dict[str, str]:
    value = data.get(key, {})
    if not isinstance(value, Mapping) or not all(
        isinstance(k, str) and isinstance(v, str) for k, v in value.items()
    ):
        raise ConfigurationError(f"{label}: {key} must be a table of strings")
    return dict(value)
