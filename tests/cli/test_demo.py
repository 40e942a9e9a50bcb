"""``toolrelay demo``: the refund triage through the real pipeline, with the replay model."""

from __future__ import annotations

import json
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import pytest
import typer

from tests.extras import needs_extra
from toolrelay.cli import _demo as demo
from toolrelay.cli import _demo_catalog as demo_catalog
from toolrelay.cli._chat_models import ModelSpec, Provider, make_chat_model, parse_model_spec
from toolrelay.cli._indexes import BuiltIndex, IndexType
from toolrelay.cli._replay import TurnSoFar, triage_plan
from toolrelay.search._base import SearchRequest, SearchResponse
from toolrelay.search._bm25 import BM25ToolIndex
from toolrelay.tools._base import ToolDefinition

from ._helpers import REFUND_DESK
from .conftest import Invoke

REQUIRED = (
    "refund.find_failed_orders",
    "refund.retry_failed_order",
    "ticket.create_incident",
    "notify.send_owner_message",
)


@pytest.fixture(scope="module")
def demo_json() -> dict[str, Any]:
    """One JSON run of the demo over BM25 (the triage changes only its own fresh back end)."""
    from typer.testing import CliRunner

    from toolrelay.cli import app

    result = CliRunner().invoke(app, ["demo", "--index", "bm25", "--json"])
    assert result.exit_code == 0, result.output
    data: dict[str, Any] = json.loads(result.stdout)
    return data


def test_the_replay_finds_and_calls_the_four_tools_in_order(cli: Invoke) -> None:
    result = cli("demo", "--index", "bm25")
    assert result.exit_code == 0, result.output
    out = result.stdout
    assert "Model: REPLAY of the task's decisions, not a language model" in out
    # Every need in one turn, as tool_search's description asks; the incident tool was
    # revealed before the first model call, so it is not searched for.
    assert "replay: Searching for the tools to find yesterday's failed refunds; to retry" in out
    # Each required tool is called, in the task's order, after the search that found it.
    positions = [out.index(f"  {name}({{") for name in REQUIRED]
    assert positions == sorted(positions)
    assert out.index('tool_search({"queries": ["failed refunds from yesterday", ') < positions[0]
    assert "bm25 matched" in out
    assert "All 4 required tools were found by search and called in order." in out
    assert "Answer (replay)" in out
    assert "The owner was notified (MSG-" in out
    # The token table ends with a total that shows the saving.
    assert "Tokens per model request (cl100k_base" in out
    total_line = next(line for line in out.splitlines() if "Total" in line)
    assert total_line.rstrip(" │").endswith("%")
    assert "6 requests:" in out
    assert "saved" in out
    assert result.stderr == ""


def test_json_lists_rounds_searches_calls_and_tokens(demo_json: dict[str, Any]) -> None:
    data = demo_json
    assert data["model"] == {"spec": "replay", "replay": True}
    assert data["index"]["type"] == "bm25"
    assert data["catalog"]["tools"] == 78
    assert data["completed"] is True
    rounds = data["rounds"]
    assert [r["model_call"] for r in rounds] == list(range(1, len(rounds) + 1))
    # The model starts with the task's revealed best hit, pinned to the tool list before the
    # proxy channel's pair, and never sees the whole catalog.
    assert rounds[0]["shown"] == ["ticket.create_incident", "tool_search", "call_tool"]
    assert all(len(r["shown"]) < 78 for r in rounds)
    searches = [
        s for r in rounds for x in r["results"] if x["tool"] == "tool_search" for s in x["searches"]
    ]
    assert [s["query"] for s in searches] == [
        "failed refunds from yesterday",
        "retry a failed refund",
        "notify the refunds owner",
    ]
    # All three in the first model call's round.
    assert {
        r["model_call"] for r in rounds for x in r["results"] if x["tool"] == "tool_search"
    } == {1}
    for search in searches:
        assert search["index"] == "bm25"
        scores = [h["score"] for h in search["hits"]]
        assert scores == sorted(scores, reverse=True)
        # At most max_results hits, none under 0.9 of the best (the defaults, as measured).
        assert 1 <= len(scores) <= 2
        assert scores[-1] >= scores[0] * 0.9
    required = data["required_tools"]
    assert [r["name"] for r in required] == list(REQUIRED)
    calls = [r["called"]["model_call"] for r in required]
    assert calls == sorted(calls)
    assert all(r["found"]["model_call"] < r["called"]["model_call"] for r in required)
    assert data["answer"].startswith("5 refunds failed yesterday")


