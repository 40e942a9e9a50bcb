from __future__ import annotations

import dataclasses
import tomllib
from pathlib import Path

import pytest
from pydantic import ValidationError

from toolrelay.exceptions import ConfigurationError, LoadError
from toolrelay.execution import DEFAULT_MAX_RESULT_CHARS
from toolrelay.gateway import GatewayConfig, ToolPolicy, load_gateway_config, open_gateway
from toolrelay.gateway._config import SearchSettings, parse_gateway_config
from toolrelay.gateway._side_effects import ApprovalSettings, AuditSettings, IdempotencySettings
from toolrelay.search import SQLiteUsageLog
from toolrelay.tools import ToolContext, ToolDefinition
from toolrelay.toolsearch import SearchOptions
from toolrelay.toolsearch._options import DEFAULT_MIN_RELATIVE_SCORE

from ._helpers import demo_server_table


def write(tmp_path: Path, text: str) -> Path:
    path = tmp_path / "gateway.toml"
    path.write_text(text, encoding="utf-8")
    return path


def test_a_full_file(tmp_path: Path) -> None:
    path = write(
        tmp_path,
        """
[gateway]
name = "desk"
timeout = 30

[search]
index = "bm25"
max_results = 3
min_score = 0.5
min_relative_score = 0.25
language = "zh"

[context]
tenant_id = "acme"

[[servers]]
name = "payments"
command = "python"
args = ["servers/payments.py"]
prefix = ""

[[servers]]
name = "tickets"
url = "http://127.0.0.1:8000/mcp"

[[modules]]
path = "tools/notify.py"

[[modules]]
module = "examples.refund_desk"
""",
    )
    config = load_gateway_config(path)
    assert config.name == "desk"
    assert config.timeout == 30.0
    assert config.search == SearchSettings(
        index="bm25", max_results=3, min_score=0.5, min_relative_score=0.25, language="zh"
    )
    assert dict(config.context) == {"tenant_id": "acme"}
    payments, tickets = config.servers
    assert (payments.name, payments.tool_prefix, payments.cwd) == ("payments", "", str(tmp_path))
    assert (tickets.transport, tickets.tool_prefix) == ("http", "tickets")
    assert config.modules == (str(tmp_path / "tools/notify.py"), "examples.refund_desk")


def test_defaults(tmp_path: Path) -> None:
    config = load_gateway_config(write(tmp_path, demo_server_table()))
    assert config.name == "toolrelay-gateway"
    assert config.search == SearchSettings()
    assert config.search.index == "auto"
    assert config.search.language == "auto"
    assert config.search.min_relative_score == DEFAULT_MIN_RELATIVE_SCORE
    assert config.modules == ()
    assert config.max_result_chars == DEFAULT_MAX_RESULT_CHARS == 20_000


@pytest.mark.parametrize(("setting", "expected"), [("5000", 5_000), ("0", None)])
def test_max_result_chars_takes_a_count_or_0_for_no_bound(
    tmp_path: Path, setting: str, expected: int | None
) -> None:
    text = f"[gateway]\nmax_result_chars = {setting}\n" + demo_server_table()
    assert load_gateway_config(write(tmp_path, text)).max_result_chars == expected


SERVER = demo_server_table()


