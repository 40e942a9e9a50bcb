"""``toolrelay tools``: the listing, token sizes, findings and JSON output."""

from __future__ import annotations

import json
from pathlib import Path

from toolrelay.tools import ToolDefinition
from toolrelay.tools._tokens import tool_tokens

from ._helpers import REFUND_DESK, WEATHER_TOOLS, write_jsonl
from .conftest import Invoke


def test_lists_tools_with_parameters_tokens_and_totals(cli: Invoke, catalog_file: Path) -> None:
    result = cli("tools", str(catalog_file))
    assert result.exit_code == 0, result.output
    out = result.stdout
    assert f"3 tools in {catalog_file}" in out
    assert "get_weather" in out
    assert "refund.create" in out
    assert 'city: string, unit?: "c"|"f"' in out
    sizes = [
        tool_tokens(
            ToolDefinition(
                name=t["name"], description=t["description"], input_schema=t["parameters"]
            )
        )
        for t in WEATHER_TOOLS
    ]
    assert f"Total: 3 tools, {sum(sizes):,} tokens (cl100k_base)" in out
    assert result.stderr == ""


def test_json_output_parses_and_matches_the_token_rule(cli: Invoke, catalog_file: Path) -> None:
    result = cli("tools", str(catalog_file), "--json")
    assert result.exit_code == 0
    data = json.loads(result.stdout)
    assert data["kind"] == "file"
    assert [t["name"] for t in data["tools"]] == ["get_weather", "refund.create", "send_email"]
    refund = data["tools"][1]
    assert refund["provider_name"] == "refund__create"
    assert refund["origin"] == f"{catalog_file}:2"
    assert refund["metadata"] is None
    assert data["totals"]["tokens"] == sum(t["tokens"] for t in data["tools"])
    assert data["findings"] == []


def test_sort_by_tokens_and_name(cli: Invoke, catalog_file: Path) -> None:
    data = json.loads(cli("tools", str(catalog_file), "--json", "--sort", "tokens").stdout)
    tokens = [t["tokens"] for t in data["tools"]]
    assert tokens == sorted(tokens, reverse=True)
    data = json.loads(cli("tools", str(catalog_file), "--json", "--sort", "name").stdout)
    assert [t["name"] for t in data["tools"]] == ["get_weather", "refund.create", "send_email"]


def test_schemas_flag_prints_each_schema(cli: Invoke, catalog_file: Path) -> None:
    result = cli("tools", str(catalog_file), "--schemas")
    assert result.exit_code == 0
    assert '"required": [' in result.stdout
    assert '"City name."' in result.stdout


def test_duplicates_and_invalid_names_are_findings_and_exit_1(cli: Invoke, tmp_path: Path) -> None:
    path = write_jsonl(
        tmp_path / "t.jsonl", [{"name": "a"}, {"name": "a"}, {"name": "no spaces please"}]
    )
    result = cli("tools", str(path))
    assert result.exit_code == 1
    # Everything is still listed, with the findings after it.
    assert "3 tools in" in result.stdout
    assert "Findings (2):" in result.stdout
    assert "duplicate-name: 'a' is defined twice" in result.stdout
    assert "invalid-name: 'no spaces please'" in result.stdout
    assert result.stderr == (f"error: 2 findings in {path} (invalid or duplicate tool names)\n")
    data = json.loads(cli("tools", str(path), "--json").stdout)
    assert [f["kind"] for f in data["findings"]] == ["invalid-name", "duplicate-name"]


def test_bad_json_line_is_one_line_with_its_number(cli: Invoke, tmp_path: Path) -> None:
    path = tmp_path / "t.jsonl"
    path.write_text('{"name": "a"}\n{"name": "b"\n', encoding="utf-8")
    result = cli("tools", str(path))
    assert result.exit_code == 1
    lines = result.stderr.splitlines()
    assert len(lines) == 1
    assert lines[0].startswith(f"error: {path}:2: not valid JSON")


def test_refund_desk_module_lists_78_tools_with_flags(cli: Invoke) -> None:
    result = cli("tools", str(REFUND_DESK))
    assert result.exit_code == 0, result.output
    assert "78 tools in" in result.stdout
    assert "read-only" in result.stdout
    data = json.loads(cli("tools", str(REFUND_DESK), "--json").stdout)
    assert data["kind"] == "module"
    retry = next(t for t in data["tools"] if t["name"] == "refund.retry_failed_order")
    assert retry["metadata"]["read_only"] is False
    assert retry["origin"].endswith("RefundService.retry_failed_order")


def test_one_tool_and_one_finding_are_counted_in_the_singular(cli: Invoke, tmp_path: Path) -> None:
    path = write_jsonl(tmp_path / "t.jsonl", [{"name": "no spaces please"}])
    result = cli("tools", str(path))
    assert result.exit_code == 1
    assert result.stdout.startswith("1 tool in")  # the title, wrapped to the table's width
    assert "Total: 1 tool, " in result.stdout
    assert result.stderr == f"error: 1 finding in {path} (invalid or duplicate tool names)\n"
