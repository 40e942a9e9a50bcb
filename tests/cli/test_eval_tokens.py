"""``toolrelay eval tokens``: the whole catalog against the search tool, per request."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from toolrelay.cli._eval_tokens import cost_rows, search_answer_text
from toolrelay.cli._tokens import call_tool_definition, search_tool_definition
from toolrelay.tools._base import ToolDefinition
from toolrelay.tools._tokens import TokenSummary, count_tokens, tool_tokens

from ._helpers import REFUND_DESK, write_jsonl
from .conftest import Invoke


def test_cost_rows_compare_every_way_of_sending_tools() -> None:
    sizes = TokenSummary(sizes=(100, 300, 200), total=600, mean=200.0, largest=300)
    rows = cost_rows(sizes, search_tokens=50, retrieved=[2])
    assert [(r.kind, r.tools_sent, r.per_request) for r in rows] == [
        ("all", 3, 600),
        ("search", 1, 50),
        ("search+mean", 3, 450),
        ("search+largest", 3, 550),
    ]
    # Never more retrieved tools than the catalog has.
    assert cost_rows(sizes, 50, [10])[-1].per_request == 650


def test_proxy_rows_carry_the_pair_and_the_found_tools_in_a_search_answer() -> None:
    definitions = [ToolDefinition(name=name, description=f"Do {name} with care.") for name in "abc"]
    sizes = TokenSummary(sizes=(100, 300, 200), total=600, mean=200.0, largest=300)
    search, call = search_tool_definition(proxy=True), call_tool_definition()
    rows = cost_rows(sizes, 50, [1], definitions, search, call)
    assert [(r.kind, r.tools_sent) for r in rows] == [
        ("all", 3),
        ("search", 2),
        ("search+mean", 3),
        ("search+largest", 3),
    ]
    pair = 50 + tool_tokens(call)
    assert rows[1].per_request == pair
    assert rows[1].definitions == (search, call)
    # Nearest the mean (200) is "c", the largest "b": each row's answer carries it.
    assert [r.answered for r in rows[2:]] == [(definitions[2],), (definitions[1],)]
    answer = search_answer_text([definitions[1]])
    assert rows[3].per_request == pair + count_tokens(answer)
    assert '"name":"b"' in answer


def test_json_report(cli: Invoke, catalog_file: Path) -> None:
    result = cli(
        "eval", "tokens", "--catalog", str(catalog_file), "--rounds", "3", "--json", "-k", "1"
    )
    assert result.exit_code == 0, result.output
    data = json.loads(result.stdout)
    # The billed models render the proxy channel at best: auto takes it.
    assert data["channel"] == "proxy"
    search_tokens = tool_tokens(search_tool_definition(proxy=True))
    assert data["tools"] == 3
    assert data["rounds"] == 3
    assert data["search_tool"] == {"name": "tool_search", "tokens": search_tokens}
    everything, search_only = data["rows"][0], data["rows"][1]
    assert everything["per_request"] == data["catalog_tokens"]["total"]
    assert everything["total"] == 3 * everything["per_request"]
    assert everything["saved_percent"] is None
    assert search_only["per_request"] == search_tokens + tool_tokens(call_tool_definition())
    assert [r["kind"] for r in data["rows"]] == ["all", "search", "search+mean", "search+largest"]


def test_the_rewrite_channel_sends_the_found_tools_in_the_tool_list(
    cli: Invoke, catalog_file: Path
) -> None:
    args = ("eval", "tokens", "--catalog", str(catalog_file), "--json", "-k", "1")
    rewrite = json.loads(cli(*args, "--channel", "rewrite").stdout)
    proxy = json.loads(cli(*args, "--channel", "proxy").stdout)
    assert rewrite["channel"] == "rewrite"
    assert rewrite["search_tool"]["tokens"] == tool_tokens(search_tool_definition())
    assert rewrite["rows"][1]["tools_sent"] == 1
    assert proxy["rows"][1]["tools_sent"] == 2
    # The same tools, billed as each channel carries them.
    costs = {
        name: [row["billed"]["gpt-5"]["cost_usd"] for row in data["rows"]]
        for name, data in (("rewrite", rewrite), ("proxy", proxy))
    }
    assert costs["rewrite"][0] == costs["proxy"][0]
    assert costs["rewrite"][2:] != costs["proxy"][2:]


def test_the_native_channel_is_refused_naming_the_fix(cli: Invoke, catalog_file: Path) -> None:
    result = cli("eval", "tokens", "--catalog", str(catalog_file), "--channel", "native")
    assert result.exit_code == 1
    assert "neither renders the native channel; use --channel auto, proxy or rewrite" in (
        result.stderr.replace("\n", " ")
    )


def test_table_for_refund_desk_shows_the_saving(cli: Invoke) -> None:
    result = cli("eval", "tokens", "-c", str(REFUND_DESK), "-r", "4")
    assert result.exit_code == 0, result.output
    assert "all 78 tools" in result.stdout
    assert "4 requests" in result.stdout
    data = json.loads(cli("eval", "tokens", "-c", str(REFUND_DESK), "--json").stdout)
    # 78 definitions cost far more than the search tool and five of them.
    assert data["rows"][-1]["saved_percent"] > 50


def test_duplicate_names_and_missing_option(cli: Invoke, tmp_path: Path) -> None:
    path = write_jsonl(tmp_path / "t.jsonl", [{"name": "a"}, {"name": "a"}])
    result = cli("eval", "tokens", "-c", str(path))
    assert result.exit_code == 1
    assert result.stderr.startswith("error: invalid tool 'a': defined twice, by ")
    missing = cli("eval", "tokens")
    assert missing.exit_code == 2
    assert "--catalog" in missing.stderr


def test_one_of_anything_is_counted_in_the_singular(cli: Invoke, tmp_path: Path) -> None:
    one = write_jsonl(tmp_path / "one.jsonl", [{"name": "ping", "description": "Ping a host."}])
    result = cli("eval", "tokens", "-c", str(one), "-r", "1", "-k", "1")
    assert result.exit_code == 0, result.output
    assert "all 1 tool " in result.stdout
    assert "search pair + 1 tool of mean size" in result.stdout
    assert "search pair + the largest tool " in result.stdout
    assert "1 request" in result.stdout
    assert "1 requests" not in result.stdout
    data = json.loads(cli("eval", "tokens", "-c", str(one), "--json", "-k", "2").stdout)
    assert [row["label"] for row in data["rows"]][2:] == [
        "search pair + 1 tool of mean size",  # k = 2 is cut to the one tool there is
        "search pair + the largest tool",
    ]
    rewrite = cli("eval", "tokens", "-c", str(one), "-k", "1", "--channel", "rewrite").stdout
    assert "search tool + 1 tool of mean size" in rewrite


def test_each_way_is_billed_with_output_on_the_headline_models(cli: Invoke) -> None:
    def billed(output: int) -> list[dict[str, dict[str, float | None]]]:
        result = cli(
            "eval", "tokens", "-c", str(REFUND_DESK), "-r", "4", "-o", str(output), "--json"
        )
        data = json.loads(result.stdout)
        assert data["output_tokens_per_request"] == output
        return [row["billed"] for row in data["rows"]]

    quiet, talkative = billed(0), billed(1000)
    for row in quiet:
        assert set(row) == {"claude-sonnet-4-5", "gpt-5"}
    everything, search_only = quiet[0], quiet[1]
    assert everything["gpt-5"]["saved_percent"] is None
    assert search_only["gpt-5"]["cost_usd"] < everything["gpt-5"]["cost_usd"]
    # 4 × 1,000 output tokens at gpt-5's $10 and claude-sonnet-4-5's $15 per million.
    more = {
        name: talkative[0][name]["cost_usd"] - everything[name]["cost_usd"] for name in everything
    }
    assert more["gpt-5"] == pytest.approx(0.04, abs=1e-5)
    assert more["claude-sonnet-4-5"] == pytest.approx(0.06, abs=1e-5)
    table = cli("eval", "tokens", "-c", str(REFUND_DESK), "-r", "4").stdout
    assert "Billed for 4 requests, 50 output tokens each" in table
    assert "claude-sonnet-4-5" in table
