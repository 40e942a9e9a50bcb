"""Finding the tool a call names: resolvers, lenient name matching and name suggestions.

A call is resolved against the request's own tools first, then against the manager's
:class:`ToolResolver` chain (Spring AI's ``ToolCallbackResolver``). Models often get a name
slightly wrong, so when exact lookup fails the name is matched leniently, in order:

1. the provider-safe ↔ dotted mapping (``refund__find_orders`` finds ``refund.find_orders``);
2. case and separator folding (``getWeather`` finds ``get_weather``).

A lenient match is accepted only when exactly one tool matches; otherwise the call stays
unresolved and the model is shown the closest names instead (:func:`closest_names`).

A name the model wrote can be any length, and folding and similarity cost time in proportion
to it: names longer than :data:`MAX_TOOL_NAME_LENGTH` are matched only exactly and get no
suggestions (no tool's name is that long in the form models are shown, at most 64
characters).

A round resolves only the tools its request offers (:class:`ToolLookup`); a resolver is
consulted beyond them only when the execution manager is told to
(``ToolCallingManager(allow_unoffered_tools=True)``).
"""

from __future__ import annotations

import difflib
from collections.abc import Iterable, Sequence
from typing import Protocol, runtime_checkable

from toolrelay.exceptions import DuplicateToolError
from toolrelay.tools._base import Tool
from toolrelay.tools._names import fold_name, provider_safe_name

__all__ = [
    "MAX_TOOL_NAME_LENGTH",
    "DelegatingToolResolver",
    "StaticToolResolver",
    "ToolLookup",
    "ToolResolver",
    "closest_names",
    "match_tool_name",
]

MAX_SUGGESTIONS = 5
# Low enough that "getWether" still suggests "get_time" next to "get_weather" (ratio 0.5 on
# folded names), high enough that unrelated names stay out.
SUGGESTION_CUTOFF = 0.45
MAX_TOOL_NAME_LENGTH = 256
"""Names longer than this (in characters) are matched only exactly and get no suggestions."""


@runtime_checkable
class ToolResolver(Protocol):
    """Finds tools by name when the request does not carry them itself."""

    def resolve(self, name: str) -> Tool | None:
        """The tool called ``name`` (canonical or provider-safe), or ``None``."""
        ...

    def names(self) -> Iterable[str]:
        """The canonical names this resolver can resolve (used for lenient matching)."""
        ...


class StaticToolResolver:
    """Resolves a fixed set of tools by canonical or provider-safe name.

    Args:
        tools: The tools. The same object given twice is kept once.

    Raises:
        DuplicateToolError: Two different tools share a name or a provider-safe name.
    """

    def __init__(self, tools: Iterable[Tool] = ()) -> None:
        self._tools: dict[str, Tool] = {}
        self._safe: dict[str, str] = {}
        for tool in tools:
            name = tool.definition.name
            known = self._tools.get(name)
            if known is tool:
                continue
            safe = provider_safe_name(name)
            clash = known
            if clash is None and safe in self._safe:
                clash = self._tools[self._safe[safe]]
            if clash is not None:
                raise DuplicateToolError(name, _describe(clash), _describe(tool))
            self._tools[name] = tool
            self._safe[safe] = name

    def resolve(self, name: str) -> Tool | None:
        """The tool with canonical or provider-safe name ``name``, or ``None``."""
        tool = self._tools.get(name)
        if tool is None and name in self._safe:
            tool = self._tools[self._safe[name]]
        return tool

    def names(self) -> list[str]:
        """Canonical names, in the order the tools were given."""
        return list(self._tools)

    def __len__(self) -> int:
        return len(self._tools)


class DelegatingToolResolver:
    """Asks each resolver in turn; the first that knows the name wins.

    Args:
        resolvers: The chain, in priority order.
    """

    def __init__(self, resolvers: Iterable[ToolResolver]) -> None:
        self._resolvers = tuple(resolvers)

    def resolve(self, name: str) -> Tool | None:
        """The first resolver's answer that is not ``None``."""
        for resolver in self._resolvers:
            tool = resolver.resolve(name)
            if tool is not None:
                return tool
        return None

    def names(self) -> list[str]:
        """All resolvers' names, first occurrence kept."""
        return list(dict.fromkeys(n for r in self._resolvers for n in r.names()))


