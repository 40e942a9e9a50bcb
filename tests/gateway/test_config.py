from __future__ import annotations

from pathlib import Path

import pytest

from toolrelay.exceptions import ConfigurationError, LoadError
from toolrelay.gateway import GatewayConfig, SearchSettings, load_gateway_config

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
    assert config.search == SearchSettings(index="bm25", max_results=3, min_score=0.5)
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
    assert config.modules == ()


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("", "no tools"),
        ("[extra]\na = 1\n", "unknown sections"),
        ('[gateway]\ncolour = "red"\n', r"unknown keys in \[gateway\]"),
        ('[search]\nindex = "magic"\n' + demo_server_table(), "unknown index"),
        ("[search]\nmax_results = 50\n" + demo_server_table(), "max_results"),
        ('[[modules]]\npath = "a.py"\nmodule = "b"\n', "a path or a module"),
        ('[[servers]]\nname = "x"\n', "either a command"),
        ("servers = 3\n", "array of tables"),
        ("[gateway]\ntimeout = -1\n" + demo_server_table(), "timeout"),
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


def test_a_config_needs_tools() -> None:
    with pytest.raises(ConfigurationError, match="no tools"):
        GatewayConfig()
