"""``call_tool``: the proxy channel's second tool, shared by the tool loop and the MCP gateway.

In the proxy channel the model is shown two tools that never change, ``tool_search`` (its
answers carry the found tools' definitions: ``definitions_answer``) and
``call_tool(name, arguments)``; the MCP gateway serves the very same pair. ``call_tool`` is a
:class:`~toolrelay.execution.ForwardingTool`: the manager reads each call of it as the call of
the tool it names, on the one path every call takes. This module holds its schema as the
model reads it (:func:`call_tool_schema`), the tool (:func:`call_tool`), and how a name
resolves among the tools the caller may call (:func:`resolve_called`).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

from toolrelay.execution import ForwardingTool
from toolrelay.execution._forwarding import Forward
from toolrelay.execution._pipeline import META_TOOL
from toolrelay.execution._resolution import match_tool_name
from toolrelay.tools import Tool, ToolDefinition, ToolMetadata, provider_safe_name
from toolrelay.toolsearch._texts import CALL_TOOL_NAME, ENGLISH, SearchTexts

__all__ = ["call_tool", "call_tool_schema", "resolve_called"]

_OWN = ToolMetadata(extra={META_TOOL: True})


def call_tool_schema(parameters: Mapping[str, str]) -> dict[str, Any]:
    """The input schema of ``call_tool`` as the model reads it.

    ``arguments`` is a plain ``object`` with an empty default, not a union with ``null``:
    clients that build the call from a form or the command line (the MCP Inspector among
    them) turn a value into JSON only for a parameter of type ``object``. The manager reads
    it in every shape a call's arguments come in (an object, the JSON text of one, ``null``).

    Args:
        parameters: The description of each parameter (``name``, ``arguments``); a
            parameter left out keeps the English one.
    """
    described = {**ENGLISH.call_parameters, **parameters}
    return {
        "type": "object",
        "properties": {
            "name": {"type": "string", "description": described["name"]},
            "arguments": {"type": "object", "description": described["arguments"], "default": {}},
        },
        "required": ["name"],
    }


def call_tool(
    texts: SearchTexts, forward: Forward, metadata: ToolMetadata = _OWN
) -> ForwardingTool:
    """``call_tool`` as the model sees it in ``texts``, running what ``forward`` resolves.

    Args:
        texts: Its description and its parameters' (``call_description``,
            ``call_parameters``).
        forward: The tool a called name means for the caller, or the text answering it.
        metadata: Its metadata (the library's own tool by default: never asked
            ``authorize`` about; the named tool is).
    """
    definition = ToolDefinition(
        name=CALL_TOOL_NAME,
        description=texts.call_description,
        input_schema=call_tool_schema(texts.call_parameters),
    )
    return ForwardingTool(definition, forward, metadata)


def resolve_called(
    name: str, tools: Mapping[str, Tool], may_call: Callable[[str], bool]
) -> Tool | None:
    """The tool ``name`` means among ``tools`` (by canonical name), if the caller may call it.

    An exact name (canonical or provider-safe) resolves to that tool or, when the caller may
    not call it, to nothing; any other name to the one tool it matches leniently
    (:func:`~toolrelay.execution._resolution.match_tool_name`) among those the caller may call, so a
    forbidden look-alike neither wins nor makes the match ambiguous.
    """
    exact: str | None = name if name in tools else None
    if exact is None:
        exact = next((n for n in tools if provider_safe_name(n) == name), None)
    if exact is not None:
        return tools[exact] if may_call(exact) else None
    matched = match_tool_name(name, [n for n in tools if may_call(n)])
    return tools[matched] if matched is not None else None
