"""Who may see and run what, under the tool search: catalog views and the visibility check.

- :class:`CatalogSnapshot`: the catalog as last indexed, by name.
- :class:`CatalogView`: the catalog as one request may see it (``tool_filter`` applied); its
  :meth:`~CatalogView.allowed` is what searches pass as ``SearchRequest.allowed``, and it
  picks the tools each model call shows (:meth:`~CatalogView.shown_tools`).
- :func:`visibility_interceptor` and :class:`HiddenTool`: a call of a tool the model was not
  shown gets the unavailable text (:data:`DEFAULT_UNAVAILABLE_MESSAGE` in English, the advisor's
  language's text from :class:`~toolrelay.toolsearch.SearchTexts` otherwise) and never runs; a
  name close to one the model was shown gets those names instead
  (:data:`DEFAULT_SIMILAR_NAMES_MESSAGE`).

The ``authorize`` check runs as an :class:`~toolrelay.execution.AuthorizationInterceptor`
(:data:`Authorizer` is execution's), after the visibility check.
"""

from __future__ import annotations

import asyncio
import dataclasses
import functools
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from toolrelay.exceptions import ConfigurationError
from toolrelay.execution import (
    Authorizer,
    Proceed,
    ToolCallInterceptor,
    ToolCallOutcome,
    ToolInvocation,
    answer,
)
from toolrelay.messages import ChatResponse, ToolCall
from toolrelay.search._base import AllowedTools, ToolIndex
from toolrelay.tools import Tool, ToolContext, ToolDefinition, ToolMetadata, provider_safe_name
from toolrelay.toolsearch._search_tool import TOOL_SEARCH_NAME

__all__ = [
    "DEFAULT_SIMILAR_NAMES_MESSAGE",
    "DEFAULT_UNAVAILABLE_MESSAGE",
    "SIMILAR_NAME_CUTOFF",
    "Authorizer",
    "CatalogSnapshot",
    "CatalogView",
    "HiddenTool",
    "ToolFilter",
    "calls_to_run",
    "unavailable_text",
    "visibility_interceptor",
]

DEFAULT_UNAVAILABLE_MESSAGE = (
    "Tool {name} is not available. Search for it with {search_tool} first, then call it by "
    "the exact name the search returns."
)
"""The answer to a call of a tool the model was not shown.

The same text answers a tool that exists but was not found yet, a tool the user may not use
and a name that exists nowhere, so the answer never reveals whether a forbidden tool exists.
``{name}`` is the quoted name as the model wrote it, ``{search_tool}`` the search tool's name.
The Chinese text is ``search_texts.CHINESE.unavailable_message``.
"""

DEFAULT_SIMILAR_NAMES_MESSAGE = (
    "Tool {name} is not available; similar tools you can call: {similar}. Call one of them by "
    "its exact name, or search for another tool with {search_tool} first."
)
"""The answer to a call of a tool the model was not shown whose name is close to shown ones.

A misspelled name (``get_wether`` beside a shown ``get_weather``) is answered with the shown
tools of similar names (``{similar}``, as the model was shown them), so the model can call
the right one at once instead of searching again. Only names the model was shown are ever
suggested: the answer depends on the name called and the tools shown alone, so it is the same
whether the name belongs to an undiscovered tool, a forbidden one or none. The Chinese text
is ``search_texts.CHINESE.similar_names_message``.
"""

SIMILAR_NAME_CUTOFF = 0.7
"""How close (difflib's ratio on folded names, 0-1) a shown name must be to be suggested.

Stricter than the manager's cutoff for unknown names: under tool search the alternative to a
suggestion is a search, so only a likely misspelling is worth pointing to. ``get_wether`` is
0.95 from ``get_weather``, ``ticket.create`` 0.75 from ``ticket.create_incident``, while
``orders.cancel`` (0.58 from ``orders.status``) is left to a search.
"""

ToolFilter = Callable[[ToolContext, ToolDefinition], bool]
"""Whether the request with this tool context may see (and find) this tool at all."""

_MAX_SHOWN_NAME = 80


