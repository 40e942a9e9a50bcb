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

    [auth]                    # over HTTP: who may call (see toolrelay.mcp.Authenticator)
    issuer = "https://auth.example.com"
    audience = "https://tools.example.com/mcp"
    jwks = "keys/jwks.json"   # or key = "keys/public.pem"; or [[auth.tokens]] entries

    [http]                    # over HTTP off loopback: TLS (or a proxy) and the host names
    tls_cert = "tls/cert.pem"
    tls_key = "tls/key.pem"   # or behind_proxy = true
    allowed_hosts = ["tools.example.com"]

    [scopes]                  # the tools each scope reaches (fnmatch patterns)
    "refunds:read" = ["refund.find_*", "refund.list_*"]
    "refunds:write" = ["refund.*"]

Relative paths (a server's ``cwd``, a module's ``path``, the approval handler's file, the
usage log, the idempotency and audit files, key and certificate files) are relative to the
file's folder, and stdio servers run there. A server's ``command = "python"`` is the
interpreter running the gateway (:attr:`~toolrelay.mcp.McpServerConfig.program`). Each
table is read into its model: an unknown table or key, a value of the wrong type or out of
range is an error naming it as the file does (``[search] max_results: must be between 1 and
10 (got 50)``).
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Annotated, Any, Literal, Self

from pydantic import AfterValidator, BeforeValidator, Field, Strict, model_validator

from toolrelay._settings import FrozenMapping, RelativePath, Settings, read_table, read_toml
from toolrelay.exceptions import ConfigurationError, LoadError
from toolrelay.execution._manager import DEFAULT_MAX_RESULT_CHARS
from toolrelay.gateway._policy import PolicyTable, ToolPolicy
from toolrelay.gateway._side_effects import ApprovalSettings, AuditSettings, IdempotencySettings
from toolrelay.mcp._auth import Authenticator
from toolrelay.mcp._config import McpServerConfig
from toolrelay.search._base import MAX_RESULTS_LIMIT
from toolrelay.search._usage import SQLiteUsageLog
from toolrelay.toolsearch import SearchOptions, ToolFilter
from toolrelay.toolsearch._options import DEFAULT_MAX_RESULTS, DEFAULT_MIN_RELATIVE_SCORE
from toolrelay.toolsearch._texts import SearchLanguage

__all__ = [
    "GatewayConfig",
    "HttpSettings",
    "IndexKind",
    "SearchSettings",
    "load_gateway_config",
    "parse_gateway_config",
]

IndexKind = Literal["regex", "bm25", "vector", "hybrid", "auto"]
"""The ``[search] index`` values."""


class SearchSettings(Settings):
    """The ``[search]`` table.

    Attributes:
        index: The kind of index: ``regex``, ``bm25``, ``vector``, ``hybrid`` or ``auto``.
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
            searches rank with (read from a file, relative to its folder); ``None``: none.
        shared_usage: One usage history for every tenant instead of one per tenant.
    """

    index: IndexKind = "auto"
    max_results: int = Field(DEFAULT_MAX_RESULTS, ge=1, le=MAX_RESULTS_LIMIT)
    min_score: float | None = None
    min_relative_score: float | None = Field(
        DEFAULT_MIN_RELATIVE_SCORE, ge=0, le=1, description="a fraction of the best hit's score"
    )
    language: SearchLanguage = "auto"
    usage_log: RelativePath | None = None
    shared_usage: bool = False

    @model_validator(mode="after")
    def _shared_log(self) -> Self:
        if self.shared_usage and self.usage_log is None:
            raise ValueError("shared_usage needs a usage_log file to share")
        return self

    def options(self, *, tool_filter: ToolFilter | None = None) -> SearchOptions:
        """The gateway's search options: this table's, with ``tool_filter`` (code only).

        The ``usage_log`` file is opened as a :class:`~toolrelay.search.SQLiteUsageLog`.
        """
        return SearchOptions(
            max_results=self.max_results,
            min_score=self.min_score,
            min_relative_score=self.min_relative_score,
            language=self.language,
            tool_filter=tool_filter,
            usage_log=None if self.usage_log is None else SQLiteUsageLog(self.usage_log),
            shared_usage=self.shared_usage,
        )


class HttpSettings(Settings):
    """The ``[http]`` table: how clients reach the gateway over HTTP (see ``run_http``).

    Attributes:
        tls_cert: A PEM certificate (chain) to serve HTTPS with, with ``tls_key``.
        tls_key: Its private key's PEM file.
        behind_proxy: A TLS-terminating proxy is in front; the gateway serves it plain HTTP.
        allowed_hosts: The ``Host`` names clients reach the gateway by (``name:*`` for any
            port); required off loopback, against DNS rebinding.
        allowed_origins: The ``Origin`` values browsers may send; by default ``https://``
            and each allowed host.
    """

    tls_cert: RelativePath | None = None
    tls_key: RelativePath | None = None
    behind_proxy: bool = False
    allowed_hosts: tuple[str, ...] = Field((), strict=False)
    allowed_origins: tuple[str, ...] = Field((), strict=False)


def _patterns(patterns: tuple[str, ...]) -> tuple[str, ...]:
    if not patterns or not all(patterns):
        raise ValueError('must name the tools the scope reaches, as ["refund.*"]')
    return patterns


Scopes = FrozenMapping[Annotated[tuple[str, ...], Strict(False), AfterValidator(_patterns)]]
"""The ``[scopes]`` table: scope -> the ``fnmatch`` patterns of the tools it reaches."""


