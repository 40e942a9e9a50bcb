"""The gateway's TOML file: upstream MCP servers, Python tool modules, search and context.

.. code-block:: toml

    [gateway]                 # all optional
    name = "refund-desk"      # the server name MCP clients see
    instructions = "..."      # replaces the default text telling clients how to search
    timeout = 60              # seconds a module tool may run (MCP servers have their own)

    [search]
    index = "bm25"            # regex | bm25 | vector | hybrid | auto (the default)
    max_results = 5           # hits per search when the client does not say (1-10)
    min_score = 0.5           # drop weaker hits (on the index's own scale)

    [context]                 # tool context of every call; overrides a request's _meta
    tenant_id = "acme"

    [[servers]]               # see McpServerConfig: name, command/args/env/cwd or url/headers,
    name = "payments"         # prefix, timeout, connect_timeout, stderr
    command = "python"
    args = ["servers/payments.py"]

    [[modules]]
    path = "tools/notify.py"  # a Python file, or module = "package.module"

Relative paths (a server's ``cwd``, a module's ``path``) are relative to the file's folder,
and stdio servers run there.
"""

from __future__ import annotations

import tomllib
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from types import MappingProxyType
from typing import Any

from toolrelay.exceptions import ConfigurationError, LoadError
from toolrelay.mcp.config import McpServerConfig
from toolrelay.search.base import DEFAULT_MAX_RESULTS, MAX_RESULTS_LIMIT

__all__ = [
    "INDEX_KINDS",
    "GatewayConfig",
    "SearchSettings",
    "load_gateway_config",
    "parse_gateway_config",
]

INDEX_KINDS = ("regex", "bm25", "vector", "hybrid", "auto")
"""The ``[search] index`` values."""

_SECTIONS = ("gateway", "search", "context", "servers", "modules")


@dataclass(frozen=True, kw_only=True)
class SearchSettings:
    """The ``[search]`` table.

    Attributes:
        index: The kind of index (see :data:`INDEX_KINDS`).
        max_results: Hits per search when the client does not say.
        min_score: Hits scoring below this are dropped; ``None`` keeps all.
    """

    index: str = "auto"
    max_results: int = DEFAULT_MAX_RESULTS
    min_score: float | None = None

    def __post_init__(self) -> None:
        if self.index not in INDEX_KINDS:
            raise ConfigurationError(
                f"unknown index {self.index!r}; choose one of {', '.join(INDEX_KINDS)}"
            )
        if not 1 <= self.max_results <= MAX_RESULTS_LIMIT:
            raise ConfigurationError(f"max_results must be between 1 and {MAX_RESULTS_LIMIT}")


@dataclass(frozen=True, kw_only=True)
class GatewayConfig:
    """What a gateway fronts and how it searches.

    Attributes:
        name: The MCP server name clients see.
        instructions: Text for clients about the server; ``None`` uses the gateway's default.
        timeout: Seconds a module tool may run (``None``: no limit).
        servers: The upstream MCP servers.
        modules: Python modules with tools: file paths (absolute once loaded from a file)
            or dotted module names.
        search: The ``[search]`` settings.
        context: Tool context entries every call gets (they override a request's ``_meta``).
    """

    name: str = "toolrelay-gateway"
    instructions: str | None = None
    timeout: float | None = None
    servers: tuple[McpServerConfig, ...] = ()
    modules: tuple[str, ...] = ()
    search: SearchSettings = field(default_factory=SearchSettings)
    context: Mapping[str, Any] = field(default_factory=dict)

    def __post_init__(self) -> None:
        if not self.servers and not self.modules:
            raise ConfigurationError(
                "the gateway has no tools: add [[servers]] or [[modules]] entries"
            )
        if self.timeout is not None and self.timeout <= 0:
            raise ConfigurationError("[gateway] timeout must be > 0")
        object.__setattr__(self, "servers", tuple(self.servers))
        object.__setattr__(self, "modules", tuple(self.modules))
        object.__setattr__(self, "context", MappingProxyType(dict(self.context)))