def test_arguments_come_from_earlier_results(demo_json: dict[str, Any]) -> None:
    results = [x for r in demo_json["rounds"] for x in r["results"]]

    def of(tool: str) -> list[dict[str, Any]]:
        return [x for x in results if x["tool"] == tool]

    [find] = of("refund.find_failed_orders")
    failed = json.loads(find["result"])
    retryable = {f["refund_id"] for f in failed if f["retryable"]}
    retried = {x["arguments"]["refund_id"] for x in of("refund.retry_failed_order")}
    assert retried == retryable
    assert all(json.loads(x["result"])["succeeded"] for x in of("refund.retry_failed_order"))
    incidents = of("ticket.create_incident")
    assert {i for x in incidents for i in x["arguments"]["refund_ids"]} == {
        f["refund_id"] for f in failed
    } - retryable
    tickets = [json.loads(x["result"])["ticket_id"] for x in incidents]
    [notify] = of("notify.send_owner_message")
    assert notify["arguments"]["ticket_ids"] == tickets
    assert all(x["status"] == "ok" for x in results)


def test_token_table_compares_each_request_with_every_tool(demo_json: dict[str, Any]) -> None:
    rounds = demo_json["rounds"]
    everything = {r["tokens"]["with_all_tools"] - r["tokens"]["messages"] for r in rounds}
    assert len(everything) == 1  # the same 78 definitions in every comparison request
    for r in rounds:
        tokens = r["tokens"]
        assert tokens["sent"] == tokens["messages"] + tokens["tools"]
        assert tokens["tools"] < tokens["with_all_tools"] - tokens["messages"]
    # Later requests carry the growing conversation and the tools found so far.
    assert [r["tokens"]["messages"] for r in rounds] == sorted(
        r["tokens"]["messages"] for r in rounds
    )
    totals = demo_json["tokens"]
    assert totals["requests"] == len(rounds)
    assert totals["sent"] == sum(r["tokens"]["sent"] for r in rounds)
    assert totals["with_all_tools"] == sum(r["tokens"]["with_all_tools"] for r in rounds)
    assert totals["saved"] == totals["with_all_tools"] - totals["sent"] > 0
    assert totals["saved_percent"] > 50


def test_the_turn_is_billed_with_output_on_the_headline_models(demo_json: dict[str, Any]) -> None:
    billed = demo_json["billed"]
    assert set(billed) == {"claude-sonnet-4-5", "gpt-5"}
    for bill in billed.values():
        assert bill["requests"] == demo_json["tokens"]["requests"]
        assert bill["output_tokens"] > 0  # every answer, search calls included
        assert 0 < bill["cost_usd"] < bill["with_all_tools_usd"]
        assert bill["saved_percent"] == pytest.approx(
            100 * (1 - bill["cost_usd"] / bill["with_all_tools_usd"]), abs=0.01
        )
    # The same requests, fewer raw tokens saved once caching and output are billed.
    assert billed["gpt-5"]["saved_percent"] < demo_json["tokens"]["saved_percent"]


