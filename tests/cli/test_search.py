"""``toolrelay search``: ranked hits from every kind of index, and bad input."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.extras import needs_extra
from toolrelay.search._embedders import embeddings_available

from ._helpers import REFUND_DESK, write_jsonl
from .conftest import Invoke


def test_bm25_ranks_the_matching_tool_first(cli: Invoke, catalog_file: Path) -> None:
    result = cli("search", str(catalog_file), "refund my order")
    assert result.exit_code == 0, result.output
    lines = [line for line in result.stdout.splitlines() if "│" in line]
    assert "refund.create" in lines[0]
    assert "(bm25)" in result.stdout
    assert "of 3 tools matched" in result.stdout


def test_json_output_has_ranked_hits_with_scores(cli: Invoke, catalog_file: Path) -> None:
    result = cli("search", str(catalog_file), "weather in a city", "--json", "-k", "2")
    assert result.exit_code == 0
    data = json.loads(result.stdout)
    assert data["index"] == "bm25"
    assert data["tools"] == 3
    assert data["hits"][0]["name"] == "get_weather"
    assert data["hits"][0]["rank"] == 1
    scores = [h["score"] for h in data["hits"]]
    assert scores == sorted(scores, reverse=True)
    assert len(data["hits"]) <= 2


def test_regex_index_and_category(cli: Invoke, catalog_file: Path) -> None:
    result = cli("search", str(catalog_file), "refund|email", "--index", "regex", "--json")
    assert result.exit_code == 0, result.output
    names = [h["name"] for h in json.loads(result.stdout)["hits"]]
    assert set(names) == {"refund.create", "send_email"}
    only = cli(
        "search", str(catalog_file), "refund|email", "-i", "regex", "--category", "refund", "--json"
    )
    assert [h["name"] for h in json.loads(only.stdout)["hits"]] == ["refund.create"]


def test_no_match_says_so(cli: Invoke, catalog_file: Path) -> None:
    result = cli("search", str(catalog_file), "zzzqqq", "--index", "regex")
    assert result.exit_code == 0
    assert "No tools matched 'zzzqqq'" in result.stdout


def test_refund_desk_finds_the_retry_tool(cli: Invoke) -> None:
    result = cli("search", str(REFUND_DESK), "retry a failed refund", "--json", "-k", "3")
    assert result.exit_code == 0, result.output
    names = [h["name"] for h in json.loads(result.stdout)["hits"]]
    assert "refund.retry_failed_order" in names


def test_unknown_index_type_is_a_usage_error(cli: Invoke, catalog_file: Path) -> None:
    result = cli("search", str(catalog_file), "x", "--index", "magic")
    assert result.exit_code == 2
    assert result.stderr.splitlines() == [
        "error: Invalid value for '--index' / '-i': unknown index type 'magic'; choose one of "
        "regex, bm25, vector, hybrid, auto (see 'toolrelay search --help')"
    ]


def test_k_out_of_range_is_a_usage_error(cli: Invoke, catalog_file: Path) -> None:
    result = cli("search", str(catalog_file), "x", "-k", "11")
    assert result.exit_code == 2
    assert len(result.stderr.splitlines()) == 1


def test_duplicate_names_stop_a_search(cli: Invoke, tmp_path: Path) -> None:
    path = write_jsonl(tmp_path / "t.jsonl", [{"name": "a"}, {"name": "b"}, {"name": "a"}])
    result = cli("search", str(path), "x")
    assert result.exit_code == 1
    assert result.stderr == (
        f"error: invalid tool 'a': defined twice, by {path}:1 and by {path}:3; give each tool "
        "its own name\n"
    )


def test_missing_catalog(cli: Invoke, tmp_path: Path) -> None:
    result = cli("search", str(tmp_path / "nope.json"), "x")
    assert result.exit_code == 1
    assert result.stderr == f"error: {tmp_path / 'nope.json'}: no such file\n"


@pytest.mark.skipif(not embeddings_available(), reason=needs_extra("embeddings"))
@pytest.mark.parametrize(
    ("kind", "search_type"), [("vector", "vector"), ("hybrid", "hybrid"), ("auto", "hybrid")]
)
def test_embedding_indexes_rank_by_meaning(
    cli: Invoke, catalog_file: Path, kind: str, search_type: str
) -> None:
    result = cli("search", str(catalog_file), "will it rain tomorrow", "-i", kind, "--json")
    assert result.exit_code == 0, result.output
    data = json.loads(result.stdout)
    assert data["index"] == search_type
    assert data["hits"][0]["name"] == "get_weather"


def test_a_category_without_tools_says_so(cli: Invoke, catalog_file: Path) -> None:
    result = cli("search", str(catalog_file), "refund", "--category", "refnd")
    assert result.exit_code == 1
    assert result.stderr == "error: no tool is in category 'refnd'; its categories are refund\n"
    empty = cli("search", str(catalog_file), "refund", "--category", " ")
    assert empty.exit_code == 2
    assert "give a category name" in empty.stderr
    flat = write_jsonl(catalog_file.parent / "flat.jsonl", [{"name": "ping", "description": "x"}])
    none = cli("search", str(flat), "x", "--category", "ops")
    assert none.stderr == "error: no tool is in category 'ops'; it has no dotted tool names\n"


def test_one_tool_is_counted_in_the_singular(cli: Invoke, tmp_path: Path) -> None:
    one = write_jsonl(tmp_path / "one.jsonl", [{"name": "ping", "description": "Ping a host."}])
    result = cli("search", str(one), "ping")
    assert result.exit_code == 0, result.output
    assert "1 of 1 tool matched in " in result.stdout


def test_the_model_load_is_timed_apart_from_the_search(
    cli: Invoke, catalog_file: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from toolrelay.cli import _indexes as indexes
    from toolrelay.search._vector import VectorToolIndex
    from toolrelay.testing import HashingEmbedder

    real = indexes.make_index

    def make(kind: indexes.IndexType, **options: str) -> object:
        if kind is indexes.IndexType.VECTOR:
            return VectorToolIndex(HashingEmbedder(), cache=False)
        return real(kind, **options)

    monkeypatch.setattr(indexes, "make_index", make)
    text = cli("search", str(catalog_file), "weather", "-i", "vector")
    assert text.exit_code == 0, text.output
    assert "; indexed in " in text.stdout
    assert ", model loaded in " in text.stdout
    data = json.loads(cli("search", str(catalog_file), "weather", "-i", "vector", "--json").stdout)
    assert data["load_seconds"] is not None
    bm25 = json.loads(cli("search", str(catalog_file), "weather", "--json").stdout)
    assert bm25["load_seconds"] is None  # no model to load
    assert "model loaded" not in cli("search", str(catalog_file), "weather").stdout


def test_a_usage_log_shows_which_hits_history_found_and_by_which_query(
    cli: Invoke, catalog_file: Path, tmp_path: Path
) -> None:
    words = "kettle arrived broken"
    log = write_jsonl(tmp_path / "usage.jsonl", [{"query": words, "tool": "refund.create"}])
    plain = cli("search", str(catalog_file), words, "--json")
    assert json.loads(plain.stdout)["hits"] == []
    result = cli("search", str(catalog_file), words, "--usage-log", str(log), "--json")
    assert result.exit_code == 0, result.output
    (hit,) = json.loads(result.stdout)["hits"]
    assert (hit["name"], hit["history_query"]) == ("refund.create", words)
    assert hit["history_score"] == hit["score"]
    table = cli("search", str(catalog_file), words, "--usage-log", str(log))
    assert "From" in table.stdout
    assert "history +" in table.stdout
    assert "ranked with 1 past query" in table.stdout


def test_a_bad_usage_log_line_is_named(cli: Invoke, catalog_file: Path, tmp_path: Path) -> None:
    log = tmp_path / "usage.jsonl"
    log.write_text('{"query": "q", "tool": "refund.create"}\n{"tool": 3}\n', encoding="utf-8")
    result = cli("search", str(catalog_file), "refund", "--usage-log", str(log))
    assert result.exit_code != 0
    assert f"{log}:2" in result.output
