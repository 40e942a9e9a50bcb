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
from collections.abc import Mapping
from pathlib import Path
from typing import Annotated, Literal

from pydantic import BeforeValidator, ConfigDict, Field, Strict, field_validator

from toolrelay._settings import Settings, read_table, read_toml
from toolrelay.exceptions import ConfigurationError, LoadError
from toolrelay.lint._findings import Severity

__all__ = ["IndexChoice", "LintConfig", "Thresholds", "find_config", "load_config"]

IndexChoice = Literal["auto", "bm25", "hybrid"]
"""Which index ranks the catalog: ``auto`` is hybrid when the embeddings extra is installed."""

ALL_RULES = "*"
"""In a per-tool rule list: every rule."""

_TABLE = ("tool", "toolrelay", "lint")


def _listed(value: object) -> object:
    return [value] if isinstance(value, str) else value


_RuleIds = Annotated[frozenset[str], BeforeValidator(_listed), Strict(False)]
"""Rule ids: a list of them (in a file, one id alone too)."""

# The file's keys are hyphenated (min-description-words); Python's are the fields' names.
_HYPHENATED = ConfigDict(
    alias_generator=lambda name: name.replace("_", "-"),
    validate_by_alias=True,
    validate_by_name=True,
)


class Thresholds(Settings):
    """The numbers the rules judge by (``[tool.toolrelay.lint.thresholds]``).

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

    model_config = _HYPHENATED

    min_description_words: int = Field(8, ge=0)
    max_description_chars: int = Field(2000, ge=0)
    max_tool_tokens: int = Field(1000, ge=0)
    max_catalog_tokens: int = Field(20_000, ge=0)
    top_k: int = Field(5, ge=1)
    confusable_margin: float = Field(0.2, ge=0, le=1)
    dominance_share: float = Field(0.1, ge=0, le=1)
    dominance_min: int = Field(10, ge=0)


class _LintTable(Settings):
    """The ``[tool.toolrelay.lint]`` table: a :class:`LintConfig` without its file."""

    model_config = _HYPHENATED

    disable: _RuleIds = frozenset()
    per_tool: Mapping[str, _RuleIds] = {}
    fail_on: Severity | None = Field(Severity.ERROR, strict=False, description="or 'never'")
    index: IndexChoice = "auto"
    several_sources: bool | None = None
    thresholds: Thresholds = Thresholds()

    @field_validator("fail_on", mode="before")
    @classmethod
    def _never(cls, value: object) -> object:
        return None if value == "never" else value


class LintConfig(_LintTable):
    """Which rules run, for which tools, and what fails the run.

    Attributes:
        disable: Rule ids turned off for every tool.
        per_tool: Rule ids turned off per tool name or ``fnmatch`` pattern (``"*"`` for all).
        fail_on: The lowest severity that fails the run; ``None`` (``"never"``) never fails.
        index: Which index ranks the catalog for the retrieval rules.
        several_sources: Whether the tools come from several services (generic names are
            then ambiguous); ``None`` detects it from dotted names and target sources.
        thresholds: The numbers the rules judge by.
        path: The file the settings were read from, if any.

    Raises:
        ConfigurationError: A value of the wrong type or out of range, or an unknown field.
    """

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
        LoadError: The file is not valid TOML or the table is malformed (each problem
            named as ``[table] key``).
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
        LoadError: The file cannot be read, is not TOML, or the table is malformed.
    """
    table = _lint_table(path)
    return LintConfig(path=path) if table is None else _parse(table, path)


def _lint_table(path: Path) -> object | None:
    data: object = read_toml(path)
    for key in _TABLE:
        if not isinstance(data, Mapping) or key not in data:
            return None
        data = data[key]
    return data


def _parse(table: object, path: Path) -> LintConfig:
    try:
        settings = read_table(_LintTable, table, table=_TABLE)
    except ConfigurationError as exc:
        raise LoadError(str(path), str(exc)) from exc
    return LintConfig(**dict(settings), path=path)
