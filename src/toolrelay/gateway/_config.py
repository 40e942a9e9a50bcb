"""The gateway's TOML file: upstream MCP servers, Python tool modules, search and context.

.. code-block:: toml

    [gateway]                 # all optional
    name = "refund-desk"      # the server name MCP clients see
    instructions = "..."      # replaces the default text telling clients how to search
    timeout = 60              # seconds a module tool may run (MCP servers have their own)
    max_result_chars = 20000  # characters of a tool's result a client reads; 0: no bound

    [search]
    index = "bm25"            # regex | bm25 | vector | hybrid | auto (the default)
    max_results = 5           # hits per search when the client does not say (1-10)
    min_score = 0.5           # drop weaker hits (on the index's own scale)
    min_relative_score = 0.5  # drop hits under this fraction of the best hit's score; 0 keeps all
    language = "auto"         # of the texts clients read: auto (the catalog's), en, zh

    [context]                 # tool context of every call; overrides a request's _meta
    tenant_id = "acme"

    [[servers]]               # see McpServerConfig: name, command/args/env/cwd or url/headers,
    name = "payments"         # prefix, timeout, connect_timeout, stderr
    command = "python"
    args = ["servers/payments.py"]

    [[modules]]
    path = "tools/notify.py"  # a Python file, or module = "package.module"

    [tools."refund.retry_failed_order"]   # per tool name or pattern; see gateway.policy
    requires_approval = true
    idempotency_key = ["refund_id"]

    [approval]                # see gateway.side_effects: handler, destructive
    handler = "approvals.py:decide"

    [idempotency]             # path (SQLite; in memory without), ttl, lease, wait
    [audit]                   # path (JSON lines), include_arguments

Relative paths (a server's ``cwd``, a module's ``path``, the approval handler's file, the
idempotency and audit files) are relative to the file's folder, and stdio servers run there.
A server's ``command = "python"`` is the interpreter running the gateway
(:attr:`~toolrelay.mcp.McpServerConfig.program`).
"""

from __future__ import annotations

import tomllib
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from types import MappingProxyType
from typing import Any, cast, get_args

from toolrelay.exceptions import ConfigurationError, LoadError
from toolrelay.execution._idempotency import DEFAULT_LEASE, DEFAULT_WAIT
from toolrelay.execution._manager import DEFAULT_MAX_RESULT_CHARS
from toolrelay.gateway._policy import ToolPolicy
from toolrelay.gateway._side_effects import ApprovalSettings, AuditSettings, IdempotencySettings
from toolrelay.mcp._config import McpServerConfig
from toolrelay.search._base import DEFAULT_MAX_RESULTS, MAX_RESULTS_LIMIT
from toolrelay.tools._base import check_result_chars
from toolrelay.toolsearch import DEFAULT_MIN_RELATIVE_SCORE
from toolrelay.toolsearch._texts import SearchLanguage

__all__ = [
    "INDEX_KINDS",
    "LANGUAGES",
    "GatewayConfig",
    "SearchSettings",
    "load_gateway_config",
    "parse_gateway_config",
]

INDEX_KINDS = ("regex", "bm25", "vector", "hybrid", "auto")
"""The ``[search] index`` values."""

LANGUAGES: tuple[SearchLanguage, ...] = get_args(SearchLanguage)
"""The ``[search] language`` values."""

_SECTIONS = (
    "gateway",
    "search",
    "context",
    "servers",
    "modules",
    "tools",
    "approval",
    "idempotency",
    "audit",
)


