"""benchmarks/install.py: what it counts, what a partial run keeps, and the README section."""

from __future__ import annotations

import copy
import json
import os
from pathlib import Path
from typing import Any

from tests.benchmarks._scripts import BENCHMARKS, load_script

install = load_script(BENCHMARKS / "install.py", "benchmark_install")
COMMITTED: dict[str, Any] = json.loads((install.RESULTS / "install.json").read_text("utf-8"))


def test_the_dev_target_is_what_readmes_first_command_installs(tmp_path: Path) -> None:
    assert install.readme_extras() == install.TARGETS["dev"]
    page = tmp_path / "README.md"
    page.write_text("""x && .venv/bin/pip install -e ".[cli,dev]" && y""", encoding="utf-8")
    assert install.readme_extras(page) == "cli,dev"


def test_the_size_counts_each_file_once(tmp_path: Path) -> None:
    empty = install.disk_megabytes(tmp_path)
    (tmp_path / "a").write_bytes(b"x" * 2_000_000)
    one = install.disk_megabytes(tmp_path)
    assert 1.9 <= one - empty <= 2.2
    os.link(tmp_path / "a", tmp_path / "b")  # a hard link takes no more space
    assert install.disk_megabytes(tmp_path) == one


def test_dependencies_are_what_an_install_added_but_toolrelay() -> None:
    added = install.dependencies(["numpy", "pip", "toolrelay", "typer"], ["pip", "setuptools"])
    assert added == ["numpy", "typer"]


def test_a_partial_run_keeps_the_other_targets() -> None:
    row = {**COMMITTED["targets"]["core"], "install_seconds": 1.0}
    data = install.merged(COMMITTED, {"targets": {"embeddings": row, "core": row}})
    assert list(data["targets"]) == [t for t in install.TARGETS if t in data["targets"]]
    assert data["targets"]["dev"] == COMMITTED["targets"]["dev"]
    assert data["targets"]["core"]["install_seconds"] == 1.0
    assert install.merged(None, {"targets": {"core": row}}) == {"targets": {"core": row}}


def test_the_readme_section_quotes_the_results() -> None:
    (section,) = install.docs_sections(COMMITTED)
    assert section.page == install.README
    changed = copy.deepcopy(COMMITTED)
    changed["targets"]["core"]["dependency_count"] = 123
    changed["targets"]["core"]["size_mb"] = 4567.0
    (other,) = install.docs_sections(changed)
    assert "| core, no extra | `pip install -e .` | 123 | 4,567 MB |" in other.text
    assert other.text != section.text


def test_the_results_it_writes_list_every_package(tmp_path: Path) -> None:
    install.write(COMMITTED, tmp_path)
    assert json.loads((tmp_path / "install.json").read_text("utf-8")) == COMMITTED
    table = (tmp_path / "install.md").read_text("utf-8")
    for row in COMMITTED["targets"].values():
        assert all(f"`{name}`" in table for name in row["dependencies"])


def test_the_core_brings_no_command_line_nor_test_tool() -> None:
    core = set(COMMITTED["targets"]["core"]["dependencies"])
    assert core.isdisjoint({"typer", "rich", "click", "pygments", "pytest"})
    assert {"typer", "rich", "pytest"} <= set(COMMITTED["targets"]["dev"]["dependencies"])
    for row in COMMITTED["targets"].values():
        assert row["dependency_count"] == len(row["dependencies"])
