from __future__ import annotations

from pathlib import Path

import pytest

from toolrelay.exceptions import ConfigurationError
from toolrelay.lint import LintConfig, Severity, Thresholds, find_config, load_config

FULL = """
[project]
name = "demo"

[tool.toolrelay.lint]
disable = ["description-too-short"]
per-tool = { "refund.force_success" = ["side-effect-unmarked"], "legacy.*" = ["*"] }
fail-on = "warning"
index = "bm25"
several-sources = true

[tool.toolrelay.lint.thresholds]
min-description-words = 5
confusable-margin = 0.3
"""


def _write(folder: Path, text: str) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / "pyproject.toml"
    path.write_text(text, encoding="utf-8")
    return path


def test_every_key_is_read(tmp_path: Path) -> None:
    path = _write(tmp_path, FULL)
    config = load_config(path)
    assert config.disable == {"description-too-short"}
    assert config.per_tool == {
        "refund.force_success": {"side-effect-unmarked"},
        "legacy.*": {"*"},
    }
    assert config.fail_on is Severity.WARNING
    assert config.index == "bm25"
    assert config.several_sources is True
    assert config.thresholds == Thresholds(min_description_words=5, confusable_margin=0.3)
    assert config.path == path


def test_disabling_is_global_per_tool_or_by_pattern(tmp_path: Path) -> None:
    config = load_config(_write(tmp_path, FULL))
    assert config.is_disabled_for("description-too-short", "anything")
    assert not config.is_enabled("description-too-short")
    assert config.is_disabled_for("side-effect-unmarked", "refund.force_success")
    assert not config.is_disabled_for("side-effect-unmarked", "refund.retry")
    assert config.is_disabled_for("name-generic", "legacy.search")
    assert not config.is_disabled_for("name-generic", None)
    assert config.named_rules() == {"description-too-short", "side-effect-unmarked"}


def test_the_nearest_pyproject_with_the_table_wins(tmp_path: Path) -> None:
    _write(tmp_path, FULL)
    _write(tmp_path / "pkg", '[project]\nname = "inner"\n')  # no table: keep walking up
    deep = tmp_path / "pkg" / "src" / "module"
    deep.mkdir(parents=True)
    assert find_config(deep).path == tmp_path / "pyproject.toml"
    inner = _write(tmp_path / "pkg", '[tool.toolrelay.lint]\nfail-on = "never"\n')
    found = find_config(deep)
    assert found.path == inner
    assert found.fail_on is None


def test_no_table_anywhere_gives_the_defaults(tmp_path: Path) -> None:
    assert find_config(tmp_path) == LintConfig()
    assert load_config(_write(tmp_path, "[project]\n")).fail_on is Severity.ERROR


@pytest.mark.parametrize(
    ("table", "message"),
    [
        ('disable = "x"\nbogus = 1', "unknown keys"),
        ("fail-on = 'sometimes'", "fail-on must be one of"),
        ("index = 'regex'", "index must be one of"),
        ("disable = [1]", "list of rule ids"),
        ("per-tool = ['x']", "per-tool must be a table"),
        ("several-sources = 'yes'", "true or false"),
        ("[tool.toolrelay.lint.thresholds]\ntop-k = 2.5", "whole number"),
        ("[tool.toolrelay.lint.thresholds]\nsize = 1", "unknown key"),
        ("[tool.toolrelay.lint.thresholds]\ntop-k = -1", "negative"),
    ],
)
def test_malformed_tables_are_errors_naming_the_file(
    tmp_path: Path, table: str, message: str
) -> None:
    path = _write(tmp_path, "[tool.toolrelay.lint]\n" + table + "\n")
    with pytest.raises(ConfigurationError, match=message) as caught:
        load_config(path)
    assert str(path) in str(caught.value)


def test_invalid_toml_is_an_error(tmp_path: Path) -> None:
    path = _write(tmp_path, "[tool.toolrelay.lint\n")
    with pytest.raises(ConfigurationError, match="not valid TOML"):
        find_config(tmp_path)
    assert path.exists()
