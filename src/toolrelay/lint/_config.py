"""Lint settings, and reading them from ``[tool.toolrelay.lint]`` in ``pyproject.toml``.

Example::

    [tool.toolrelay.lint]
    disable = ["description-missing-when"]           # rules off for every tool
    per-tool = { "refund.force_success" = ["side-effect-unmarked"], "legacy.*" = ["*"] }
    fail-on = "warning"                              # error (default), warning, info, never
    index = "bm25"                                   # auto (default), bm25, hybrid
    several-sources = true                           # default: detected from the names

    [tool.toolrelay.lint.thresholds]
    min-description-words = 8
    max-description-chars = 2000

:func:`find_config` walks up from a folder (the working directory by default) to the first
``pyproject.toml`` that has the table. Per-tool keys are tool names or ``fnmatch`` patterns;
``"*"`` in a rule list disables every rule for those tools. Rule ids are checked when the
settings are used (:func:`toolrelay.lint.lint`), so a typo is an error, not a silent no-op.
"""

from __future__ import annotations

import fnmatch
import tomllib
from collections.abc import Mapping
from dataclasses import dataclass, field, fields
from pathlib import Path
from typing import Any, Literal, get_args

from toolrelay.exceptions import ConfigurationError
from toolrelay.lint._findings import Severity

__all__ = ["IndexChoice", "LintConfig", "Thresholds", "find_config", "load_config"]

IndexChoice = Literal["auto", "bm25", "hybrid"]
"""Which index ranks the catalog: ``auto`` is hybrid when the embeddings extra is installed."""

ALL_RULES = "*"
"""In a per-tool rule list: every rule."""

_TABLE = ("tool", "toolrelay", "lint")
_FAIL_ON_NEVER = "never"


@dataclass(frozen=True, kw_only=True)
class Thresholds:
    """The numbers the rules judge by.

    Attributes:
        min_description_words: Fewer words than this is too short to retrieve (a CJK
            character counts as half a word).
        max_description_chars: A longer description floods keyword scoring.
        max_tool_tokens: A larger definition (cl100k_base) is a costly schema.
        max_catalog_tokens: Sending a catalog larger than this with every request is worth
            replacing with tool search.
        top_k: A tool outside the top ``top_k`` for its own description is hard to find.
        confusable_margin: Two tools are confusable when each scores within this fraction of
            the other's score for the other's own description.
        dominance_share: A tool in the top 3 for more than this share of the other tools'
            descriptions dominates the ranking.
        dominance_min: ... and for at least this many of them.
    """

    min_description_words: int = 8
    max_description_chars: int = 2000
    max_tool_tokens: int = 1000
    max_catalog_tokens: int = 20_000
    top_k: int = 5
    confusable_margin: float = 0.2
    dominance_share: float = 0.1
    dominance_min: int = 10


@dataclass(frozen=True, kw_only=True)
class LintConfig:
    """Which rules run, for which tools, and what fails the run.

    Attributes:
        disable: Rule ids turned off for every tool.
        per_tool: Rule ids turned off per tool name or ``fnmatch`` pattern (``"*"`` for all).
        fail_on: The lowest severity that fails the run; ``None`` never fails.
        index: Which index ranks the catalog for the retrieval rules.
        several_sources: Whether the tools come from several services (generic names are
            then ambiguous); ``None`` detects it from dotted names and target sources.
        thresholds: The numbers the rules judge by.
        path: The file the settings were read from, if any.
    """

    disable: frozenset[str] = frozenset()
    per_tool: Mapping[str, frozenset[str]] = field(default_factory=dict)
    fail_on: Severity | None = Severity.ERROR
    index: IndexChoice = "auto"
    several_sources: bool | None = None
    thresholds: Thresholds = field(default_factory=Thresholds)
    path: Path | None = None

    def is_enabled(self, rule: str) -> bool:
        """Whether ``rule`` runs at all (it may still be off for some tools)."""
        return rule not in self.disable

    def is_disabled_for(self, rule: str, tool: str | None) -> bool:
        """Whether ``rule``'s findings about ``tool`` are suppressed."""
        if rule in self.disable:
            return True
        if tool is None:
            return False
        return any(
            (rule in rules or ALL_RULES in rules)
            and (tool == key or fnmatch.fnmatchcase(tool, key))
            for key, rules in self.per_tool.items()
        )

    def named_rules(self) -> set[str]:
        """Every rule id the settings name (for checking them against the known rules)."""
        named = set(self.disable)
        for rules in self.per_tool.values():
            named |= rules - {ALL_RULES}
        return named