@pytest.mark.parametrize(
    ("text", "reason"),
    [
        ("", "the gateway has no tools: add [[servers]] or [[modules]] entries"),
        (
            "[extra]\na = 1\n",
            "[extra]: unknown table; expected one of gateway, search, context, servers, "
            "modules, tools, approval, idempotency, audit, auth, http, scopes",
        ),
        (
            '[scopes]\n"refunds:read" = []\n' + SERVER,
            'scopes."refunds:read": must name the tools the scope reaches, as ["refund.*"] '
            "(got [])",
        ),
        (
            '[scopes]\n"refunds:read" = "refund.*"\n' + SERVER,
            'scopes."refunds:read": must be an array (got "refund.*")',
        ),
        (
            "[http]\nbehind_proxy = 1\n" + SERVER,
            "[http] behind_proxy: must be true or false (got 1)",
        ),
        (
            '[gateway]\ncolour = "red"\n',
            "[gateway] colour: unknown key; expected one of name, instructions, timeout, "
            "max_result_chars",
        ),
        (
            '[search]\ncolour = "red"\n' + SERVER,
            "[search] colour: unknown key; expected one of index, max_results, min_score, "
            "min_relative_score, language, usage_log, shared_usage",
        ),
        (
            '[search]\nindex = "magic"\n' + SERVER,
            "[search] index: must be 'regex', 'bm25', 'vector', 'hybrid' or 'auto' (got \"magic\")",
        ),
        (
            "[search]\nmax_results = 50\n" + SERVER,
            "[search] max_results: must be between 1 and 10 (got 50)",
        ),
        (
            "[search]\nmax_results = 2.5\n" + SERVER,
            "[search] max_results: must be a whole number (got 2.5)",
        ),
        (
            '[search]\nlanguage = "fr"\n' + SERVER,
            "[search] language: must be 'auto', 'en' or 'zh' (got \"fr\")",
        ),
        (
            "[search]\nlanguage = 1\n" + SERVER,
            "[search] language: must be 'auto', 'en' or 'zh' (got 1)",
        ),
        (
            '[search]\nmin_score = "high"\n' + SERVER,
            '[search] min_score: must be a number (got "high")',
        ),
        (
            '[[modules]]\npath = "a.py"\nmodule = "b"\n',
            "[[modules]] #1: needs a path or a module, not both",
        ),
        (
            '[[modules]]\nmodule = "b"\n\n[[modules]]\nfile = "a.py"\n',
            "[[modules]] #2 file: unknown key; expected one of path, module",
        ),
        (
            '[[servers]]\nname = "x"\n',
            "[[servers]] #1: MCP server 'x' needs either a command (stdio) or a url "
            "(streamable HTTP), not both or neither",
        ),
        ("servers = 3\n", "[[servers]]: must be an array of tables (got 3)"),
        (
            SERVER + '[[servers]]\nname = "x"\ncommand = "python"\ncolour = "red"\n',
            "[[servers]] #2 colour: unknown key; expected one of name, command, args, env, cwd, "
            "url, headers, prefix, timeout, connect_timeout, stderr",
        ),
        (
            SERVER + '[[servers]]\nname = "x"\ncommand = ["python"]\n',
            '[[servers]] #2 command: must be a string (got ["python"])',
        ),
        (
            '[[servers]]\nname = "x"\ncommand = "python"\nconnect_timeout = 0\n',
            "[[servers]] #1 connect_timeout: must be > 0 (got 0)",
        ),
        (
            '[[servers]]\nname = "x"\ncommand = "python"\nargs = ["a", 2]\nenv = { A = 1 }\n',
            "[[servers]] #1 args[1]: must be a string (got 2); "
            "[[servers]] #1 env.A: must be a string (got 1)",
        ),
        ("[gateway]\ntimeout = -1\n" + SERVER, "[gateway] timeout: must be > 0 (got -1)"),
        (
            '[gateway]\ntimeout = "soon"\n' + SERVER,
            '[gateway] timeout: must be a number (got "soon")',
        ),
        (
            "[gateway]\nmax_result_chars = -1\n" + SERVER,
            "[gateway] max_result_chars: must be >= 1, or 0 for no bound (got -1)",
        ),
        (
            "[gateway]\nmax_result_chars = 2.5\n" + SERVER,
            "[gateway] max_result_chars: must be a whole number, or 0 for no bound (got 2.5)",
        ),
        (
            '[search]\nmin_relative_score = "half"\n' + SERVER,
            "[search] min_relative_score: must be a number, a fraction of the best hit's score "
            '(got "half")',
        ),
        (
            "[search]\nmin_relative_score = true\n" + SERVER,
            "[search] min_relative_score: must be a number, a fraction of the best hit's score "
            "(got true)",
        ),
        (
            "[search]\nmin_relative_score = 1.5\n" + SERVER,
            "[search] min_relative_score: must be between 0 and 1, a fraction of the best hit's "
            "score (got 1.5)",
        ),
        (
            "[search]\nmin_relative_score = -0.5\n" + SERVER,
            "[search] min_relative_score: must be between 0 and 1, a fraction of the best hit's "
            "score (got -0.5)",
        ),
        ("context = 3\n" + SERVER, "context: must be a table (got 3)"),
    ],
)
def test_invalid_files_name_the_file_the_key_and_what_it_takes(
    tmp_path: Path, text: str, reason: str
) -> None:
    path = write(tmp_path, text)
    with pytest.raises(LoadError) as caught:
        load_gateway_config(path)
    assert (caught.value.source, caught.value.reason) == (str(path), reason)
    assert str(caught.value) == f"{path}: {reason}"


def test_unreadable_and_malformed_files(tmp_path: Path) -> None:
    with pytest.raises(LoadError, match="cannot read"):
        load_gateway_config(tmp_path / "missing.toml")
    with pytest.raises(LoadError, match="not valid TOML"):
        load_gateway_config(write(tmp_path, "[gateway\n"))


@pytest.mark.parametrize(("value", "expected"), [("0", 0.0), ("1", 1.0), ("0.75", 0.75)])
def test_min_relative_score_takes_the_bounds_and_integers(
    tmp_path: Path, value: str, expected: float
) -> None:
    text = f"[search]\nmin_relative_score = {value}\n" + demo_server_table()
    assert parse_gateway_config(tomllib.loads(text), base_dir=tmp_path).search == SearchSettings(
        min_relative_score=expected
    )


