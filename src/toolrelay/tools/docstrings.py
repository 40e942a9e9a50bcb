"""Tool and parameter descriptions from docstrings (Google, NumPy and Sphinx styles).

The style is detected by ``docstring_parser``; the description is the summary plus the longer
text, and each documented parameter gives the description of its schema property.
"""

from __future__ import annotations

import inspect
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import Any

import docstring_parser

__all__ = ["DocstringInfo", "parse_docstring"]


@dataclass(frozen=True, kw_only=True)
class DocstringInfo:
    """What a docstring says about a tool.

    Attributes:
        description: Summary and longer text, or ``None`` when the docstring has none.
        parameters: Parameter name → description, from the Args/Parameters/``:param:`` section.
    """

    description: str | None = None
    parameters: Mapping[str, str] = field(default_factory=dict)

    def __post_init__(self) -> None:
        object.__setattr__(self, "parameters", MappingProxyType(dict(self.parameters)))


def parse_docstring(source: str | Callable[..., Any] | None) -> DocstringInfo:
    """Read the description and parameter descriptions of a docstring or of a callable's.

    Args:
        source: The docstring itself, or an object whose ``__doc__`` is read.

    Returns:
        The parsed information; empty when there is no docstring or it cannot be parsed.
    """
    text = source if isinstance(source, str) or source is None else inspect.getdoc(source)
    if not text or not text.strip():
        return DocstringInfo()
    try:
        parsed = docstring_parser.parse(inspect.cleandoc(text))
    except docstring_parser.ParseError:
        # A malformed section should not make the tool unusable: keep the whole text.
        return DocstringInfo(description=inspect.cleandoc(text))
    description = (parsed.description or "").strip() or None
    parameters = {
        p.arg_name: " ".join(p.description.split())
        for p in parsed.params
        if p.description and p.description.strip()
    }
    return DocstringInfo(description=description, parameters=parameters)