class GatewayConfig(Settings):
    """What a gateway fronts and how it searches.

    :func:`load_gateway_config` reads one from a file. In code, a table is given as a dict of
    its keys, as the file writes them: ``GatewayConfig(modules=("tools.py",),
    search={"index": "bm25", "max_results": 3}, audit={"path": "audit.jsonl"})``.

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
        auth: Who may call over HTTP (:class:`~toolrelay.mcp.Authenticator`); the caller's
            identity is then its verified token's. ``None``: callers on loopback are trusted
            (their ``_meta`` says who they are), and the gateway serves no other address.
        http: TLS (or a proxy) and the host names, for HTTP.
        scopes: Which tools each scope reaches (``fnmatch`` patterns of their names). When
            given, a caller sees and runs only the tools its ``scopes`` (a context entry:
            the verified token's, or ``_meta``'s where trusted) reach, as with a
            ``tool_filter`` (and together with one given in code).

    Raises:
        ConfigurationError: No servers and no modules, or an invalid or unknown field.
    """

    name: str = Field("toolrelay-gateway", min_length=1)
    instructions: str | None = None
    timeout: float | None = Field(None, gt=0)
    servers: tuple[McpServerConfig, ...] = Field((), strict=False)
    modules: tuple[str, ...] = Field((), strict=False)
    search: SearchSettings = SearchSettings()
    context: FrozenMapping[Any] = Field(default_factory=dict)
    tools: tuple[ToolPolicy, ...] = Field((), strict=False)
    approval: ApprovalSettings = ApprovalSettings()
    idempotency: IdempotencySettings = IdempotencySettings()
    audit: AuditSettings | None = None
    max_result_chars: int | None = Field(DEFAULT_MAX_RESULT_CHARS, ge=1)
    auth: Authenticator | None = None
    http: HttpSettings = HttpSettings()
    scopes: Scopes = Field(default_factory=dict)

    @model_validator(mode="after")
    def _has_tools(self) -> Self:
        if not self.servers and not self.modules:
            raise ValueError("the gateway has no tools: add [[servers]] or [[modules]] entries")
        return self


def load_gateway_config(path: str | Path) -> GatewayConfig:
    """Read a gateway file (see the module docs).

    Raises:
        LoadError: The file cannot be read, is not TOML, or its settings are invalid (the
            reason names each setting, as ``[table] key``, and what it takes).
    """
    file = Path(path)
    data = read_toml(file)
    try:
        return parse_gateway_config(data, base_dir=file.resolve().parent)
    except ConfigurationError as exc:
        raise LoadError(str(file), str(exc)) from exc


def parse_gateway_config(data: Mapping[str, Any], *, base_dir: str | Path) -> GatewayConfig:
    """Build a :class:`GatewayConfig` from parsed TOML (see the module docs).

    Args:
        data: The parsed file.
        base_dir: The folder relative paths are in (the file's).

    Raises:
        ConfigurationError: Unknown tables or keys, wrong types, or invalid values, each
            named as ``[table] key``.
    """
    file = read_table(_GatewayFile, data, folder=Path(base_dir))
    return GatewayConfig(
        **dict(file.gateway),
        servers=file.servers,
        modules=tuple(entry.spec for entry in file.modules),
        search=file.search,
        context=file.context,
        tools=tuple(ToolPolicy(tools=name, **dict(table)) for name, table in file.tools.items()),
        approval=file.approval,
        idempotency=file.idempotency,
        audit=file.audit,
        auth=file.auth,
        http=file.http,
        scopes=file.scopes,
    )


def _zero_is_no_bound(value: object) -> object:
    # TOML has no null: 0, never a bound, says "no bound".
    return None if type(value) is int and value == 0 else value


class _GatewayTable(Settings):
    """The ``[gateway]`` table."""

    name: str = Field("toolrelay-gateway", min_length=1)
    instructions: str | None = None
    timeout: float | None = Field(None, gt=0)
    max_result_chars: Annotated[int | None, BeforeValidator(_zero_is_no_bound)] = Field(
        DEFAULT_MAX_RESULT_CHARS, ge=1, description="or 0 for no bound"
    )


class _ModuleEntry(Settings):
    """A ``[[modules]]`` entry."""

    path: RelativePath | None = None
    module: str | None = None

    @model_validator(mode="after")
    def _one_source(self) -> Self:
        if (self.path is None) == (self.module is None):
            raise ValueError("needs a path or a module, not both")
        return self

    @property
    def spec(self) -> str:
        """The file's path, or the module's name."""
        return self.path if self.path is not None else str(self.module)


class _GatewayFile(Settings):
    """A gateway file's tables."""

    gateway: _GatewayTable = _GatewayTable()
    search: SearchSettings = SearchSettings()
    context: dict[str, Any] = Field(default_factory=dict)
    servers: tuple[McpServerConfig, ...] = Field((), strict=False)
    modules: tuple[_ModuleEntry, ...] = Field((), strict=False)
    tools: dict[str, PolicyTable] = Field(default_factory=dict)
    approval: ApprovalSettings = ApprovalSettings()
    idempotency: IdempotencySettings = IdempotencySettings()
    audit: AuditSettings | None = None
    auth: Authenticator | None = None
    http: HttpSettings = HttpSettings()
    scopes: Scopes = Field(default_factory=dict)
