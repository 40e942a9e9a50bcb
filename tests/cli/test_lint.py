"""``toolrelay lint``: findings by severity, JSON, exit codes, settings and annotations."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from ._helpers import REFUND_DESK, WEATHER_TOOLS, write_jsonl
from .conftest import Invoke

BAD_NAME = {"name": "bad name!", "description": "Short."}


@pytest.fixture(autouse=True)
def _outside_the_repository(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Run from a folder without a pyproject.toml, so the repository's settings never apply."""
    workdir = tmp_path / "work"
    workdir.mkdir()
    monkeypatch.chdir(workdir)


def _lint_json(cli: Invoke, *args: str) -> tuple[int, dict[str, Any]]:
    result = cli("lint", *args, "--index", "bm25", "--json")
    return result.exit_code, json.loads(result.stdout)


def test_tables_by_severity_and_a_summary_line(cli: Invoke, catalog_file: Path) -> None:
    result = cli("lint", str(catalog_file), "--index", "bm25")
    assert result.exit_code == 0, result.output
    assert "Warnings (" in result.stdout
    assert "side-effect-unmarked" in result.stdout
    assert "send_email" in result.stdout
    assert "Findings per rule" in result.stdout
    assert "3 tools, 0 errors" in result.stdout
    assert "tokens to send all tools with each request" in result.stdout


def test_errors_fail_the_run(cli: Invoke, tmp_path: Path) -> None:
    catalog = write_jsonl(tmp_path / "tools.jsonl", [*WEATHER_TOOLS, BAD_NAME])
    result = cli("lint", str(catalog), "--index", "bm25")
    assert result.exit_code == 1
    assert "Errors (" in result.stdout
    assert "name-not-provider-safe" in result.stdout
    assert cli("lint", str(catalog), "--index", "bm25", "--fail-on", "never").exit_code == 0


def test_fail_on_warning(cli: Invoke, catalog_file: Path) -> None:
    code, data = _lint_json(cli, str(catalog_file), "--fail-on", "warning")
    assert code == 1
    assert data["fail_on"] == "warning"
    assert data["summary"]["warning"] > 0


def test_json_has_findings_costs_and_ranks(cli: Invoke, catalog_file: Path) -> None:
    code, data = _lint_json(cli, str(catalog_file))
    assert code == 0
    assert data["tools"] == 3
    assert data["fail_on"] == "error"
    rules = {(f["rule"], f["tool"]) for f in data["findings"]}
    assert ("side-effect-unmarked", "send_email") in rules
    assert ("parameter-undocumented", "send_email") in rules
    assert data["cost"]["total"] == sum(data["cost"]["tools"].values())
    assert data["retrieval"]["tools"]["get_weather"]["description_rank"] == 1


def test_mcp_annotations_in_the_file_declare_side_effects(cli: Invoke, tmp_path: Path) -> None:
    annotated = [dict(t) for t in WEATHER_TOOLS]
    annotated[2]["annotations"] = {"readOnlyHint": False, "destructiveHint": False}
    annotated[1]["annotations"] = {"destructiveHint": True}
    as_list = tmp_path / "tools.json"
    as_list.write_text(json.dumps({"tools": annotated}), encoding="utf-8")
    for catalog in (write_jsonl(tmp_path / "tools.jsonl", annotated), as_list):
        _, data = _lint_json(cli, str(catalog))
        rules = {(f["rule"], f["tool"]) for f in data["findings"]}
        assert ("side-effect-unmarked", "send_email") not in rules
        assert ("side-effect-unmarked", "refund.create") not in rules
        assert ("destructive-without-approval", "refund.create") in rules


def test_settings_come_from_the_nearest_pyproject(cli: Invoke, catalog_file: Path) -> None:
    Path("pyproject.toml").write_text(
        '[tool.toolrelay.lint]\ndisable = ["parameter-undocumented"]\n'
        'per-tool = { "send_*" = ["side-effect-unmarked"] }\nfail-on = "warning"\n',
        encoding="utf-8",
    )
    code, data = _lint_json(cli, str(catalog_file))
    rules = {f["rule"] for f in data["findings"]}
    assert "parameter-undocumented" not in rules
    assert ("side-effect-unmarked", "send_email") not in {
        (f["rule"], f["tool"]) for f in data["findings"]
    }
    assert data["fail_on"] == "warning"
    assert code == (1 if data["summary"]["warning"] else 0)
    code, data = _lint_json(cli, str(catalog_file), "--fail-on", "error")
    assert code == 0


def test_config_option_and_disable_option(cli: Invoke, catalog_file: Path, tmp_path: Path) -> None:
    settings = tmp_path / "lint.toml"
    settings.write_text('[tool.toolrelay.lint]\ndisable = ["side-effect-unmarked"]\n')
    _, data = _lint_json(
        cli, str(catalog_file), "--config", str(settings), "--disable", "parameter-undocumented"
    )
    rules = {f["rule"] for f in data["findings"]}
    assert not rules & {"side-effect-unmarked", "parameter-undocumented"}


def test_bad_options_and_unknown_rules_are_one_line_errors(cli: Invoke, catalog_file: Path) -> None:
    result = cli("lint", str(catalog_file), "--index", "regex")
    assert result.exit_code == 2
    assert "unknown index 'regex'" in result.stderr
    result = cli("lint", str(catalog_file), "--index", "bm25", "--disable", "no-such-rule")
    assert result.exit_code == 1
    assert result.stderr.startswith("error: unknown lint rule 'no-such-rule'")
    result = cli("lint", str(catalog_file), "--show", "loud")
    assert result.exit_code == 2


def test_a_malformed_settings_file_is_a_one_line_error_naming_file_and_key(
    cli: Invoke, catalog_file: Path, tmp_path: Path
) -> None:
    settings = tmp_path / "lint.toml"
    settings.write_text("[tool.toolrelay.lint.thresholds]\ntop_k = 3\n")
    result = cli("lint", str(catalog_file), "--config", str(settings))
    assert result.exit_code == 1
    assert result.stderr == (
        f"error: {settings}: [tool.toolrelay.lint.thresholds] top_k: unknown key; expected one "
        "of min-description-words, max-description-chars, max-tool-tokens, max-catalog-tokens, "
        "top-k, confusable-margin, dominance-share, dominance-min\n"
    )


def test_the_refund_desks_dotted_names_pass_the_name_rules(cli: Invoke) -> None:
    # The docs recommend dotted domain names (refund.find_failed_orders), as the desk uses.
    code, data = _lint_json(cli, str(REFUND_DESK), "--show", "info", "--limit", "0")
    assert code == 0
    names = set(data["retrieval"]["tools"])
    assert len(names) == 78
    assert all("." in name for name in names)
    assert [f for f in data["findings"] if f["rule"].startswith("name-")] == []


def test_the_refund_desk_passes_with_fail_on_error(cli: Invoke) -> None:
    result = cli("lint", str(REFUND_DESK), "--index", "bm25", "--fail-on", "error")
    assert result.exit_code == 0, result.output
    code, data = _lint_json(cli, str(REFUND_DESK))
    assert code == 0
    assert data["summary"]["error"] == 0
    assert data["tools"] == 78
    # Module tools carry their metadata: read-only tools are never "unmarked".
    unmarked = {f["tool"] for f in data["findings"] if f["rule"] == "side-effect-unmarked"}
    assert "refund.find_failed_orders" not in unmarked
    assert "refund.force_success" not in unmarked