class HidingIndex(BM25ToolIndex):
    """BM25 that never returns one tool: a retrieval miss on demand."""

    def __init__(self, hidden: str) -> None:
        super().__init__()
        self.hidden = hidden

    def search(self, request: SearchRequest) -> SearchResponse:
        response = super().search(request)
        hits = tuple(h for h in response.hits if h.name != self.hidden)
        return SearchResponse(
            hits=hits,
            total=len(hits),
            search_type=response.search_type,
            query=response.query,
            time_ms=response.time_ms,
        )


def hide_from_search(monkeypatch: pytest.MonkeyPatch, name: str) -> None:
    """Make the demo's index (whichever is asked for) never return the tool ``name``."""

    def prepare(kind: IndexType, definitions: Sequence[ToolDefinition]) -> BuiltIndex:
        index = HidingIndex(name)
        index.index(definitions)
        return BuiltIndex(index=index, kind=kind, seconds=0.0)

    monkeypatch.setattr(demo, "build_index", prepare)


def test_a_search_miss_is_shown_and_the_replay_stops(
    cli: Invoke, monkeypatch: pytest.MonkeyPatch
) -> None:
    hide_from_search(monkeypatch, "refund.retry_failed_order")
    result = cli("demo", "--index", "bm25")
    assert result.exit_code == 1
    out = result.stdout
    assert "did not return refund.retry_failed_order" in out
    assert "Calling refund.retry_failed_order anyway so the tool gate's answer shows" in " ".join(
        out.split()
    )
    assert "✗ unknown_tool: Tool 'refund__retry_failed_order' is not available" in out
    assert "Stopped: the search did not find refund.retry_failed_order" in out
    assert "ticket.create_incident(" not in out  # the replay does not pretend to go on
    assert result.stderr.strip().splitlines() == [
        "error: the task was not completed; required tools not found or not called: "
        "refund.retry_failed_order, ticket.create_incident, notify.send_owner_message"
    ]
    data = json.loads(cli("demo", "--index", "bm25", "--json").stdout)
    assert data["completed"] is False
    assert data["required_tools"][1]["found"] is None


def test_a_tool_shown_by_an_earlier_search_is_called_with_a_note() -> None:
    model = triage_plan(REQUIRED)
    turn = TurnSoFar(
        searches={"failed refunds from yesterday": ["refund__find_failed_orders"]},
        results={"refund__find_failed_orders": [[{"refund_id": "RF-1", "retryable": True}]]},
    )
    turn.searches["retry a failed refund"] = ["refund__rebuild_task"]
    message = model.decide(turn, shown={"tool_search", "refund__retry_failed_order"})
    assert "refund.retry_failed_order is among the tools this request shows" in (message.text or "")
    [call] = message.tool_calls
    assert (call.name, json.loads(call.arguments)) == (
        "refund__retry_failed_order",
        {"refund_id": "RF-1"},
    )
    # Nothing to retry: the step is skipped without a search; the needs left are searched for
    # in one call.
    nothing = TurnSoFar(
        searches={"failed refunds from yesterday": ["refund__find_failed_orders"]},
        results={"refund__find_failed_orders": [[{"refund_id": "RF-1", "retryable": False}]]},
    )
    [search] = model.decide(nothing).tool_calls
    assert json.loads(search.arguments) == {
        "queries": ["open an incident ticket for a failing refund", "notify the refunds owner"]
    }


# --- bad input -------------------------------------------------------------------------------


def one_line(stderr: str) -> str:
    lines = stderr.strip().splitlines()
    assert len(lines) == 1, stderr
    return lines[0]


def test_unknown_model_forms_are_usage_errors(cli: Invoke) -> None:
    for value, expected in [
        (
            "gpt-4",
            (
                "unknown model 'gpt-4'; use replay, local, openai:NAME, "
                "openai-responses:NAME or anthropic:NAME"
            ),
        ),
        ("openai:", "name the model after the colon, e.g. openai:MODEL_NAME"),
    ]:
        result = cli("demo", "--index", "bm25", "--model", value)
        assert result.exit_code == 2
        assert expected in one_line(result.stderr)
        assert one_line(result.stderr).startswith("error: Invalid value for '--model'")


