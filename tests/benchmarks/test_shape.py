"""benchmarks/shape.py: the shape figures of this tree, and the files and section it writes."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from tests.benchmarks._scripts import BENCHMARKS, load_script
from tests.extras import needs_extra

pytest.importorskip("grimp", reason=needs_extra("dev"))

shape = load_script(BENCHMARKS / "shape.py", "benchmark_shape")


@pytest.fixture(scope="module")
def measured() -> dict[str, Any]:
    return shape.measure()


def test_the_figures_of_this_tree_are_counted(measured: dict[str, Any]) -> None:
    assert set(measured) == {key for key, _ in shape.FIGURES} | {"circles", "frames"}
    assert all(isinstance(measured[key], int) for key, _ in shape.FIGURES)
    assert 10 <= measured["public_modules"] < measured["private_modules"]
    assert 25 <= measured["root_names"] < measured["exported_names"]
    assert measured["source_lines"] > 10_000
    assert measured["import_circles"] == len(measured["circles"])


def test_the_frames_are_toolrelays_from_the_client_down_to_the_tool(
    measured: dict[str, Any],
) -> None:
    frames = measured["frames"]
    assert measured["tool_call_frames"] == len(frames)
    assert 3 <= len(frames) <= 40
    assert frames[0].startswith("client/")  # outermost: the ChatClient call
    assert any(frame.startswith("execution/") for frame in frames)
    assert all(not Path(frame.split(":")[0]).is_absolute() for frame in frames)


def test_the_results_it_writes_hold_every_figure(measured: dict[str, Any], tmp_path: Path) -> None:
    shape.write(measured, tmp_path)
    assert json.loads((tmp_path / "shape.json").read_text(encoding="utf-8")) == measured
    table = (tmp_path / "shape.md").read_text(encoding="utf-8")
    for key, label in shape.FIGURES:
        assert f"| {label} | {measured[key]:,} |" in table
    committed = json.loads((shape.RESULTS / "shape.json").read_text(encoding="utf-8"))
    assert set(committed) == set(measured)  # a new figure needs a new run