@pytest.mark.parametrize("fraction", [-0.01, 1.01])
def test_search_settings_check_min_relative_score(fraction: float) -> None:
    with pytest.raises(ConfigurationError) as caught:
        SearchSettings(min_relative_score=fraction)
    assert str(caught.value) == (
        "SearchSettings.min_relative_score: must be between 0 and 1, a fraction of the best "
        f"hit's score (got {fraction})"
    )
    assert SearchSettings(min_relative_score=None).min_relative_score is None  # off


def test_settings_built_in_python_are_checked_and_frozen() -> None:
    with pytest.raises(ConfigurationError, match=r"^SearchSettings.max_results: must be a whole"):
        SearchSettings(max_results="5")  # type: ignore[arg-type]  # no text for a number
    with pytest.raises(ConfigurationError, match=r"^SearchSettings.colour: unknown key"):
        SearchSettings(colour="red")  # type: ignore[call-arg]
    with pytest.raises(ConfigurationError, match=r"^GatewayConfig.servers\[0\]: MCP server 'x'"):
        GatewayConfig(servers=[{"name": "x"}])  # type: ignore[list-item]
    config = GatewayConfig(modules=["tools"], context={"tenant_id": "acme"})  # type: ignore[arg-type]
    assert config.modules == ("tools",)
    with pytest.raises(TypeError):
        config.context["tenant_id"] = "other"  # type: ignore[index]
    with pytest.raises(ValidationError):  # pydantic's own: no attribute is ever replaced
        config.name = "other"  # type: ignore[misc]


def test_a_config_needs_tools() -> None:
    with pytest.raises(ConfigurationError, match="no tools"):
        GatewayConfig()


SIDE_EFFECTS = """
[tools."refund.retry_failed_order"]
requires_approval = true
idempotent = true
idempotency_key = ["refund_id"]

[tools."payment.*"]
destructive = true
timeout = 15

[approval]
handler = "policies/approvals.py:decide"
destructive = true

[idempotency]
path = "state/idempotency.sqlite3"
ttl = 3600
wait = 5

[audit]
path = "audit.jsonl"
include_arguments = true
"""


def test_side_effect_sections(tmp_path: Path) -> None:
    config = load_gateway_config(write(tmp_path, demo_server_table() + SIDE_EFFECTS))
    assert config.tools == (
        ToolPolicy(
            tools="refund.retry_failed_order",
            requires_approval=True,
            idempotent=True,
            idempotency_key=("refund_id",),
        ),
        ToolPolicy(tools="payment.*", destructive=True, timeout=15),
    )
    assert config.approval == ApprovalSettings(
        handler=f"{tmp_path / 'policies/approvals.py'}:decide", destructive=True
    )
    assert config.idempotency == IdempotencySettings(
        path=str(tmp_path / "state/idempotency.sqlite3"), ttl=3600.0, wait=5.0
    )
    assert config.audit == AuditSettings(path=str(tmp_path / "audit.jsonl"), include_arguments=True)
    # A dotted module name stays as it is; without the sections, nothing is configured.
    dotted = parse_gateway_config(
        tomllib.loads(demo_server_table() + '[approval]\nhandler = "desk.approvals:decide"\n'),
        base_dir=tmp_path,
    )
    assert dotted.approval.handler == "desk.approvals:decide"
    plain = load_gateway_config(write(tmp_path, demo_server_table()))
    assert (plain.tools, plain.approval, plain.idempotency, plain.audit) == (
        (),
        ApprovalSettings(),
        IdempotencySettings(),
        None,
    )