def unavailable_text(template: str, name: str, similar: Sequence[str] = ()) -> str:
    """``template`` filled in for a call to ``name`` (quoted, shortened when very long).

    ``similar`` fills ``{similar}``: canonical names, listed in the provider-safe form the
    model was shown them in.
    """
    shown = name if len(name) <= _MAX_SHOWN_NAME else name[:_MAX_SHOWN_NAME] + "..."
    return template.format(
        name=repr(shown),
        search_tool=TOOL_SEARCH_NAME,
        similar=", ".join(provider_safe_name(n) for n in similar),
    )


@dataclass(frozen=True, kw_only=True)
class CatalogSnapshot:
    """The catalog as last indexed.

    Attributes:
        tools: The tools by canonical name.
        names: Their names (one set per catalog, so the index caches its bitmap).
        members: The tools in catalog order.
        definitions: Their definitions, as indexed.
        fingerprint: The index's fingerprint of this catalog (``None`` until indexed).

    Raises:
        ConfigurationError: (``of``) a tool is named ``tool_search``, or an always-on name
            is not in the catalog.
    """

    tools: Mapping[str, Tool]
    names: frozenset[str]
    members: tuple[Tool, ...]
    definitions: tuple[ToolDefinition, ...]
    fingerprint: str | None = None

    @classmethod
    async def indexed(
        cls, tools: Sequence[Tool], index: ToolIndex, always_on: Sequence[str]
    ) -> tuple[CatalogSnapshot, bool]:
        """Snapshot ``tools`` and index them; also returns whether the index was rebuilt."""
        snapshot = cls.of(tools, always_on)
        # Off the event loop: building an index can take long (embeddings). The index
        # compares fingerprints itself, so an unchanged catalog costs only a hash.
        rebuilt = await asyncio.to_thread(index.index, snapshot.definitions)
        return dataclasses.replace(snapshot, fingerprint=index.fingerprint), rebuilt

    @classmethod
    def of(cls, tools: Sequence[Tool], always_on: Sequence[str]) -> CatalogSnapshot:
        """Snapshot ``tools``, checking the always-on names."""
        by_name = {t.definition.name: t for t in tools}
        if TOOL_SEARCH_NAME in by_name:
            raise ConfigurationError(
                f"the catalog has a tool named {TOOL_SEARCH_NAME!r}, the name of the search "
                "tool; rename it"
            )
        missing = [name for name in always_on if name not in by_name]
        if missing:
            raise ConfigurationError(f"always_on names tools not in the catalog: {missing}")
        return cls(
            tools=by_name,
            names=frozenset(by_name),
            members=tuple(tools),
            definitions=tuple(t.definition for t in tools),
        )

    @functools.cached_property
    def definitions_by_name(self) -> Mapping[str, ToolDefinition]:
        """The definitions by canonical name (for answers that carry them; made once)."""
        return {t.definition.name: t.definition for t in self.members}

    def holds(self, tools: Sequence[Tool]) -> bool:
        """Whether ``tools`` and their definitions are the very objects of this snapshot.

        A cheap identity check; anything else re-indexes (which hashes the catalog and
        rebuilds only when the fingerprint changed).
        """
        return len(tools) == len(self.members) and all(
            a is b and a.definition is d
            for a, b, d in zip(tools, self.members, self.definitions, strict=True)
        )