def load_gateway_config(path: str | Path) -> GatewayConfig:
    """Read a gateway file (see the module docs).

    Raises:
        LoadError: The file cannot be read, is not TOML, or its settings are invalid (the
            reason names the setting).
    """
    file = Path(path)
    try:
        data = tomllib.loads(file.read_text(encoding="utf-8"))
    except OSError as exc:
        raise LoadError(str(file), f"cannot read the file: {exc.strerror or exc}") from exc
    except tomllib.TOMLDecodeError as exc:
        raise LoadError(str(file), f"not valid TOML: {exc}") from exc
    try:
        return parse_gateway_config(data, base_dir=file.resolve().parent)
    except ConfigurationError as exc:
        raise LoadError(str(file), str(exc)) from exc


def parse_gateway_config(data: Mapping[str, Any], *, base_dir: str | Path) -> GatewayConfig:
    """Build a :class:`GatewayConfig` from parsed TOML (see the module docs).

    Raises:
        ConfigurationError: Unknown sections or keys, wrong types, or invalid values.
    """
    unknown = sorted(set(data) - set(_SECTIONS))
    if unknown:
        raise ConfigurationError(f"unknown sections {unknown}; expected some of {_SECTIONS}")
    gateway = _table(data, "gateway")
    _only(gateway, "gateway", ("name", "instructions", "timeout"))
    search = _table(data, "search")
    _only(search, "search", ("index", "max_results", "min_score"))
    servers = [
        McpServerConfig.from_mapping(entry, base_dir=base_dir) for entry in _tables(data, "servers")
    ]
    modules = [_module(entry, Path(base_dir)) for entry in _tables(data, "modules")]
    timeout = gateway.get("timeout")
    min_score = search.get("min_score")
    return GatewayConfig(
        name=_text(gateway, "name", "gateway") or "toolrelay-gateway",
        instructions=_text(gateway, "instructions", "gateway"),
        timeout=None if timeout is None else _number(timeout, "[gateway] timeout"),
        servers=tuple(servers),
        modules=tuple(modules),
        search=SearchSettings(
            index=_text(search, "index", "search") or "auto",
            max_results=int(_number(search.get("max_results", DEFAULT_MAX_RESULTS), "max_results")),
            min_score=None if min_score is None else _number(min_score, "[search] min_score"),
        ),
        context=_table(data, "context"),
    )


def _module(entry: Mapping[str, Any], base_dir: Path) -> str:
    _only(entry, "modules", ("path", "module"))
    path, module = entry.get("path"), entry.get("module")
    if (path is None) == (module is None) or not isinstance(path or module, str):
        raise ConfigurationError("each [[modules]] entry needs a path or a module, as a string")
    return str(base_dir / path) if isinstance(path, str) else str(module)


def _table(data: Mapping[str, Any], key: str) -> dict[str, Any]:
    value = data.get(key, {})
    if not isinstance(value, Mapping):
        raise ConfigurationError(f"[{key}] must be a table")
    return dict(value)


def _tables(data: Mapping[str, Any], key: str) -> list[Mapping[str, Any]]:
    value = data.get(key, [])
    if not isinstance(value, list) or not all(isinstance(v, Mapping) for v in value):
        raise ConfigurationError(f"{key} must be an array of tables ([[{key}]])")
    return value


def _only(table: Mapping[str, Any], section: str, allowed: tuple[str, ...]) -> None:
    unknown = sorted(set(table) - set(allowed))
    if unknown:
        raise ConfigurationError(
            f"unknown keys in [{section}]: {unknown}; expected some of {list(allowed)}"
        )


def _text(table: Mapping[str, Any], key: str, section: str) -> str | None:
    value = table.get(key)
    if value is not None and not isinstance(value, str):
        raise ConfigurationError(f"[{section}] {key} must be a string")
    return value


def _number(value: Any, what: str) -> float:
    if isinstance(value, bool) or not isinstance(value, int | float):
        raise ConfigurationError(f"{what} must be a number")
    return float(value)
