"""``toolrelay eval tasks``: suites from files and modules, the report, results that resume."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import tomllib
from pathlib import Path
from typing import Any

import pytest

from tests.evaluation._agents import plan_model, silent_model
from toolrelay.cli import _eval_tasks as eval_tasks
from toolrelay.cli._task_files import load_task_suite
from toolrelay.exceptions import LoadError, ModelConnectionError
from toolrelay.prompt import Prompt
from toolrelay.testing import FunctionModel

from ._helpers import ROOT, WEATHER_TOOLS, write_jsonl
from .conftest import Invoke

WEATHER_TASKS = [
    {
        "id": "paris",
        "prompt": "What is the weather in Paris?",
        "catalog": "tools.jsonl",
        "expect": {"calls": [{"name": "get_weather", "arguments": {"city": "Paris"}}]},
    },
    {
        "id": "refund",
        "prompt": "Refund order A-1.",
        "catalog": "tools.jsonl",
        "tags": ["refunds"],
        "expect": {
            "bfcl": [{"name": "refund.create", "arguments": {"order_id": ["A-1", "a1"]}}],
            "forbidden": ["send_email"],
        },
    },
]
WEATHER_PLAN = [("get_weather", {"city": "Paris"})]
# Tools the tasks never need: with them the catalog is too big to be sent whole (the
# small-catalog rule), so the search modes search.
OTHER_TOOLS = [
    {
        "name": name,
        "description": description,
        "input_schema": {
            "type": "object",
            "properties": {"text": {"type": "string", "description": "What to work on."}},
            "required": ["text"],
        },
    }
    for name, description in [
        ("translate_text", "Translate a text into another language, keeping its tone."),
        ("book_table", "Book a table at a restaurant for a number of guests and a time."),
        ("convert_currency", "Convert an amount of money between currencies at today's rate."),
    ]
]


@pytest.fixture
def tasks_file(tmp_path: Path) -> Path:
    write_jsonl(tmp_path / "tools.jsonl", [*WEATHER_TOOLS, *OTHER_TOOLS])
    return write_jsonl(tmp_path / "weather.jsonl", WEATHER_TASKS)


@pytest.fixture
def model(monkeypatch: pytest.MonkeyPatch) -> list[Any]:
    """The model the command makes: set ``model[0]`` to a scripted one."""
    chosen: list[Any] = [plan_model(WEATHER_PLAN, name="weather-bot")]
    monkeypatch.setattr(eval_tasks, "make_chat_model", lambda *a, **k: chosen[0])
    return chosen


def run(cli: Invoke, *args: str) -> Any:
    return cli("eval", "tasks", "--model", "openai:test", *args)


def test_the_report_compares_all_tools_with_search(
    cli: Invoke, tasks_file: Path, tmp_path: Path, model: list[Any]
) -> None:
    out = tmp_path / "results.jsonl"
    result = run(
        cli,
        "--tasks",
        str(tasks_file),
        "--mode",
        "all-tools",
        "--mode",
        "search:bm25",
        "-o",
        str(out),
    )
    assert result.exit_code == 0, result.output
    lines = result.stdout.splitlines()
    assert lines[0] == "weather: 2 tasks; model weather-bot; 1 run per task and mode"
    assert lines[1] == f"results: {out} (4 new runs, 0 from earlier)"
    assert " Success                      │ 0.50 (1/2) │  0.50 (1/2) " in lines
    # The proxy channel (auto's for a model declaring none): on six tools, the search pair
    # costs more than the tool list it spares. The reveal pins the paris run's tool to the
    # list, sparing it a search; the refund run searches (and misses): +1 request in 4.
    assert (
        "search:bm25 vs all-tools: +21% tokens, +25% requests, success 0.50 vs 0.50, "
        "difference not significant, p=1.00 (McNemar's exact test over 2 tasks)"
    ) in result.stdout.replace("\n", " ")
    assert "all-tools: bfcl: no call matches refund.create: called get_weather" in result.stdout
    rows = [json.loads(line) for line in out.read_text().splitlines()]
    assert [(r["task"], r["mode"], r["success"]) for r in rows] == [
        ("paris", "all-tools", True),
        ("paris", "search:bm25", True),
        ("refund", "all-tools", False),
        ("refund", "search:bm25", False),
    ]


def test_a_channel_names_the_search_modes_and_changes_what_they_send(
    cli: Invoke, tasks_file: Path, tmp_path: Path, model: list[Any]
) -> None:
    out = tmp_path / "results.jsonl"
    result = run(
        cli,
        "--tasks",
        str(tasks_file),
        "--mode",
        "all-tools",
        "--mode",
        "search:bm25",
        "--channel",
        "rewrite",
        "-o",
        str(out),
    )
    assert result.exit_code == 0, result.output
    assert ("search:bm25/rewrite vs all-tools: ±0% tokens, +25% requests") in result.stdout.replace(
        "\n", " "
    )
    rows = [json.loads(line) for line in out.read_text().splitlines()]
    assert {r["mode"] for r in rows} == {"all-tools", "search:bm25/rewrite"}
    # Each mode's found tool was shown, whatever the channel: no retrieval misses.
    assert all(r["never_shown"] == [] for r in rows if r["task"] == "paris")


def test_a_channel_nothing_can_honour_is_refused_naming_the_fix(
    cli: Invoke, tasks_file: Path, model: list[Any]
) -> None:
    native = run(cli, "--tasks", str(tasks_file), "--mode", "search", "--channel", "native")
    assert native.exit_code == 1
    assert "channel 'native', but the model" in native.stderr
    assert "'proxy', 'rewrite'" in native.stderr
    unused = run(cli, "--tasks", str(tasks_file), "--mode", "all-tools", "--channel", "proxy")
    assert unused.exit_code == 1
    assert "no --mode searches; add --mode search" in unused.stderr


def test_a_second_run_resumes_and_makes_only_the_missing_runs(
    cli: Invoke, tasks_file: Path, tmp_path: Path, model: list[Any]
) -> None:
    out = tmp_path / "results.jsonl"
    first = run(cli, "--tasks", str(tasks_file), "--mode", "all-tools", "-o", str(out))
    assert first.exit_code == 0, first.output
    calls: list[Prompt] = []
    model[0] = FunctionModel(lambda p: calls.append(p) or "never asked", name="weather-bot")
    again = run(cli, "--tasks", str(tasks_file), "--mode", "all-tools", "-o", str(out))
    assert again.exit_code == 0
    assert f"results: {out} (0 new runs, 2 from earlier)" in again.stdout
    assert calls == []
    model[0] = plan_model(WEATHER_PLAN, name="weather-bot")
    more = run(
        cli, "--tasks", str(tasks_file), "--mode", "all-tools", "-n", "2", "-o", str(out), "--json"
    )
    report = json.loads(more.stdout)
    assert (report["new_runs"], report["earlier_runs"]) == (2, 2)
    assert report["summaries"][0]["runs"] == 4
    assert report["comparisons"] == []


def test_the_json_report_has_every_figure(
    cli: Invoke, tasks_file: Path, tmp_path: Path, model: list[Any]
) -> None:
    out = tmp_path / "r.jsonl"
    result = run(
        cli,
        "--tasks",
        str(tasks_file),
        "--mode",
        "all-tools",
        "--mode",
        "search:regex",
        "-o",
        str(out),
        "--json",
    )
    assert result.exit_code == 0, result.output
    report = json.loads(result.stdout)
    assert report["modes"] == ["all-tools", "search:regex"]
    assert report["token_source"] == "counted"
    summary = report["summaries"][1]
    assert set(summary) >= {
        "success_rate",
        "interval",
        "tokens_per_run",
        "requests_per_run",
        "seconds",
        "tool_call_errors",
        "retrieval_misses",
    }
    assert report["comparisons"][0]["test"] == "McNemar's exact test"
    assert report["outcomes"][1]["failures"]["all-tools"] == (
        "bfcl: no call matches refund.create: called get_weather"
    )


def test_runs_the_provider_could_not_serve_are_retried_next_time(
    cli: Invoke, tasks_file: Path, tmp_path: Path, model: list[Any]
) -> None:
    def down(prompt: Prompt) -> Any:
        raise ModelConnectionError("openai", "connection refused")

    model[0] = FunctionModel(down, name="weather-bot")
    out = tmp_path / "r.jsonl"
    result = run(cli, "--tasks", str(tasks_file), "--mode", "all-tools", "-o", str(out))
    assert result.exit_code == 1
    assert result.stderr.strip() == (
        "error: 2 runs could not reach the model (first: ModelConnectionError: connection "
        "refused); run the command again to retry them"
    )
    assert "2 runs missing" in result.stdout
    assert not out.exists() or out.read_text() == ""


def test_the_default_results_file_is_named_after_suite_and_model(
    cli: Invoke, tasks_file: Path, tmp_path: Path, model: list[Any], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    model[0] = silent_model()
    result = run(cli, "--tasks", str(tasks_file), "--mode", "all-tools", "--limit", "1")
    assert result.exit_code == 0, result.output
    assert (tmp_path / "eval-results" / "weather.silent.jsonl").is_file()


def test_bad_options_name_the_fix(cli: Invoke, tasks_file: Path, model: list[Any]) -> None:
    replay = cli("eval", "tasks", "--tasks", str(tasks_file), "--model", "replay")
    assert replay.exit_code == 2
    assert "the replay only knows the refund triage" in replay.stderr
    mode = run(cli, "--tasks", str(tasks_file), "--mode", "everything")
    assert mode.exit_code == 2
    assert "unknown mode 'everything'; use all-tools, search or search:INDEX" in mode.stderr
    index = run(cli, "--tasks", str(tasks_file), "--mode", "search:lucene")
    assert "unknown index type 'lucene'" in index.stderr
    subset = run(cli, "--tasks", str(tasks_file), "--subset", "nothing")
    assert "has no task whose id starts with 'nothing'" in subset.stderr


def test_a_results_file_of_another_model_is_refused(
    cli: Invoke, tasks_file: Path, tmp_path: Path, model: list[Any]
) -> None:
    out = tmp_path / "r.jsonl"
    assert (
        run(cli, "--tasks", str(tasks_file), "--mode", "all-tools", "-o", str(out)).exit_code == 0
    )
    model[0] = silent_model()
    result = run(cli, "--tasks", str(tasks_file), "--mode", "all-tools", "-o", str(out))
    assert result.exit_code == 1
    assert (
        "holds results of model 'weather-bot' on suite 'weather', not of 'silent'" in result.stderr
    )


# --- loading suites -------------------------------------------------------------------------


def test_the_shipped_suites_load_by_name_from_any_folder(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    monkeypatch.chdir(tmp_path)  # found from the package, not the working directory
    assert load_task_suite("refund_triage").name == "refund_triage"
    assert load_task_suite("bfcl:small").name == "bfcl_small"
    with pytest.raises(LoadError) as missing:
        load_task_suite("refund_triaj")
    assert str(missing.value) == (
        "refund_triaj: no such file, module or shipped suite "
        "(the shipped suites: bfcl, refund_triage)"
    )


def test_a_shipped_suite_runs_from_a_folder_outside_the_checkout(
    cli: Invoke, monkeypatch: pytest.MonkeyPatch, tmp_path: Path, model: list[Any]
) -> None:
    model[0] = silent_model()
    monkeypatch.chdir(tmp_path)
    result = run(
        cli, "--tasks", "refund_triage", "--subset", "en/find-failed", "--mode", "search:bm25"
    )
    assert result.exit_code == 0, result.output
    assert result.stdout.startswith("refund_triage: 1 task (the refund triage of ")
    assert (tmp_path / "eval-results" / "refund_triage.silent.jsonl").is_file()


def test_a_wheel_ships_the_suites_in_the_layout_they_are_found_in(tmp_path: Path) -> None:
    # The wheel's files as pyproject.toml selects and places them, without building it.
    wheel = tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["hatch"]["build"]
    wheel = wheel["targets"]["wheel"]
    site = tmp_path / "site"
    placements = {
        **{p: p.removeprefix("src/") for p in wheel["packages"]},
        **wheel["force-include"],
    }
    for included, placed in placements.items():
        shutil.copytree(
            ROOT / included, site / placed, ignore=shutil.ignore_patterns("__pycache__")
        )
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    script = (
        "import toolrelay\n"
        "from toolrelay.cli._demo_catalog import load_demo_catalog, locate_demo_catalog\n"
        "from toolrelay.cli._task_files import load_task_suite\n"
        "print(toolrelay.__file__)\n"
        "print(load_task_suite('refund_triage').name, load_task_suite('bfcl:small').name)\n"
        "print(len(load_demo_catalog(locate_demo_catalog(None)).catalog))\n"
    )
    shown = subprocess.run(
        [sys.executable, "-c", script],
        cwd=elsewhere,
        env={**os.environ, "PYTHONPATH": str(site)},
        capture_output=True,
        text=True,
        check=True,
    ).stdout.splitlines()
    assert shown == [str(site / "toolrelay" / "__init__.py"), "refund_triage bfcl_small", "78"]


def test_a_python_suite_by_path_and_attribute(tmp_path: Path) -> None:
    module = tmp_path / "my_suite.py"
    module.write_text(
        "from toolrelay.evaluation import Task, TaskEnvironment, TaskSuite, answer_contains\n"
        "def make():\n"
        "    empty = {'default': lambda: TaskEnvironment(tools=[])}\n"
        "    task = Task(id='a', prompt='hi', checks=(answer_contains('x'),))\n"
        "    return TaskSuite(name='mine', environments=empty, tasks=(task,))\n"
        "OTHER = make()\n"
    )
    assert load_task_suite(str(module)).name == "mine"  # the one module-level suite
    assert load_task_suite(f"{module}:make").name == "mine"
    with pytest.raises(LoadError, match="has no attribute 'nope'"):
        load_task_suite(f"{module}:nope")


@pytest.mark.parametrize(
    ("row", "message"),
    [
        ({"id": "a", "prompt": "p", "catalog": "tools.jsonl"}, 'needs an "expect" object'),
        (
            {"id": "a", "prompt": "p", "catalog": "tools.jsonl", "expect": {"calls": "x"}},
            '"calls" must be a list',
        ),
        (
            {"id": "a", "prompt": "p", "catalog": "tools.jsonl", "expect": {"maybe": 1}},
            'unknown "expect" keys',
        ),
        (
            {
                "id": "a",
                "prompt": "p",
                "catalog": "missing.jsonl",
                "expect": {"answer_contains": ["x"]},
            },
            "catalog 'missing.jsonl'",
        ),
        (
            {
                "id": "a",
                "prompt": "p",
                "catalog": "tools.jsonl",
                "expect": {"bfcl": [{"name": "x", "arguments": {"a": 1}}]},
            },
            "list of acceptable values",
        ),
        (
            {"prompt": "p", "catalog": "tools.jsonl", "expect": {"answer_contains": ["x"]}},
            'non-empty "id"',
        ),
        (
            {"id": "a", "prompt": "p", "catalog": "tools.jsonl", "expect": {}, "extra": 1},
            r"unknown keys \['extra'\]",
        ),
    ],
)
def test_a_malformed_task_line_is_named(tmp_path: Path, row: dict[str, Any], message: str) -> None:
    write_jsonl(tmp_path / "tools.jsonl", WEATHER_TOOLS)
    path = write_jsonl(tmp_path / "bad.jsonl", [row])
    with pytest.raises(LoadError, match=message) as raised:
        load_task_suite(str(path))
    assert raised.value.line == 1


def test_a_module_catalog_is_built_afresh_for_every_run(tmp_path: Path) -> None:
    path = write_jsonl(
        tmp_path / "desk.jsonl",
        [
            {
                "id": "retry",
                "prompt": "Retry RF-2001.",
                "catalog": str(ROOT / "examples" / "refund_desk"),
                "tool_context": {"tenant_id": "acme", "user_id": "U-ZHANG"},
                "expect": {"calls": [{"name": "refund.retry_failed_order"}]},
            }
        ],
    )
    suite = load_task_suite(str(path))
    make = suite.environments[suite.tasks[0].environment]
    first, second = make(), make()
    assert len(list(first.tools)) == 78
    assert {id(t) for t in first.tools}.isdisjoint(id(t) for t in second.tools)
