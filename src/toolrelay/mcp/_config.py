"""How to reach one MCP server: a command to run (stdio) or a URL (streamable HTTP).

::

    McpServerConfig(name="payments", command="python", args=("servers/payments.py",))
    McpServerConfig(name="tickets", url="http://127.0.0.1:8000/mcp", prefix="")

The same fields are the keys of a gateway file's ``[[servers]]`` tables. A bare ``python``
(or ``python3``) command is the interpreter running toolrelay, so a server written in Python
finds the packages toolrelay runs with, from a virtual environment that was never activated
too; give a path to run another one.
"""

from __future__ import annotations

import re
import sys
from typing import Literal, Self

from pydantic import Field, ValidationInfo, field_validator, model_validator

from toolrelay._settings import FrozenMapping, Settings, file_folder
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


class McpServerConfig(Settings):
    """One MCP server and how its tools are named.

    Attributes:
        name: Names the server in errors and tool metadata; letters, digits, ``_``, ``-``.
        command: The program that runs a stdio server (with ``args``, ``env``, ``cwd``);
            ``python`` or ``python3`` is the interpreter running toolrelay (see
            :attr:`program`).
        args: Its arguments.
        env: Extra environment variables; the server also inherits the SDK's safe defaults
            (``PATH``, ``HOME``, ...), never the whole environment.
        cwd: Its working directory. Read from a file, relative to the file's folder, where a
            stdio server without one runs (so paths in ``args`` are relative to the file).
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
        ConfigurationError: Neither or both of ``command`` and ``url``, a bad name, url,
            prefix or timeout, a value of the wrong type, or an unknown field.
    """

    name: str
    command: str | None = None
    args: tuple[str, ...] = Field((), strict=False)
    env: FrozenMapping[str] = Field(default_factory=dict)
    cwd: str | None = Field(None, validate_default=True)
    url: str | None = None
    headers: FrozenMapping[str] = Field(default_factory=dict)
    prefix: str | None = None
    timeout: float | None = Field(DEFAULT_CALL_TIMEOUT, gt=0)
    connect_timeout: float = Field(DEFAULT_CONNECT_TIMEOUT, gt=0)
    stderr: Literal["inherit", "discard"] = "inherit"

    @field_validator("name")
    @classmethod
    def _valid_name(cls, name: str) -> str:
        if not _SERVER_NAME.fullmatch(name):
            raise ValueError("use 1-40 letters, digits, '_', '-'")
        return name

    @field_validator("cwd")
    @classmethod
    def _beside_file(cls, cwd: str | None, info: ValidationInfo) -> str | None:
        folder = file_folder(info)
        if folder is None or info.data.get("command") is None:
            return cwd
        return str(folder / (cwd or "."))

    @field_validator("url")
    @classmethod
    def _http_url(cls, url: str | None) -> str | None:
        if url is not None and not url.startswith(("http://", "https://")):
            raise ValueError("must start with http:// or https://")
        return url

    @field_validator("prefix")
    @classmethod
    def _usable_prefix(cls, prefix: str | None) -> str | None:
        try:
            return None if prefix is None else validate_prefix(prefix, what="the prefix")
        except ConfigurationError as exc:
            raise ValueError(str(exc)) from None

    @model_validator(mode="after")
    def _one_transport(self) -> Self:
        if (self.command is None) == (self.url is None):
            raise ValueError(
                f"MCP server {self.name!r} needs either a command (stdio) or a url "
                "(streamable HTTP), not both or neither"
            )
        return self

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
