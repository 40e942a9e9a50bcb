from __future__ import annotations

import tomllib
from pathlib import Path

import pytest

from toolrelay.exceptions import ConfigurationError, LoadError
from toolrelay.execution import DEFAULT_MAX_RESULT_CHARS
from toolrelay.gateway import (
    ApprovalSettings,
    AuditSettings,
    GatewayConfig,
    IdempotencySettings,
    SearchSettings,
    ToolPolicy,
    load_gateway_config,
    open_gateway,
    parse_gateway_config,
)
from toolrelay.search import SQLiteUsageLog
from toolrelay.toolsearch import DEFAULT_MIN_RELATIVE_SCORE

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


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("", "no tools"),
        ("[extra]\na = 1\n", "unknown sections"),
        ('[gateway]\ncolour = "red"\n', r"unknown keys in \[gateway\]"),
        ('[search]\nindex = "magic"\n' + demo_server_table(), "unknown index"),
        ("[search]\nmax_results = 50\n" + demo_server_table(), "max_results"),
        ('[search]\nlanguage = "fr"\n' + demo_server_table(), "unknown language 'fr'"),
        ("[search]\nlanguage = 1\n" + demo_server_table(), r"\[search\] language must be"),
        ('[[modules]]\npath = "a.py"\nmodule = "b"\n', "a path or a module"),
        ('[[servers]]\nname = "x"\n', "either a command"),
        ("servers = 3\n", "array of tables"),
        ("[gateway]\ntimeout = -1\n" + demo_server_table(), "timeout"),
        (
            "[gateway]\nmax_result_chars = -1\n" + demo_server_table(),
            r"\[gateway\] max_result_chars must be a whole number of characters >= 1, not -1 "
            r"\(0 means no bound\)",
        ),
        (
            "[gateway]\nmax_result_chars = 2.5\n" + demo_server_table(),
            r"\[gateway\] max_result_chars must be a whole number",
        ),
        (
            '[search]\nmin_relative_score = "half"\n' + demo_server_table(),
            r"\[search\] min_relative_score must be a number",
        ),
        (
            "[search]\nmin_relative_score = true\n" + demo_server_table(),
            r"\[search\] min_relative_score must be a number",
        ),
        (
            "[search]\nmin_relative_score = 1.5\n" + demo_server_table(),
            r"\[search\] min_relative_score must be between 0 and 1 .*, not 1.5",
        ),
        (
            "[search]\nmin_relative_score = -0.5\n" + demo_server_table(),
            r"\[search\] min_relative_score must be between 0 and 1 .*, not -0.5",
        ),
    ],
)
def test_invalid_files_name_the_file_and_the_problem(
    tmp_path: Path, text: str, message: str
) -> None:
    path = write(tmp_path, text)
    with pytest.raises(LoadError, match=message) as caught:
        load_gateway_config(path)
    assert caught.value.source == str(path)


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
    with pytest.raises(ConfigurationError, match="min_relative_score must be between 0 and 1"):
        SearchSettings(min_relative_score=fraction)
    assert SearchSettings(min_relative_score=None).min_relative_score is None  # off


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
    ("text", "message"),
    [
        (
            '[tools."refund.retry"]\nidempotency_key = ["refund_id"]\nretries = 3\n',
            r"unknown keys in \[tools.\"refund.retry\"\]: \['retries'\]",
        ),
        (
            "[tools.refund.retry]\nidempotent = true\n",
            r"a tool name with dots needs quotes: \[tools.\"refund.retry\"\]",
        ),
        (
            '[tools."refund.retry"]\nidempotency_key = 7\n',
            "idempotency_key must be an argument name or a list of argument names",
        ),
        (
            '[tools."refund.retry"]\nidempotency_key = ["refund_id", 7]\n',
            "idempotency_key must be an argument name or a non-empty list",
        ),
        ('[tools."refund.retry"]\nidempotency_key = []\n', "non-empty list"),
        ('[tools."refund.retry"]\nrequires_approval = "yes"\n', "must be true or false"),
        ('[tools."refund.retry"]\ntimeout = "soon"\n', "timeout must be a number"),
        ('tools = ["refund.retry"]\n', r"\[tools\] must be a table"),
        ('[tools]\n"refund.retry" = true\n', r"\[tools.\"refund.retry\"\] must be a table"),
        ('[approval]\nhandler = "approvals.py"\n', "must name a module and a function"),
        ('[approval]\nask = "always"\n', r"unknown keys in \[approval\]"),
        ('[approval]\ndestructive = "yes"\n', "destructive must be true or false"),
        ('[idempotency]\nstore = "redis"\n', r"unknown keys in \[idempotency\]"),
        ("[idempotency]\nttl = 0\n", "ttl must be > 0"),
        ("[idempotency]\nlease = -1\n", "lease must be > 0"),
        ("[audit]\ninclude_arguments = true\n", "needs a path"),
    ],
)
def test_invalid_side_effect_settings(tmp_path: Path, text: str, message: str) -> None:
    text += demo_server_table()  # after the sections: top-level keys come first in TOML
    with pytest.raises(ConfigurationError, match=message):
        parse_gateway_config(tomllib.loads(text), base_dir=tmp_path)
    # From a file, the same reason, naming the file.
    with pytest.raises(LoadError, match=message):
        load_gateway_config(write(tmp_path, text))


async def test_a_usage_log_file_is_read_beside_the_config_and_opened_as_sqlite(
    tmp_path: Path,
) -> None:
    text = '[search]\nindex = "bm25"\nusage_log = "state/usage.sqlite"\nshared_usage = true\n'
    modules = '[[modules]]\nmodule = "examples.quickstart"\n'
    config = load_gateway_config(write(tmp_path, text + modules))
    assert config.search.usage_log == str(tmp_path / "state/usage.sqlite")
    assert config.search.shared_usage is True
    async with open_gateway(config) as gateway:
        assert isinstance(gateway.usage_log, SQLiteUsageLog)
        assert gateway.shared_usage is True
    assert (tmp_path / "state/usage.sqlite").is_file()


def test_shared_usage_without_a_usage_log_is_refused(tmp_path: Path) -> None:
    with pytest.raises(LoadError, match="shared_usage needs a usage_log"):
        load_gateway_config(
            write(tmp_path, "[search]\nshared_usage = true\n" + demo_server_table())
        )