class CatalogView:
    """The catalog as one request may see it: ``tool_filter`` applied, verdicts cached.

    Searches read it from worker threads; a verdict computed twice is the same verdict.
    """

    def __init__(
        self, snapshot: CatalogSnapshot, context: ToolContext, tool_filter: ToolFilter | None
    ) -> None:
        self.snapshot = snapshot
        self.context = context
        self.tool_filter = tool_filter
        self._verdicts: dict[str, bool] = {}

    def sees(self, definition: ToolDefinition) -> bool:
        """Whether the filter lets the request see a tool."""
        return self.tool_filter is None or bool(self.tool_filter(self.context, definition))

    def permits(self, name: str) -> bool:
        """Whether the catalog tool ``name`` exists and the request may see it."""
        verdict = self._verdicts.get(name)
        if verdict is None:
            tool = self.snapshot.tools.get(name)
            verdict = tool is not None and self.sees(tool.definition)
            self._verdicts[name] = verdict
        return verdict

    def allowed(self) -> AllowedTools:
        """The permitted subset for ``SearchRequest.allowed``."""
        # Without a filter, one frozenset per catalog: the index caches its bitmap.
        return self.snapshot.names if self.tool_filter is None else self.permits

    def fixed_tools(
        self,
        search_tool: Tool,
        request_tools: Sequence[Tool],
        always_on: Sequence[str],
        *,
        owner: str,
    ) -> tuple[Tool, ...]:
        """What every model call of the request shows, in order and without repeats.

        ``search_tool``, the request's tools the filter lets it see, then the permitted
        always-on tools.

        Raises:
            ConfigurationError: A request tool is named ``tool_search`` (``owner``, the
                advisor's name, says whose request it was).
        """
        tools = [search_tool]
        shown = {TOOL_SEARCH_NAME}
        for tool in request_tools:
            name = tool.definition.name
            if name == TOOL_SEARCH_NAME:
                raise ConfigurationError(
                    f"{owner}: a request tool is named {TOOL_SEARCH_NAME!r}, the name of the "
                    "search tool; rename it"
                )
            if name not in shown and self.sees(tool.definition):
                shown.add(name)
                tools.append(tool)
        for name in always_on:
            if name not in shown and self.permits(name):
                shown.add(name)
                tools.append(self.snapshot.tools[name])
        return tuple(tools)

    def shown_tools(self, fixed: Sequence[Tool], discovered: Sequence[str]) -> list[Tool]:
        """``fixed``, then the permitted ``discovered`` tools not among them, in order."""
        tools = list(fixed)
        shown = {t.definition.name for t in tools}
        for name in discovered:
            tool = self.snapshot.tools.get(name)
            if tool is not None and name not in shown and self.permits(name):
                shown.add(name)
                tools.append(tool)
        return tools


# --- execution gates -------------------------------------------------------------------------


# Every stand-in shares one schema object: the manager keeps a validator per schema object,
# so a flood of calls of forbidden or unknown names builds one validator, not one per call.
_HIDDEN_SCHEMA: Mapping[str, Any] = {"type": "object", "properties": {}}


class HiddenTool:
    """Stands in for a name the model was not shown, for :func:`visibility_interceptor` to deny.

    The manager resolves the call to it, never to a tool found elsewhere. ``call`` is never
    reached (the interceptor denies first); it answers the same text anyway.

    Attributes:
        text: The answer the call gets.
    """

    def __init__(self, name: str, text: str) -> None:
        self._definition = ToolDefinition(name=name, description="", input_schema=_HIDDEN_SCHEMA)
        self.text = text

    @property
    def definition(self) -> ToolDefinition:
        """A definition carrying only the name as the model wrote it."""
        return self._definition

    @property
    def metadata(self) -> ToolMetadata:
        """Default metadata."""
        return ToolMetadata()

    async def call(self, arguments_json: str, context: ToolContext | None = None) -> str:
        """The unavailable text."""
        return self.text


def calls_to_run(response: ChatResponse) -> tuple[ToolCall, ...]:
    """The calls the manager will run: those of the first generation that has any."""
    for generation in response.generations:
        if generation.message.tool_calls:
            return generation.message.tool_calls
    return ()


def visibility_interceptor(exposed: Sequence[Tool], template: str) -> ToolCallInterceptor:
    """An interceptor denying every call of a tool not in ``exposed``.

    A :class:`HiddenTool` is denied with its own text; any other tool with ``template``.
    """
    shown = {id(t) for t in exposed}

    async def visible(invocation: ToolInvocation, proceed: Proceed, /) -> ToolCallOutcome:
        tool = invocation.tool
        if id(tool) in shown:
            return await proceed(invocation)
        if isinstance(tool, HiddenTool):
            return answer(invocation, tool.text)
        return answer(invocation, unavailable_text(template, invocation.call.name))

    return visible