@pytest.mark.parametrize(
    ("model", "package", "extra"),
    [
        ("openai:gpt-4o-mini", "openai", "openai"),
        ("anthropic:claude-x", "anthropic", "anthropic"),
        ("local", "llama_cpp", "local"),
    ],
)
def test_a_missing_extra_is_named(
    cli: Invoke, monkeypatch: pytest.MonkeyPatch, model: str, package: str, extra: str
) -> None:
    monkeypatch.setitem(sys.modules, package, None)  # as if it were not installed
    env = {"OPENAI_API_KEY": "k", "ANTHROPIC_API_KEY": "k"}
    result = cli("demo", "--index", "bm25", "--model", model, env=env)
    assert result.exit_code == 1
    assert one_line(result.stderr) == (
        f"error: --model {model} needs the {extra} extra: pip install -e '.[{extra}]'"
    )
    assert result.stdout == ""


def test_a_missing_key_and_misplaced_options(cli: Invoke, monkeypatch: pytest.MonkeyPatch) -> None:
    pytest.importorskip("openai", reason=needs_extra("openai"))
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    result = cli("demo", "-i", "bm25", "--model", "openai:gpt-4o-mini")
    assert result.exit_code == 1
    assert "needs an API key in the OPENAI_API_KEY environment variable" in one_line(result.stderr)
    wrong = cli("demo", "-i", "bm25", "--model", "openai:x", "--gguf", "m.gguf")
    assert one_line(wrong.stderr) == "error: --gguf is for --model local, not --model openai:x"
    replayed = cli("demo", "-i", "bm25", "--base-url", "http://127.0.0.1:1/v1")
    assert replayed.exit_code == 2
    assert "--base-url needs --model openai:NAME" in one_line(replayed.stderr)


