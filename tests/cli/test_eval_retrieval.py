"""``toolrelay eval retrieval``: metrics from toolrelay.search._evaluation, printed and written."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from toolrelay.cli._eval_retrieval import find_dataset, load_name_map, load_queries
from toolrelay.exceptions import LoadError

from ._helpers import ROOT, write_jsonl
from .conftest import Invoke

QUERIES = [
    {"id": "w-1", "query": "what is the weather in Paris", "relevant": ["get_weather"]},
    {"id": "r-1", "query": "refund order 42", "relevant": ["refund.create"]},
    {"id": "e-1", "query": "email the weather report", "relevant": ["send_email", "get_weather"]},
]


@pytest.fixture
def queries_file(tmp_path: Path) -> Path:
    return write_jsonl(tmp_path / "queries.jsonl", QUERIES)


def test_prints_every_metric(cli: Invoke, catalog_file: Path, queries_file: Path) -> None:
    result = cli("eval", "retrieval", "-c", str(catalog_file), "-q", str(queries_file))
    assert result.exit_code == 0, result.output
    for metric in ("R@1", "R@3", "R@5", "R@10", "NDCG@10", "MRR", "Complete@5"):
        assert metric in result.stdout
    assert "3 tools, 3 queries, index bm25, strict scoring" in result.stdout


def test_json_and_output_file_hold_the_same_report(
    cli: Invoke, catalog_file: Path, queries_file: Path, tmp_path: Path
) -> None:
    out = tmp_path / "results" / "report.json"
    result = cli(
        "eval",
        "retrieval",
        "-c",
        str(catalog_file),
        "-q",
        str(queries_file),
        "--json",
        "--output",
        str(out),
        "-k",
        "2",
        "--subset",
        "w-",
    )
    assert result.exit_code == 0, result.output
    data = json.loads(result.stdout)
    assert json.loads(out.read_text(encoding="utf-8")) == data
    assert result.stderr == f"wrote {out}\n"
    assert data["queries"] == 3
    assert data["tools"] == 3
    assert data["lenient"] is False
    metrics = data["metrics"]
    assert list(metrics) == ["R@1", "R@2", "R@3", "R@5", "R@10", "NDCG@10", "MRR", "Complete@5"]
    # Easy queries: every relevant tool is within the top 3 tools of a 3-tool catalog.
    assert metrics["R@3"] == 100.0
    assert metrics["R@1"] <= metrics["R@2"] <= metrics["R@3"]
    assert data["subsets"]["w-"]["queries"] == 1
    assert [o["id"] for o in data["outcomes"]] == ["w-1", "r-1", "e-1"]
    assert data["outcomes"][0]["retrieved"][0] == "get_weather"


def test_name_map_makes_scoring_lenient(cli: Invoke, tmp_path: Path) -> None:
    catalog = write_jsonl(
        tmp_path / "tools.jsonl",
        [
            {"name": "get_weather", "description": "Weather forecast for a city."},
            {"name": "get_weather__v2", "description": "Weather forecast for a town."},
            {"name": "send_email", "description": "Send an email."},
        ],
    )
    queries = write_jsonl(
        tmp_path / "q.jsonl",
        [{"id": "1", "query": "weather forecast town", "relevant": ["get_weather"]}],
    )
    name_map = tmp_path / "map.json"
    name_map.write_text(json.dumps({"get_weather__v2": "get_weather"}), encoding="utf-8")
    base = ("eval", "retrieval", "-c", str(catalog), "-q", str(queries), "--json")
    strict = json.loads(cli(*base).stdout)
    lenient = json.loads(cli(*base, "--name-map", str(name_map)).stdout)
    assert strict["outcomes"][0]["retrieved"][0] == "get_weather__v2"
    assert strict["metrics"]["R@1"] == 0.0
    assert lenient["lenient"] is True
    assert lenient["metrics"]["R@1"] == 100.0


def test_a_relevant_tool_missing_from_the_catalog_is_a_warning_or_with_strict_an_error(
    cli: Invoke, catalog_file: Path, queries_file: Path, tmp_path: Path
) -> None:
    queries = write_jsonl(
        tmp_path / "q.jsonl",
        [
            QUERIES[0],
            {"id": "typo", "query": "weather in Rome", "relevant": ["get_wether"]},
            {"id": "gone", "query": "cancel it", "relevant": ["orders.cancel", "send_email"]},
        ],
    )
    base = ("eval", "retrieval", "-c", str(catalog_file), "-q", str(queries))
    message = (
        f"{queries}: 2 queries name relevant tools that are not in the catalog, so they score "
        "as misses whatever the index does: typo ('get_wether'); gone ('orders.cancel')"
    )
    warned = cli(*base, "--json")
    assert warned.exit_code == 0, warned.output
    assert warned.stderr == f"warning: {message} (--strict makes this an error)\n"
    data = json.loads(warned.stdout)
    assert data["unknown_relevant"] == {"typo": ["get_wether"], "gone": ["orders.cancel"]}
    assert [o["hit_ranks"] for o in data["outcomes"][1:2]] == [[]]  # a miss, whatever ranks
    refused = cli(*base, "--strict")
    assert refused.exit_code == 1
    assert refused.stdout == ""
    assert refused.stderr == f"error: {message}\n"
    clean = cli("eval", "retrieval", "-c", str(catalog_file), "-q", str(queries_file), "--strict")
    assert (clean.exit_code, clean.stderr) == (0, "")


def test_dataset_shortcut_uses_the_benchmark_folder(
    cli: Invoke, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(ROOT / "examples")  # found in a folder above the working directory
    result = cli("eval", "retrieval", "--dataset", "restbench", "--json")
    assert result.exit_code == 0, result.output
    data = json.loads(result.stdout)
    assert data["dataset"] == "restbench"
    assert data["queries_file"].endswith("queries.dev.jsonl")
    assert data["queries"] > 50
    assert 0.0 < data["metrics"]["R@10"] <= 100.0


def test_unknown_dataset(cli: Invoke, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    result = cli("eval", "retrieval", "--dataset", "nope")
    assert result.exit_code == 1
    assert result.stderr.startswith("error: nope: no such dataset")


def test_catalog_and_queries_are_required_without_a_dataset(
    cli: Invoke, catalog_file: Path
) -> None:
    result = cli("eval", "retrieval", "-c", str(catalog_file))
    assert result.exit_code == 2
    assert result.stderr.splitlines() == [
        "error: Invalid value for '--queries': give --queries, or --dataset "
        "(see 'toolrelay eval retrieval --help')"
    ]


def test_unknown_index_type(cli: Invoke, catalog_file: Path, queries_file: Path) -> None:
    result = cli(
        "eval", "retrieval", "-c", str(catalog_file), "-q", str(queries_file), "-i", "nope"
    )
    assert result.exit_code == 2
    assert "unknown index type 'nope'" in result.stderr


def test_bad_query_line_is_named(cli: Invoke, catalog_file: Path, tmp_path: Path) -> None:
    queries = tmp_path / "q.jsonl"
    queries.write_text(json.dumps(QUERIES[0]) + "\n{oops\n", encoding="utf-8")
    result = cli("eval", "retrieval", "-c", str(catalog_file), "-q", str(queries))
    assert result.exit_code == 1
    assert result.stderr.startswith(f"error: {queries}:2: not valid JSON")
    assert len(result.stderr.splitlines()) == 1


@pytest.mark.parametrize(
    ("row", "message"),
    [
        ({"id": "1", "relevant": ["a"]}, '"query"'),
        ({"id": "1", "query": "q", "relevant": []}, '"relevant"'),
        ({"id": "1", "query": "q", "relevant": "a"}, '"relevant"'),
        ([1], "JSON object"),
    ],
)
def test_malformed_queries(tmp_path: Path, row: object, message: str) -> None:
    path = write_jsonl(tmp_path / "q.jsonl", [QUERIES[0], row])
    with pytest.raises(LoadError, match=message) as caught:
        load_queries(path)
    assert caught.value.line == 2


def test_queries_without_id_are_numbered_by_line(tmp_path: Path) -> None:
    path = write_jsonl(tmp_path / "q.jsonl", [{"query": "q", "relevant": ["a", "a", "b"]}])
    (query,) = load_queries(path)
    assert query.id == "1"
    assert query.relevant == ("a", "b")


def test_name_map_must_map_names_to_names(tmp_path: Path) -> None:
    path = tmp_path / "map.json"
    path.write_text('{"a": 1}', encoding="utf-8")
    with pytest.raises(LoadError, match="name map"):
        load_name_map(path)
    path.write_text('{"a": "b"}', encoding="utf-8")
    assert load_name_map(path) == {"a": "b"}


def test_find_dataset_accepts_a_folder(tmp_path: Path) -> None:
    assert find_dataset(str(tmp_path)) == tmp_path


@pytest.mark.parametrize(
    ("name", "subset", "lenient"),
    [("acebench_zh", "normal_multi_turn", True), ("hammerbench_zh", "initial_", False)],
)
def test_chinese_datasets_by_name_and_by_folder(
    cli: Invoke, monkeypatch: pytest.MonkeyPatch, name: str, subset: str, lenient: bool
) -> None:
    folder = ROOT / "benchmarks" / "data" / name
    tools = sum(1 for line in (folder / "tools.jsonl").open(encoding="utf-8") if line.strip())
    queries = sum(
        1 for line in (folder / "queries.dev.jsonl").open(encoding="utf-8") if line.strip()
    )
    monkeypatch.chdir(ROOT / "examples")
    by_name = cli("eval", "retrieval", "--dataset", name, "--subset", subset, "--json")
    assert by_name.exit_code == 0, by_name.output
    data = json.loads(by_name.stdout)
    assert (data["dataset"], data["tools"], data["queries"]) == (name, tools, queries)
    # acebench_zh renames colliding tools and ships the map; hammerbench_zh renames none.
    assert data["lenient"] is lenient
    assert (data["name_map"] is not None) is lenient
    # Chinese requests against Chinese descriptions: whitespace tokens would match almost
    # nothing (NDCG@10 near 1, see the datasets' SOURCE.md); segmented keywords find most.
    assert data["metrics"]["NDCG@10"] > 50.0
    assert 0 < data["subsets"][subset]["queries"] < queries

    by_folder = cli("eval", "retrieval", "--dataset", str(folder))
    assert by_folder.exit_code == 0, by_folder.output
    scoring = "lenient (name map)" if lenient else "strict"
    assert f"{name}: {tools:,} tools, {queries:,} queries, index bm25, {scoring} scoring" in (
        by_folder.stdout
    )


def test_one_tool_and_one_query_are_counted_in_the_singular(cli: Invoke, tmp_path: Path) -> None:
    catalog = write_jsonl(tmp_path / "one.jsonl", [{"name": "ping", "description": "Ping a host."}])
    queries = write_jsonl(tmp_path / "q.jsonl", [{"query": "ping it", "relevant": ["ping"]}])
    result = cli("eval", "retrieval", "-c", str(catalog), "-q", str(queries))
    assert result.exit_code == 0, result.output
    assert f"{catalog}: 1 tool, 1 query, index bm25" in result.stdout


def test_a_usage_log_of_past_queries_is_ranked_with(
    cli: Invoke, catalog_file: Path, tmp_path: Path
) -> None:
    asked = [{"id": "k-1", "query": "kettle arrived broken", "relevant": ["refund.create"]}]
    queries = write_jsonl(tmp_path / "asked.jsonl", asked)
    # The benchmark format serves as a log: the same need, asked before.
    log = write_jsonl(tmp_path / "log.jsonl", [{**asked[0], "query": "my kettle arrived broken"}])
    args = ["eval", "retrieval", "-c", str(catalog_file), "-q", str(queries), "--json"]
    without = json.loads(cli(*args).stdout)
    with_log = json.loads(cli(*args, "--usage-log", str(log)).stdout)
    assert without["metrics"]["NDCG@10"] == 0.0
    assert with_log["metrics"]["NDCG@10"] == 100.0
    assert (with_log["usage_log"], with_log["history_entries"]) == (str(log), 1)
    assert "usage_log" not in without