def match_tool_name(name: str, candidates: Iterable[str]) -> str | None:
    """The candidate ``name`` unambiguously refers to, or ``None``.

    Tried in order: exact, provider-safe/dotted mapping, case and separator folding. A stage
    with more than one match ends the search (the later stage is coarser, so it would be
    ambiguous too).

    >>> match_tool_name("getWeather", ["get_weather", "get_time"])
    'get_weather'
    >>> match_tool_name("refund__find", ["refund.find"])
    'refund.find'
    >>> match_tool_name("getweather", ["get_weather", "getWeather"]) is None
    True

    A name longer than :data:`MAX_TOOL_NAME_LENGTH` is matched exactly only.
    """
    names = list(dict.fromkeys(candidates))
    if name in names:
        return name
    if len(name) > MAX_TOOL_NAME_LENGTH:
        return None
    safe = provider_safe_name(name)
    folded = fold_name(name)
    for key, target in ((provider_safe_name, safe), (fold_name, folded)):
        if not target:
            continue
        matches = [c for c in names if key(c) == target]
        if len(matches) == 1:
            return matches[0]
        if matches:
            return None
    return None


def closest_names(
    name: str,
    candidates: Iterable[str],
    *,
    limit: int = MAX_SUGGESTIONS,
    cutoff: float = SUGGESTION_CUTOFF,
) -> list[str]:
    """Up to ``limit`` candidates most similar to ``name``, best first.

    Similarity is difflib's ratio on folded names, so case and separators do not count;
    candidates below ``cutoff`` (0-1) are left out, and ties are broken by name so the answer
    is stable. A name longer than :data:`MAX_TOOL_NAME_LENGTH` gets none.
    """
    if len(name) > MAX_TOOL_NAME_LENGTH:
        return []
    target = fold_name(name) or name.lower()
    matcher = difflib.SequenceMatcher()
    matcher.set_seq2(target)  # difflib caches details about the second sequence
    scored: list[tuple[float, str]] = []
    for candidate in dict.fromkeys(candidates):
        matcher.set_seq1(fold_name(candidate) or candidate.lower())
        if matcher.real_quick_ratio() >= cutoff and matcher.quick_ratio() >= cutoff:
            ratio = matcher.ratio()
            if ratio >= cutoff:
                scored.append((ratio, candidate))
    scored.sort(key=lambda item: (-item[0], item[1]))
    return [candidate for _, candidate in scored[:limit]]


class ToolLookup:
    """Name resolution for one round: the tools the request offers, and maybe a resolver.

    Args:
        tools: The tools the request offers; on a name clash the first one wins.
        resolver: Also resolves names beyond ``tools`` (tools the model was not offered);
            ``None``: only ``tools`` are found.
    """

    def __init__(self, tools: Sequence[Tool], resolver: ToolResolver | None = None) -> None:
        self._tools: dict[str, Tool] = {}
        for tool in tools:
            self._tools.setdefault(tool.definition.name, tool)
        self._resolver = resolver
        self._names: list[str] | None = None

    def names(self) -> list[str]:
        """Every name the round can resolve, offered tools first (computed once)."""
        if self._names is None:
            beyond = self._resolver.names() if self._resolver is not None else ()
            self._names = list(dict.fromkeys([*self._tools, *beyond]))
        return self._names

    def _exact(self, name: str) -> Tool | None:
        tool = self._tools.get(name)
        if tool is not None or self._resolver is None:
            return tool
        return self._resolver.resolve(name)

    def find(self, name: str) -> Tool | None:
        """The tool ``name`` refers to, exactly or by an unambiguous lenient match."""
        tool = self._exact(name)
        if tool is not None:
            return tool
        match = match_tool_name(name, self.names())
        return None if match is None else self._exact(match)

    def suggestions(self, name: str) -> list[str]:
        """The closest available names (at most five)."""
        return closest_names(name, self.names())


def _describe(tool: Tool) -> str:
    return f"{type(tool).__name__} object {tool.definition.name!r}"