@dataclass(frozen=True, kw_only=True)
class SearchSettings:
    """The ``[search]`` table.

    Attributes:
        index: The kind of index (see :data:`INDEX_KINDS`).
        max_results: Hits per search when the client does not say.
        min_score: Hits scoring below this are dropped; ``None`` keeps all.
        min_relative_score: Hits scoring below this fraction (0-1) of the best hit's score
            are dropped; ``None`` (or ``0``, as TOML has no null) keeps all. See
            :class:`~toolrelay.gateway.ToolGateway` for why it is on by default.
        language: The language of what clients read besides the catalog (the two tools'
            texts, the "not available" answer, the default instructions): ``"auto"`` (the
            catalog's language, see :class:`~toolrelay.toolsearch.SearchTexts`), ``"en"``
            or ``"zh"``.
        usage_log: A SQLite file of past searches that led to successful calls, which
            searches rank with (absolute once loaded from a file); ``None``: none.
        shared_usage: One usage history for every tenant instead of one per tenant.
    """

    index: str = "auto"
    max_results: int = DEFAULT_MAX_RESULTS
    min_score: float | None = None
    min_relative_score: float | None = DEFAULT_MIN_RELATIVE_SCORE
    language: SearchLanguage = "auto"
    usage_log: str | None = None
    shared_usage: bool = False

    def __post_init__(self) -> None:
        if self.shared_usage and self.usage_log is None:
            raise ConfigurationError("[search] shared_usage needs a usage_log file to share")
        if self.index not in INDEX_KINDS:
            raise ConfigurationError(
                f"unknown index {self.index!r}; choose one of {', '.join(INDEX_KINDS)}"
            )
        if self.language not in LANGUAGES:
            raise ConfigurationError(
                f"unknown language {self.language!r}; choose one of {', '.join(LANGUAGES)}"
            )
        if not 1 <= self.max_results <= MAX_RESULTS_LIMIT:
            raise ConfigurationError(f"max_results must be between 1 and {MAX_RESULTS_LIMIT}")
        ratio = self.min_relative_score
        if ratio is not None and not 0.0 <= ratio <= 1.0:
            raise ConfigurationError(
                f"[search] min_relative_score must be between 0 and 1 (a fraction of the best "
                f"hit's score), not {ratio}"
            )


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
        tools: Side-effect policies per tool name or pattern (``[tools."NAME"]``).
        approval: Who decides about calls that need approval.
        idempotency: Where results of idempotent calls are recorded.
        audit: Where one record per call goes; ``None`` for no audit trail.
        max_result_chars: Characters of a tool's result (or error text) a client reads, for
            tools whose metadata sets none; a longer one is cut, with a note. ``None`` (``0``
            in the file, as TOML has no null): no bound.
    """

    name: str = "toolrelay-gateway"
    instructions: str | None = None
    timeout: float | None = None
    servers: tuple[McpServerConfig, ...] = ()
    modules: tuple[str, ...] = ()
    search: SearchSettings = field(default_factory=SearchSettings)
    context: Mapping[str, Any] = field(default_factory=dict)
    tools: tuple[ToolPolicy, ...] = ()
    approval: ApprovalSettings = field(default_factory=ApprovalSettings)
    idempotency: IdempotencySettings = field(default_factory=IdempotencySettings)
    audit: AuditSettings | None = None
    max_result_chars: int | None = DEFAULT_MAX_RESULT_CHARS

    def __post_init__(self) -> None:
        if not self.servers and not self.modules:
            raise ConfigurationError(
                "the gateway has no tools: add [[servers]] or [[modules]] entries"
            )
        if self.timeout is not None and self.timeout <= 0:
            raise ConfigurationError("[gateway] timeout must be > 0")
        check_result_chars(
            "[gateway] max_result_chars", self.max_result_chars, unbounded="0 means no bound"
        )
        object.__setattr__(self, "servers", tuple(self.servers))
        object.__setattr__(self, "modules", tuple(self.modules))
        object.__setattr__(self, "tools", tuple(self.tools))
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
    _only(gateway, "gateway", ("name", "instructions", "timeout", "max_result_chars"))
    search = _table(data, "search")
    _only(
        search,
        "search",
        (
            "index",
            "max_results",
            "min_score",
            "min_relative_score",
            "language",
            "usage_log",
            "shared_usage",
        ),
    )
    usage_log = _text(search, "usage_log", "search")
    servers = [
        McpServerConfig.from_mapping(entry, base_dir=base_dir) for entry in _tables(data, "servers")
    ]
    modules = [_module(entry, Path(base_dir)) for entry in _tables(data, "modules")]
    policies = [
        ToolPolicy.from_mapping(name, table) for name, table in _table(data, "tools").items()
    ]
    timeout = gateway.get("timeout")
    max_result_chars = gateway.get("max_result_chars", DEFAULT_MAX_RESULT_CHARS)
    min_score = search.get("min_score")
    relative = search.get("min_relative_score", DEFAULT_MIN_RELATIVE_SCORE)
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
            min_relative_score=_number(relative, "[search] min_relative_score"),
            language=cast(SearchLanguage, _text(search, "language", "search") or "auto"),
            usage_log=None if usage_log is None else str(Path(base_dir) / usage_log),
            shared_usage=_flag(search, "shared_usage", "search", default=False),
        ),
        context=_table(data, "context"),
        tools=tuple(policies),
        approval=_approval(_table(data, "approval"), Path(base_dir)),
        idempotency=_idempotency(_table(data, "idempotency"), Path(base_dir)),
        audit=_audit(data, Path(base_dir)),
        # TOML has no null: 0 (never a bound) says "no bound".
        max_result_chars=None
        if type(max_result_chars) is int and max_result_chars == 0
        else max_result_chars,
    )


def _approval(table: Mapping[str, Any], base_dir: Path) -> ApprovalSettings:
    _only(table, "approval", ("handler", "destructive"))
    handler = _text(table, "handler", "approval")
    if handler is not None:
        target, _, name = handler.rpartition(":")
        if target.endswith(".py") or "/" in target:  # a file, not a dotted module name
            handler = f"{base_dir / target}:{name}"
    return ApprovalSettings(
        handler=handler, destructive=_flag(table, "destructive", "approval", default=False)
    )


def _idempotency(table: Mapping[str, Any], base_dir: Path) -> IdempotencySettings:
    _only(table, "idempotency", ("path", "ttl", "lease", "wait"))
    path = _text(table, "path", "idempotency")
    ttl = table.get("ttl")
    return IdempotencySettings(
        path=None if path is None else str(base_dir / path),
        ttl=None if ttl is None else _number(ttl, "[idempotency] ttl"),
        lease=_number(table.get("lease", DEFAULT_LEASE), "[idempotency] lease"),
        wait=_number(table.get("wait", DEFAULT_WAIT), "[idempotency] wait"),
    )


def _audit(data: Mapping[str, Any], base_dir: Path) -> AuditSettings | None:
    if "audit" not in data:
        return None
    table = _table(data, "audit")
    _only(table, "audit", ("path", "include_arguments"))
    path = _text(table, "path", "audit")
    if path is None:
        raise ConfigurationError("[audit] needs a path (the JSON-lines file)")
    return AuditSettings(
        path=str(base_dir / path),
        include_arguments=_flag(table, "include_arguments", "audit", default=False),
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


def _flag(table: Mapping[str, Any], key: str, section: str, *, default: bool) -> bool:
    value = table.get(key, default)
    if not isinstance(value, bool):
        raise ConfigurationError(f"[{section}] {key} must be true or false")
    return value


def _number(value: Any, what: str) -> float:
    if isinstance(value, bool) or not isinstance(value, int | float):
        raise ConfigurationError(f"{what} must be a number")
    return float(value)
