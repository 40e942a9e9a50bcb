"""What an index reads from a tool definition, and the fingerprint of a catalog.

A tool's searchable text has three fields: the words of its name (``refund.findFailedOrders``
reads as "refund find failed orders", ``退款.查询Failed订单`` as "退款 查询 failed 订单"), its
description, and its parameters (names, descriptions and enumerated values, nested objects
included). Lexical indexes weigh the fields separately; embedders read them joined into one
passage. Fields keep their text as written: cutting it into terms, Chinese included, is the
:class:`~toolrelay.search.Tokenizer`'s job.
"""

from __future__ import annotations

import hashlib
import json
import re
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from toolrelay.search._text import split_words
from toolrelay.tools._base import ToolDefinition

__all__ = [
    "ToolText",
    "catalog_fingerprint",
    "dotted_categories",
    "summarize",
    "tool_text",
]

# A sentence ends at ". ", "! ", "? ", a line break, or a CJK full stop, exclamation or
# question mark (written without a space after it).
_SENTENCE_END = re.compile(r"(?<=[.!?])\s|(?<=[。！？])|\n")
_SPACES = re.compile(r"\s+")
# Schemas can nest without bound; tools rarely say anything useful below this depth.
_MAX_SCHEMA_DEPTH = 4
_MAX_ENUM_VALUES = 20


def catalog_fingerprint(definitions: Sequence[ToolDefinition]) -> str:
    """A stable hash of a catalog's names, descriptions and input schemas.

    The order of the definitions does not matter; two catalogs with the same tools have the
    same fingerprint, and any change to a name, description or schema changes it.

    Returns:
        A hex SHA-256 digest.
    """
    digest = hashlib.sha256()
    for item in sorted(
        (d.name, d.description, _canonical_json(d.input_schema)) for d in definitions
    ):
        for part in item:
            data = part.encode("utf-8")
            # Length-prefix every part so that no two different catalogs hash the same bytes.
            digest.update(len(data).to_bytes(8, "big"))
            digest.update(data)
    return digest.hexdigest()


def _canonical_json(value: Any) -> str:
    return json.dumps(value, sort_keys=True, ensure_ascii=False, separators=(",", ":"), default=str)


def summarize(description: str, limit: int = 160) -> str:
    """The first sentence (or line) of ``description``, at most ``limit`` characters."""
    text = description.strip()
    first = _SENTENCE_END.split(text, maxsplit=1)[0].strip() if text else ""
    first = _SPACES.sub(" ", first)
    if len(first) <= limit:
        return first
    cut = first[: limit - 1]
    if first[limit - 1] != " " and " " in cut:
        cut = cut.rsplit(" ", 1)[0]  # do not end on half a word
    return cut.rstrip() + "…"


def dotted_categories(name: str) -> tuple[str, ...]:
    """The categories implied by a dotted name: ``a.b.tool`` is in ``a`` and ``a.b``."""
    segments = name.split(".")
    return tuple(".".join(segments[:i]) for i in range(1, len(segments)))


@dataclass(frozen=True, kw_only=True)
class ToolText:
    """The searchable text of one tool.

    Attributes:
        name: The canonical name.
        name_words: The words of the name, lower-case, joined by spaces.
        description: The description as written.
        parameters: Parameter names (as words), descriptions and enumerated values.
    """

    name: str
    name_words: str
    description: str
    parameters: str

    def passage(self) -> str:
        """The fields joined into one passage, for embedders."""
        head = f"{self.name_words}: {self.description.strip()}"
        return f"{head} Parameters: {self.parameters}" if self.parameters else head


def tool_text(definition: ToolDefinition) -> ToolText:
    """Extract the searchable fields of a tool definition."""
    return ToolText(
        name=definition.name,
        name_words=" ".join(split_words(definition.name)),
        description=definition.description,
        parameters=" ".join(_schema_text(definition.input_schema, 0)),
    )


def _schema_text(schema: Mapping[str, Any], depth: int) -> Iterator[str]:
    if depth > _MAX_SCHEMA_DEPTH or not isinstance(schema, Mapping):
        return
    properties = schema.get("properties")
    if isinstance(properties, Mapping):
        for prop, sub in properties.items():
            yield " ".join(split_words(str(prop)))
            if isinstance(sub, Mapping):
                yield from _property_text(sub, depth)
    items = schema.get("items")
    if isinstance(items, Mapping):
        yield from _schema_text(items, depth + 1)


def _property_text(prop: Mapping[str, Any], depth: int) -> Iterator[str]:
    description = prop.get("description")
    if isinstance(description, str) and description.strip():
        yield description.strip()
    enum = prop.get("enum")
    if isinstance(enum, list):
        yield " ".join(str(v) for v in enum[:_MAX_ENUM_VALUES] if isinstance(v, str | int))
    for key in ("anyOf", "oneOf", "allOf"):
        options = prop.get(key)
        if isinstance(options, list):
            for option in options:
                if isinstance(option, Mapping):
                    yield from _property_text(option, depth + 1)
    yield from _schema_text(prop, depth + 1)