def find_config(start: Path | None = None) -> LintConfig:
    """The settings of the nearest ``pyproject.toml`` with ``[tool.toolrelay.lint]``.

    Args:
        start: Where to start looking (the working directory by default); its parents are
            searched in turn.

    Returns:
        The settings found, or the defaults when no file has the table.

    Raises:
        ConfigurationError: The file is not valid TOML or the table is malformed.
    """
    folder = (start or Path.cwd()).resolve()
    for candidate in (folder, *folder.parents):
        path = candidate / "pyproject.toml"
        if path.is_file():
            table = _lint_table(path)
            if table is not None:
                return _parse(table, path)
    return LintConfig()


def load_config(path: Path) -> LintConfig:
    """The settings in one TOML file (its ``[tool.toolrelay.lint]``; defaults without it).

    Raises:
        ConfigurationError: The file cannot be read, is not TOML, or the table is malformed.
    """
    table = _lint_table(path)
    return LintConfig(path=path) if table is None else _parse(table, path)


def _lint_table(path: Path) -> Mapping[str, Any] | None:
    try:
        data: Any = tomllib.loads(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError) as exc:
        raise ConfigurationError(f"{path}: cannot be read: {exc}") from exc
    except tomllib.TOMLDecodeError as exc:
        raise ConfigurationError(f"{path}: not valid TOML: {exc}") from exc
    for key in _TABLE:
        if not isinstance(data, Mapping) or key not in data:
            return None
        data = data[key]
    if not isinstance(data, Mapping):
        raise ConfigurationError(f"{path}: [tool.toolrelay.lint] must be a table")
    return data


def _parse(table: Mapping[str, Any], path: Path) -> LintConfig:
    def fail(message: str) -> ConfigurationError:
        return ConfigurationError(f"{path}: [tool.toolrelay.lint] {message}")

    known = {"disable", "per-tool", "fail-on", "index", "several-sources", "thresholds"}
    unknown = sorted(set(table) - known)
    if unknown:
        raise fail(f"has unknown keys {unknown}; known: {sorted(known)}")
    per_tool = table.get("per-tool", {})
    if not isinstance(per_tool, Mapping):
        raise fail("per-tool must be a table of tool name = [rule ids]")
    fail_on = table.get("fail-on", Severity.ERROR.value)
    choices = [s.value for s in Severity] + [_FAIL_ON_NEVER]
    if fail_on not in choices:
        raise fail(f"fail-on must be one of {choices}, not {fail_on!r}")
    index = table.get("index", "auto")
    if index not in get_args(IndexChoice):
        raise fail(f"index must be one of {list(get_args(IndexChoice))}, not {index!r}")
    several = table.get("several-sources")
    if several is not None and not isinstance(several, bool):
        raise fail("several-sources must be true or false")
    return LintConfig(
        disable=_rule_ids(table.get("disable", []), "disable", fail),
        per_tool={
            str(tool): _rule_ids(rules, f"per-tool {tool!r}", fail)
            for tool, rules in per_tool.items()
        },
        fail_on=None if fail_on == _FAIL_ON_NEVER else Severity(fail_on),
        index=index,
        several_sources=several,
        thresholds=_thresholds(table.get("thresholds", {}), fail),
        path=path,
    )


def _rule_ids(value: Any, where: str, fail: Any) -> frozenset[str]:
    if isinstance(value, str):
        value = [value]
    if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
        raise fail(f"{where} must be a list of rule ids")
    return frozenset(value)


def _thresholds(value: Any, fail: Any) -> Thresholds:
    if not isinstance(value, Mapping):
        raise fail("thresholds must be a table")
    types = {f.name.replace("_", "-"): f for f in fields(Thresholds)}
    values: dict[str, Any] = {}
    for key, number in value.items():
        spec = types.get(key)
        if spec is None:
            raise fail(f"thresholds has an unknown key {key!r}; known: {sorted(types)}")
        wanted = float if spec.type == "float" else int
        if isinstance(number, bool) or not isinstance(number, int | float):
            raise fail(f"thresholds.{key} must be a number")
        if wanted is int and not isinstance(number, int):
            raise fail(f"thresholds.{key} must be a whole number")
        if number < 0:
            raise fail(f"thresholds.{key} must not be negative")
        values[spec.name] = wanted(number)
    return Thresholds(**values)
