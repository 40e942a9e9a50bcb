"""benchmarks/reliability.py: the published figures cover every campaign, and all hold."""

from __future__ import annotations

import json
from typing import Any

from tests.benchmarks._scripts import BENCHMARKS, load_script
from tests.faults.ledger import FAILURES, SEED

reliability = load_script(BENCHMARKS / "reliability.py", "benchmark_reliability")


def committed() -> dict[str, Any]:
    return json.loads((reliability.RESULTS / "reliability.json").read_text(encoding="utf-8"))


def test_the_published_figures_cover_every_campaign_with_the_suites_seed() -> None:
    data = committed()
    assert [run["module"] for run in data["campaigns"]] == reliability.campaign_modules()
    assert data["seed"] == SEED
    assert data["failure_kinds"] == FAILURES  # a new kind of failure needs a new run


def test_every_published_count_of_broken_promises_is_zero() -> None:
    for run in committed()["campaigns"]:
        assert run["tried"] > 0, run["campaign"]
        assert set(run["failures"]) == set(FAILURES)
        assert not any(run["failures"].values()), run


def test_the_table_has_a_row_per_campaign_and_a_column_per_kind() -> None:
    data = {
        "failure_kinds": {"crashes": "...", "double_runs": "..."},
        "campaigns": [
            {
                "campaign": "a",
                "tried": 12_000,
                "unit": "calls",
                "failures": {"crashes": 0, "double_runs": 2},
            },
        ],
    }
    assert reliability.table(data).splitlines() == [
        "| campaign | tried | crashes | double runs |",
        "|---|---:|---:|---:|",
        "| a | 12,000 calls | 0 | 2 |",
    ]


def test_the_persistence_table_has_a_row_per_mode_and_a_column_per_fault() -> None:
    observed = {
        "turns failed, AOF always, killed": 9,
        "conversations whose messages were lost, no persistence, killed": 19,
        "operations run again, no persistence, killed": 26,
        "conversations whose messages were lost, AOF always, killed": 0,
        "operations run again, AOF always, killed": 0,
        "scenarios": 2,
    }
    data = {"campaigns": [{"module": "test_redis_faults", "observed": observed}]}
    assert reliability.persistence_table(data).splitlines() == [
        "| persistence | killed |",
        "|---|---:|",
        "| no persistence | 19 / 26 |",
        "| AOF always | 0 / 0 |",
    ]
