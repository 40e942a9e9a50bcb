"""Tool and parameter descriptions from docstrings (Google, NumPy and Sphinx styles).

The style is detected by ``docstring_parser``; the description is the summary plus the longer
text, each documented parameter gives the description of its schema property, and the
Returns section is kept so the tool's description can say what a call gives back.

A docstring may start with a section (``Args:`` on its first line, no summary): the sections
are still read as sections, never taken for the summary.
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
        returns: What the Returns/``:returns:`` section says the call gives back (its text,
            without the type), or ``None``.
    """

    description: str | None = None
    parameters: Mapping[str, str] = field(default_factory=dict)
    returns: str | None = None

    def __post_init__(self) -> None:
        object.__setattr__(self, "parameters", MappingProxyType(dict(self.parameters)))

    @property
    def tool_description(self) -> str | None:
        """The description shown to the model: the text, then ``Returns: ...`` if documented.

        The Returns sentence comes last, so the first sentence (what a search answer shows)
        stays the summary; without a summary it is the Returns sentence alone.
        """
        returns = f"Returns: {self.returns}" if self.returns else None
        if self.description and returns:
            return f"{self.description}\n\n{returns}"
        return self.description or returns


def parse_docstring(source: str | Callable[..., Any] | None) -> DocstringInfo:
    """Read the description and parameter descriptions of a docstring or of a callable's.

    Args:
        source: The docstring itself, or an object whose ``__doc__`` is read.

    Returns:
        The parsed information; empty when there is no docstring or it cannot be parsed.
    """
    if source is None or isinstance(source, str):
        text = inspect.cleandoc(source) if source else None
    else:
        # Already cleaned; cleaning twice would flatten an Args section on the first line.
        text = inspect.getdoc(source)
    if not text or not text.strip():
        return DocstringInfo()
    cleaned = text.strip("\n")
    try:
        # The leading newline says "no summary here": without it, a docstring whose first
        # line is a section title (``Args:``) has that title read as its summary.
        parsed = docstring_parser.parse("\n" + cleaned)
    except docstring_parser.ParseError:
        # A malformed section should not make the tool unusable: keep the whole text.
        return DocstringInfo(description=cleaned)
    description = (parsed.description or "").strip() or None
    parameters = {
        p.arg_name: _one_line(p.description)
        for p in parsed.params
        if p.description and p.description.strip()
    }
    returns = parsed.returns
    return DocstringInfo(
        description=description,
        parameters=parameters,
        returns=_one_line(returns.description or "") or None if returns else None,
    )


def _one_line(text: str) -> str:
    return " ".join(text.split())
