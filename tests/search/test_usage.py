"""The usage log: aggregation, scopes, bounds, retain and clear in every log; JSONL files.

:class:`UsageLogContract` holds what every :class:`UsageLog` promises; each log's tests take
it with a ``make`` fixture building that log (``make(max_entries=..., max_age=...)``).
tests/redis/test_usage.py runs it against Redis.
"""

from __future__ import annotations

import json
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from toolrelay.exceptions import ConfigurationError
from toolrelay.search._usage import (
    InMemoryUsageLog,
    SQLiteUsageLog,
    UsageEntry,
    UsageLog,
    dump_usage,
    load_usage,
)

MakeLog = Callable[..., UsageLog]
HOUR = 3600.0


def entry(
    query: str, tool: str, scope: str = "", *, ago: float = 0.0, count: int = 1
) -> UsageEntry:
    """An entry last used ``ago`` seconds before now (distinct ``ago``: a strict order)."""
    return UsageEntry(query=query, tool=tool, scope=scope, count=count, last_used=time.time() - ago)


def triples(entries: tuple[UsageEntry, ...]) -> list[tuple[str, str, str]]:
    return [(e.scope, e.query, e.tool) for e in entries]


class UsageLogContract:
    """What every usage log does; a subclass provides the ``make`` fixture."""

    async def test_it_is_a_usage_log(self, make: MakeLog) -> None:
        assert isinstance(make(), UsageLog)

    async def test_repeats_add_their_counts_and_keep_the_later_time(self, make: MakeLog) -> None:
        log = make()
        first, later = entry("money back", "refund", ago=60), entry("money back", "refund", ago=5)
        await log.record([later, entry("money back", "refund", ago=30, count=2)])
        await log.record([first])  # an older use recorded last does not move the time back
        (stored,) = await log.entries("")
        assert (stored.query, stored.tool, stored.count) == ("money back", "refund", 4)
        assert stored.last_used == later.last_used

    async def test_scopes_are_separate_and_none_reads_every_scope(self, make: MakeLog) -> None:
        log = make()
        await log.record(
            [
                entry("money back", "refund", "acme", ago=30),
                entry("money back", "refund", "globex", ago=20),
                entry("where is my parcel", "track", "acme", ago=10),
            ]
        )
        assert triples(await log.entries("acme")) == [
            ("acme", "where is my parcel", "track"),
            ("acme", "money back", "refund"),
        ]
        assert triples(await log.entries("globex")) == [("globex", "money back", "refund")]
        assert await log.entries("") == ()
        assert triples(await log.entries(None)) == [
            ("acme", "where is my parcel", "track"),
            ("globex", "money back", "refund"),
            ("acme", "money back", "refund"),
        ]
        assert [e.count for e in await log.entries(None)] == [1, 1, 1]

    async def test_past_max_entries_the_least_recently_used_go_first(self, make: MakeLog) -> None:
        log = make(max_entries=3)
        # Recorded newest first: eviction follows the time of last use, not recording order.
        await log.record([entry("q4", "t", ago=10), entry("q3", "t", ago=20)])
        await log.record([entry("q2", "t", "other", ago=30), entry("q1", "t", ago=40)])
        assert [e.query for e in await log.entries(None)] == ["q4", "q3", "q2"]
        await log.record([entry("q2", "t", "other", ago=1)])  # a repeat makes q2 the most recent
        await log.record([entry("q5", "t", ago=15)])
        assert [e.query for e in await log.entries(None)] == ["q2", "q4", "q5"]

    async def test_entries_older_than_max_age_are_dropped_on_read(self, make: MakeLog) -> None:
        log = make(max_age=HOUR)
        await log.record(
            [entry("old", "t", "acme", ago=2 * HOUR), entry("fresh", "t", "acme", ago=60)]
        )
        assert [e.query for e in await log.entries("acme")] == ["fresh"]
        assert [e.query for e in await log.entries(None)] == ["fresh"]
        # A new use of an expired entry starts it again rather than reviving its old count.
        await log.record([entry("old", "t", "acme")])
        assert [(e.query, e.count) for e in await log.entries("acme")] == [
            ("old", 1),
            ("fresh", 1),
        ]

    async def test_without_max_age_nothing_expires(self, make: MakeLog) -> None:
        log = make(max_age=None)
        await log.record([UsageEntry(query="ancient", tool="t", last_used=1.0)])
        assert [(e.query, e.last_used) for e in await log.entries("")] == [("ancient", 1.0)]

    async def test_retain_drops_the_tools_that_left_the_catalog(self, make: MakeLog) -> None:
        log = make()
        await log.record(
            [
                entry("money back", "refund", "acme", ago=3),
                entry("money back", "old.refund", "acme", ago=2),
                entry("cancel it", "old.refund", "globex", ago=1),
            ]
        )
        assert await log.retain({"refund", "track"}) == 2
        assert triples(await log.entries(None)) == [("acme", "money back", "refund")]
        assert await log.retain({"refund"}) == 0
        assert await log.retain(set()) == 1
        assert await log.entries(None) == ()

    async def test_clear_forgets_one_scope_or_every_entry(self, make: MakeLog) -> None:
        log = make()
        await log.record([entry("a", "t", "acme", ago=2), entry("b", "t", "globex", ago=1)])
        await log.clear("acme")
        assert triples(await log.entries(None)) == [("globex", "b", "t")]
        await log.clear("nobody")
        await log.record([entry("c", "t", "", ago=0)])
        await log.clear()
        assert await log.entries(None) == ()
        await log.record([entry("a", "t", "acme")])  # a cleared log records again
        assert [e.count for e in await log.entries("acme")] == [1]

    async def test_lone_surrogates_scopes_and_tools_kept_exactly(self, make: MakeLog) -> None:
        log = make()
        scope, tool = "tenant-\ud83d", "svc.\ude00"  # UTF-8 cannot encode either
        await log.record([entry("refund \ud83d", tool, scope), entry("refund \ud83d", tool, scope)])
        (stored,) = await log.entries(scope)
        assert (stored.scope, stored.tool, stored.count) == (scope, tool, 2)
        assert stored.query == "refund \ufffd"  # indexes read the query: valid Unicode
        assert await log.entries("tenant-\ud83e") == ()
        assert await log.retain({tool}) == 0
        await log.clear(scope)
        assert await log.entries(None) == ()

    async def test_empty_and_overlong_queries_are_not_kept(self, make: MakeLog) -> None:
        log = make()
        await log.record(
            [
                entry("", "t", ago=4),
                entry("   ", "t", ago=3),
                entry("x" * 1001, "t", ago=2),
                entry(" " + "y" * 1000 + " ", "t", ago=1),
                entry("no tool", ""),
            ]
        )
        assert [e.query for e in await log.entries(None)] == ["y" * 1000]

    @pytest.mark.parametrize(
        ("bounds", "message"),
        [
            ({"max_entries": 0}, "max_entries must be at least 1, not 0"),
            ({"max_age": 0}, "max_age must be positive seconds or None, not 0"),
            ({"max_age": -1.0}, "max_age must be positive seconds or None"),
            ({"max_age": float("nan")}, "max_age must be positive seconds or None"),
        ],
    )
    def test_bad_bounds_are_rejected(
        self, make: MakeLog, bounds: dict[str, Any], message: str
    ) -> None:
        with pytest.raises(ConfigurationError, match=message):
            make(**bounds)


