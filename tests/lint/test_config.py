from __future__ import annotations

from pathlib import Path

import pytest

from toolrelay.exceptions import ConfigurationError, LoadError
from toolrelay.lint import LintConfig, Severity, Thresholds, find_config
from toolrelay.lint._config import load_config

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
    ("table", "reason"),
    [
        (
            'disable = "x"\nbogus = 1',
            "[tool.toolrelay.lint] bogus: unknown key; expected one of disable, per-tool, "
            "fail-on, index, several-sources, thresholds",
        ),
        (
            "per_tool = {}",
            "[tool.toolrelay.lint.per_tool]: unknown table; expected one of disable, per-tool, "
            "fail-on, index, several-sources, thresholds",
        ),
        (
            "fail-on = 'sometimes'",
            "[tool.toolrelay.lint] fail-on: must be 'error', 'warning' or 'info', or 'never' "
            '(got "sometimes")',
        ),
        (
            "index = 'regex'",
            "[tool.toolrelay.lint] index: must be 'auto', 'bm25' or 'hybrid' (got \"regex\")",
        ),
        ("disable = [1]", "[tool.toolrelay.lint] disable[0]: must be a string (got 1)"),
        ("per-tool = ['x']", '[tool.toolrelay.lint] per-tool: must be a table (got ["x"])'),
        (
            "per-tool = { 'legacy.*' = [true] }",
            '[tool.toolrelay.lint] per-tool."legacy.*"[0]: must be a string (got true)',
        ),
        (
            "several-sources = 'yes'",
            '[tool.toolrelay.lint] several-sources: must be true or false (got "yes")',
        ),
        (
            "[tool.toolrelay.lint.thresholds]\ntop-k = 2.5",
            "[tool.toolrelay.lint.thresholds] top-k: must be a whole number (got 2.5)",
        ),
        (
            "[tool.toolrelay.lint.thresholds]\nsize = 1",
            "[tool.toolrelay.lint.thresholds] size: unknown key; expected one of "
            "min-description-words, max-description-chars, max-tool-tokens, max-catalog-tokens, "
            "top-k, confusable-margin, dominance-share, dominance-min",
        ),
        (
            "[tool.toolrelay.lint.thresholds]\nmin_description_words = 3",
            "[tool.toolrelay.lint.thresholds] min_description_words: unknown key; expected one "
            "of min-description-words, max-description-chars, max-tool-tokens, "
            "max-catalog-tokens, top-k, confusable-margin, dominance-share, dominance-min",
        ),
        (
            "[tool.toolrelay.lint.thresholds]\ntop-k = 0",
            "[tool.toolrelay.lint.thresholds] top-k: must be >= 1 (got 0)",
        ),
        (
            "[tool.toolrelay.lint.thresholds]\nmin-description-words = -1",
            "[tool.toolrelay.lint.thresholds] min-description-words: must be >= 0 (got -1)",
        ),
        (
            "[tool.toolrelay.lint.thresholds]\nconfusable-margin = 1.5",
            "[tool.toolrelay.lint.thresholds] confusable-margin: must be between 0 and 1 (got 1.5)",
        ),
    ],
)
def test_malformed_tables_are_errors_naming_the_file_and_the_key(
    tmp_path: Path, table: str, reason: str
) -> None:
    path = _write(tmp_path, "[tool.toolrelay.lint]\n" + table + "\n")
    with pytest.raises(LoadError) as caught:
        load_config(path)
    assert (caught.value.source, caught.value.reason) == (str(path), reason)


def test_a_table_that_is_no_table_is_an_error(tmp_path: Path) -> None:
    path = _write(tmp_path, "[tool.toolrelay]\nlint = 3\n")
    with pytest.raises(LoadError, match=r": \[tool.toolrelay.lint\]: must be a table \(got 3\)$"):
        load_config(path)


def test_settings_built_in_python_use_the_names_and_are_checked() -> None:
    config = LintConfig(per_tool={"legacy.*": ["*"]}, fail_on="never", disable="x")  # type: ignore[arg-type]
    assert (config.per_tool, config.fail_on, config.disable) == ({"legacy.*": {"*"}}, None, {"x"})
    with pytest.raises(ConfigurationError) as caught:
        Thresholds(top_k=0)
    assert str(caught.value) == "Thresholds.top_k: must be >= 1 (got 0)"


def test_invalid_toml_is_an_error(tmp_path: Path) -> None:
    path = _write(tmp_path, "[tool.toolrelay.lint\n")
    with pytest.raises(LoadError, match="not valid TOML") as caught:
        find_config(tmp_path)
    assert caught.value.source == str(path)