@pytest.mark.parametrize(
    ("text", "reason"),
    [
        (
            '[tools."refund.retry"]\nidempotency_key = ["refund_id"]\nretries = 3\n',
            '[tools."refund.retry"] retries: unknown key; expected one of read_only, destructive, '
            "requires_approval, idempotent, idempotency_key, timeout",
        ),
        (
            "[tools.refund.retry]\nidempotent = true\n",
            "[tools.refund.retry]: unknown table; expected one of read_only, destructive, "
            "requires_approval, idempotent, idempotency_key, timeout "
            '(a name with dots needs quotes: [tools."refund.retry"])',
        ),
        (
            '[tools."refund.*"]\nidempotency_key = 7\n',
            '[tools."refund.*"] idempotency_key: must be an argument name or a non-empty list of '
            "argument names (got 7)",
        ),
        (
            '[tools."refund.retry"]\nidempotency_key = ["refund_id", 7]\n',
            '[tools."refund.retry"] idempotency_key: must be an argument name or a non-empty '
            'list of argument names (got ["refund_id", 7])',
        ),
        (
            '[tools."refund.retry"]\nidempotency_key = []\n',
            '[tools."refund.retry"] idempotency_key: must be an argument name or a non-empty '
            "list of argument names (got [])",
        ),
        (
            '[tools."refund.retry"]\nidempotency_key = "refund_id"\nidempotent = false\n',
            '[tools."refund.retry"]: idempotent = false contradicts idempotency_key',
        ),
        (
            '[tools."refund.retry"]\nrequires_approval = "yes"\n',
            '[tools."refund.retry"] requires_approval: must be true or false (got "yes")',
        ),
        (
            '[tools."refund.retry"]\ntimeout = "soon"\n',
            '[tools."refund.retry"] timeout: must be a number (got "soon")',
        ),
        (
            '[tools."refund.retry"]\ntimeout = 0\n',
            '[tools."refund.retry"] timeout: must be > 0 (got 0)',
        ),
        ('tools = ["refund.retry"]\n', '[tools]: must be a table (got ["refund.retry"])'),
        ('[tools]\n"refund.retry" = true\n', '[tools."refund.retry"]: must be a table (got true)'),
        (
            '[approval]\nhandler = "approvals.py"\n',
            "[approval] handler: must name a module and a function: 'approvals.py:decide' or "
            "'package.module:decide' (got \"approvals.py\")",
        ),
        (
            '[approval]\nask = "always"\n',
            "[approval] ask: unknown key; expected one of handler, destructive",
        ),
        (
            '[approval]\ndestructive = "yes"\n',
            '[approval] destructive: must be true or false (got "yes")',
        ),
        (
            '[idempotency]\nstore = "redis"\n',
            "[idempotency] store: unknown key; expected one of path, ttl, lease, wait",
        ),
        ("[idempotency]\nttl = 0\n", "[idempotency] ttl: must be > 0 (got 0)"),
        ("[idempotency]\nlease = -1\n", "[idempotency] lease: must be > 0 (got -1)"),
        ("[idempotency]\nwait = -1\n", "[idempotency] wait: must be >= 0 (got -1)"),
        ('[idempotency]\nwait = "1"\n', '[idempotency] wait: must be a number (got "1")'),
        (
            "[audit]\ninclude_arguments = true\n",
            "[audit] path: required, the JSON-lines file the records go to",
        ),
        (
            '[audit]\npath = "audit.jsonl"\nformat = "csv"\n',
            "[audit] format: unknown key; expected one of path, include_arguments",
        ),
    ],
)
def test_invalid_side_effect_settings(tmp_path: Path, text: str, reason: str) -> None:
    text += demo_server_table()  # after the sections: top-level keys come first in TOML
    with pytest.raises(ConfigurationError) as parsing:
        parse_gateway_config(tomllib.loads(text), base_dir=tmp_path)
    assert str(parsing.value) == reason
    # From a file, the same reason, naming the file.
    path = write(tmp_path, text)
    with pytest.raises(LoadError) as loading:
        load_gateway_config(path)
    assert (loading.value.source, loading.value.reason) == (str(path), reason)


async def test_a_usage_log_file_is_read_beside_the_config_and_opened_as_sqlite(
    tmp_path: Path,
) -> None:
    text = '[search]\nindex = "bm25"\nusage_log = "state/usage.sqlite"\nshared_usage = true\n'
    modules = '[[modules]]\nmodule = "examples.quickstart"\n'
    config = load_gateway_config(write(tmp_path, text + modules))
    assert config.search.usage_log == str(tmp_path / "state/usage.sqlite")
    assert config.search.shared_usage is True
    async with open_gateway(config) as gateway:
        assert isinstance(gateway.options.usage_log, SQLiteUsageLog)
        assert gateway.options.shared_usage is True
    assert (tmp_path / "state/usage.sqlite").is_file()


def test_shared_usage_without_a_usage_log_is_refused(tmp_path: Path) -> None:
    with pytest.raises(LoadError, match=r"\[search\]: shared_usage needs a usage_log file"):
        load_gateway_config(
            write(tmp_path, "[search]\nshared_usage = true\n" + demo_server_table())
        )


def test_the_search_table_becomes_the_gateways_search_options() -> None:
    def staff_only(context: ToolContext, definition: ToolDefinition) -> bool:
        return context.get("role") == "staff"

    table = SearchSettings(max_results=3, min_score=0.5, min_relative_score=None, language="zh")
    assert table.options(tool_filter=staff_only) == SearchOptions(
        max_results=3,
        min_score=0.5,
        min_relative_score=None,
        language="zh",
        tool_filter=staff_only,
    )
    assert SearchSettings().options() == SearchOptions()
    # Every search option but the filter (a function: code only) has its key in the table.
    options = {f.name for f in dataclasses.fields(SearchOptions)} - {"tool_filter"}
    assert set(SearchSettings.model_fields) - {"index"} == options