class TestLocalUsageLogs(UsageLogContract):
    @pytest.fixture(params=["memory", "sqlite"])
    def make(self, request: pytest.FixtureRequest, tmp_path: Path) -> MakeLog:
        made = iter(range(1000))

        def build(**bounds: Any) -> UsageLog:
            if request.param == "memory":
                return InMemoryUsageLog(**bounds)
            return SQLiteUsageLog(tmp_path / f"usage-{next(made)}.sqlite3", **bounds)

        return build


async def test_sqlite_logs_on_one_file_share_their_entries(tmp_path: Path) -> None:
    path = tmp_path / "logs" / "usage.sqlite3"
    first, second = SQLiteUsageLog(path), SQLiteUsageLog(path)
    await first.record([entry("money back", "refund", "acme")])
    await second.record([entry("money back", "refund", "acme", count=2)])
    assert [e.count for e in await first.entries("acme")] == [3]
    assert [e.count for e in await SQLiteUsageLog(path).entries("acme")] == [3]


def test_sqlite_log_in_a_folder_it_cannot_create_is_a_clear_error(tmp_path: Path) -> None:
    (tmp_path / "file").write_text("not a folder")
    with pytest.raises(ConfigurationError, match="cannot open the usage log"):
        SQLiteUsageLog(tmp_path / "file" / "usage.sqlite3")


async def test_dump_and_load_round_trip(tmp_path: Path) -> None:
    log = InMemoryUsageLog()
    await log.record(
        [
            entry("money back", "refund", "acme", ago=20, count=3),
            entry("où est mon colis", "track", "tenant-\ud83d", ago=10),
        ]
    )
    path = tmp_path / "usage.jsonl"
    assert dump_usage(await log.entries(None), path) == 2
    path.read_text(encoding="utf-8")  # valid UTF-8: the lone surrogate is an escape
    loaded = load_usage(path, scope="ignored: every line has its scope")
    assert loaded == list(await log.entries(None))
    copy = InMemoryUsageLog()
    await copy.record(loaded)
    assert await copy.entries(None) == await log.entries(None)


def test_load_usage_of_benchmark_lines_gives_one_entry_per_relevant_tool(tmp_path: Path) -> None:
    path = tmp_path / "queries.jsonl"
    lines = [
        {"query": "money back for order 7", "relevant": ["refund", "orders.get"]},
        {"query": "where is my parcel", "relevant": ["track"], "id": "q2"},
    ]
    path.write_text("\n".join(json.dumps(line) for line in lines) + "\n\n", encoding="utf-8")
    before = time.time()
    loaded = load_usage(path, scope="acme")
    assert [(e.scope, e.query, e.tool, e.count) for e in loaded] == [
        ("acme", "money back for order 7", "refund", 1),
        ("acme", "money back for order 7", "orders.get", 1),
        ("acme", "where is my parcel", "track", 1),
    ]
    assert all(e.last_used >= before for e in loaded)  # undated lines are used now


@pytest.mark.parametrize(
    "bad",
    [
        "not json",
        '["a list"]',
        '{"tool": "refund"}',
        '{"query": "q"}',
        '{"query": "q", "relevant": "refund"}',
        '{"query": 7, "tool": "refund"}',
        '{"query": "q", "tool": "refund", "scope": null}',
        '{"query": "q", "tool": "refund", "count": "many"}',
    ],
)
def test_a_bad_line_is_a_clear_error_naming_its_number(tmp_path: Path, bad: str) -> None:
    path = tmp_path / "usage.jsonl"
    path.write_text('{"query": "q", "tool": "refund"}\n\n' + bad + "\n", encoding="utf-8")
    with pytest.raises(ConfigurationError, match=r"usage\.jsonl:3: not a usage line") as caught:
        load_usage(path)
    assert '"relevant": [...]' in str(caught.value)  # the forms it expected


def test_an_unreadable_file_is_a_clear_error(tmp_path: Path) -> None:
    with pytest.raises(ConfigurationError, match="cannot read the usage file"):
        load_usage(tmp_path / "missing.jsonl")
