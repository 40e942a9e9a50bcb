"""The refund desk in Chinese: the same tools, described in Chinese.

The tools keep their names, schemas, metadata and code; only the texts the model reads change:
each tool's description and its parameters' descriptions come from ``zh.toml`` (one table per
tool, written in the style of the seed documents: what the tool does, when to use it, what it
does not do, its side effects). :func:`in_chinese` wraps tools so their definitions carry
those texts; ``build_catalog(lang="zh")`` is the catalog made of them.

Example::

    from examples.refund_desk import build_catalog

    catalog = build_catalog(lang="zh")
    print(catalog.get("refund.find_failed_orders").definition.description.splitlines()[0])
    # 只读查询指定日期（默认昨天）退款失败的订单。
"""

from __future__ import annotations

import tomllib
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from functools import cache
from pathlib import Path
from types import MappingProxyType

from toolrelay.tools import Tool, ToolContext, ToolDefinition, ToolMetadata
from toolrelay.tools._language import replace_texts

from .records import RefundDeskError

__all__ = ["TASK_ZH", "ChineseTool", "ToolTexts", "chinese_texts", "in_chinese"]

TASK_ZH = "找出昨天退款失败的订单，重试可以恢复的记录，再把仍然失败的订单创建为工单并通知负责人。"
"""The refund-triage task in the seed documents' own words."""

_TEXTS_FILE = Path(__file__).with_name("zh.toml")


@dataclass(frozen=True, kw_only=True)
class ToolTexts:
    """The Chinese texts of one tool.

    Attributes:
        description: The tool's description, one sentence per line (the first is its summary).
        parameters: Each parameter's description, by parameter name.
    """

    description: str
    parameters: Mapping[str, str]


@cache
def chinese_texts() -> Mapping[str, ToolTexts]:
    """The Chinese texts of every refund-desk tool, by tool name (read once from ``zh.toml``).

    Raises:
        RefundDeskError: The file is not valid TOML or a table is malformed.
    """
    try:
        raw = tomllib.loads(_TEXTS_FILE.read_text(encoding="utf-8"))
    except tomllib.TOMLDecodeError as exc:
        raise RefundDeskError(f"{_TEXTS_FILE.name} is not valid TOML: {exc}") from exc
    texts = {}
    for name, table in raw.items():
        description = table.get("description") if isinstance(table, dict) else None
        parameters = table.get("parameters", {}) if isinstance(table, dict) else None
        if not isinstance(description, str) or not isinstance(parameters, dict):
            raise RefundDeskError(f"{_TEXTS_FILE.name}: [{name!r}] needs a description string")
        texts[name] = ToolTexts(
            description=description.strip(),
            parameters=MappingProxyType({str(k): str(v) for k, v in parameters.items()}),
        )
    return MappingProxyType(texts)


class ChineseTool:
    """A tool shown with its Chinese texts; calls go to the wrapped tool unchanged.

    Args:
        tool: The tool.
        texts: Its Chinese texts.

    Raises:
        ToolDefinitionError: ``texts`` describes a parameter the tool does not have.
    """

    def __init__(self, tool: Tool, texts: ToolTexts) -> None:
        self.tool = tool
        self._definition = replace_texts(
            tool.definition, description=texts.description, parameters=texts.parameters
        )

    @property
    def definition(self) -> ToolDefinition:
        """The wrapped tool's definition with the Chinese texts."""
        return self._definition

    @property
    def metadata(self) -> ToolMetadata:
        """The wrapped tool's metadata."""
        return self.tool.metadata

    @property
    def source(self) -> str:
        """Where the wrapped tool comes from (for duplicate-name errors)."""
        return str(getattr(self.tool, "source", type(self.tool).__qualname__))

    async def call(self, arguments_json: str, context: ToolContext | None = None) -> str:
        """Run the wrapped tool."""
        return await self.tool.call(arguments_json, context)

    def __repr__(self) -> str:
        return f"ChineseTool({self.tool!r})"


def in_chinese(tools: Iterable[Tool]) -> list[Tool]:
    """``tools`` shown with their Chinese texts, in the same order.

    Raises:
        RefundDeskError: A tool has no Chinese texts (every tool of the desk must have them).
    """
    texts = chinese_texts()
    translated: list[Tool] = []
    for tool in tools:
        entry = texts.get(tool.definition.name)
        if entry is None:
            raise RefundDeskError(
                f"{tool.definition.name} has no Chinese texts; add them to {_TEXTS_FILE.name}"
            )
        translated.append(ChineseTool(tool, entry))
    return translated