def test_catalog_not_found(cli: Invoke, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    missing = cli("demo", "--catalog", str(tmp_path / "nowhere"))
    assert missing.exit_code == 1
    assert one_line(missing.stderr) == f"error: {tmp_path / 'nowhere'}: no such folder"
    plain = tmp_path / "plain"
    plain.mkdir()
    assert "not a Python package folder" in one_line(cli("demo", "-c", str(plain)).stderr)
    (plain / "__init__.py").write_text("X = 1\n", encoding="utf-8")
    assert one_line(cli("demo", "-c", str(plain)).stderr) == (
        f"error: {plain}: not a demo catalog: it defines no build_catalog, TASK, REQUIRED_TOOLS"
    )
    monkeypatch.setattr(demo_catalog, "candidate_paths", lambda: [tmp_path / "examples"])
    default = cli("demo", "-i", "bm25")
    assert default.exit_code == 1
    assert one_line(default.stderr) == (
        "error: examples/refund_desk: the demo catalog was not found; run the command from "
        "the root of a toolrelay checkout, or pass --catalog PATH/TO/refund_desk"
    )


def test_the_catalog_is_found_from_the_working_directory(
    cli: Invoke, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(REFUND_DESK.parents[1])
    assert demo_catalog.candidate_paths()[0] == Path.cwd() / "examples" / "refund_desk"
    result = cli("demo", "-i", "bm25", "--json")
    assert result.exit_code == 0, result.output
    assert json.loads(result.stdout)["catalog"]["path"].endswith("refund_desk")


# --- model specs -----------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "spec"),
    [
        ("replay", ModelSpec(provider=Provider.REPLAY)),
        (" Local ", ModelSpec(provider=Provider.LOCAL)),
        ("openai:gpt-4o-mini", ModelSpec(provider=Provider.OPENAI, name="gpt-4o-mini")),
        (
            "anthropic:claude-3-5-haiku",
            ModelSpec(provider=Provider.ANTHROPIC, name="claude-3-5-haiku"),
        ),
        ("openai:org/model:tag", ModelSpec(provider=Provider.OPENAI, name="org/model:tag")),
        (
            "OpenAI-Responses:gpt-5",
            ModelSpec(provider=Provider.OPENAI_RESPONSES, name="gpt-5"),
        ),
    ],
)
def test_model_specs(text: str, spec: ModelSpec) -> None:
    assert parse_model_spec(text) == spec


@pytest.mark.parametrize(
    "text", ["", "gpt-4", "local:x", "replay:x", "ollama:llama3", "openai-responses:"]
)
def test_bad_model_specs(text: str) -> None:
    with pytest.raises(typer.BadParameter):
        parse_model_spec(text)


def test_a_compatible_server_needs_no_key(monkeypatch: pytest.MonkeyPatch) -> None:
    pytest.importorskip("openai", reason=needs_extra("openai"))
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    spec = ModelSpec(provider=Provider.OPENAI, name="qwen")
    model = make_chat_model(spec, base_url="http://127.0.0.1:9/v1")
    assert model.supports_tools
    assert type(model).__name__ == "OpenAIChatModel"


def test_openai_responses_names_the_responses_adapter(monkeypatch: pytest.MonkeyPatch) -> None:
    pytest.importorskip("openai", reason=needs_extra("openai"))
    from toolrelay.models._base import tool_channels

    monkeypatch.setenv("OPENAI_API_KEY", "sk-test")
    model = make_chat_model(parse_model_spec("openai-responses:gpt-5"))
    assert type(model).__name__ == "OpenAIResponsesModel"
    assert tool_channels(model)[0] == "native"
    served = make_chat_model(
        ModelSpec(provider=Provider.OPENAI_RESPONSES, name="qwen"), base_url="http://127.0.0.1:9/v1"
    )
    assert "127.0.0.1:9" in served.base_url  # type: ignore[attr-defined]


def test_an_unreachable_server_is_named_by_its_url(cli: Invoke) -> None:
    pytest.importorskip("openai", reason=needs_extra("openai"))
    import socket

    with socket.socket() as probe:  # a port nothing listens on
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    url = f"http://127.0.0.1:{port}/v1"
    result = cli("demo", "-i", "bm25", "--model", "openai:gpt-4o-mini", "--base-url", url)
    assert result.exit_code == 1
    assert one_line(result.stderr).startswith(
        f"error: connection to openai at {url}/chat/completions failed: "
    )


def test_a_second_run_with_the_usage_log_ranks_with_the_first_runs_history(
    cli: Invoke, tmp_path: Path
) -> None:
    log = tmp_path / "usage.jsonl"
    first = cli("demo", "--index", "bm25", "--usage-log", str(log))
    assert first.exit_code == 0, first.output
    assert f"No usage history in {log} yet; this run learned 4 queries" in " ".join(
        first.stdout.split()
    )
    written = [json.loads(line) for line in log.read_text(encoding="utf-8").splitlines()]
    assert sorted(e["tool"] for e in written) == sorted(REQUIRED)
    assert {e["scope"] for e in written} == {"tenant:acme"}

    second = cli("demo", "--index", "bm25", "--usage-log", str(log), "--json")
    assert second.exit_code == 0, second.output
    data = json.loads(second.stdout)
    assert data["usage"]["history_entries"] == 4
    hits = [
        hit
        for r in data["rounds"]
        for result in r["results"]
        for search in result.get("searches", ())
        for hit in search["hits"]
    ]
    from_history = {h["name"]: h["history_query"] for h in hits if "history_query" in h}
    # The second run's searches rank required tools with the queries that found them in the
    # first run (the reveal's, the request's own text, among them).
    first_run = {e["tool"]: e["query"] for e in written}
    assert from_history
    assert set(from_history) <= set(REQUIRED)
    assert all(from_history[name] == first_run[name] for name in from_history)
    # Each run learned a query for each of the four tools.
    counts = [json.loads(line)["count"] for line in log.open()]
    assert sum(counts) == 2 * len(REQUIRED)
