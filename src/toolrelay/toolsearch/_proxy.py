"""``call_tool``: the proxy channel's second tool, shared by the tool loop and the MCP gateway.

In the proxy channel the model is shown two tools that never change, ``tool_search`` (its
answers carry the found tools' definitions: ``definitions_answer``) and
``call_tool(name, arguments)``; the MCP gateway serves the very same pair. This module
holds ``call_tool``'s side: its schema as the model reads it (:func:`call_tool_schema`), the
type its ``arguments`` are validated with (:data:`CallArguments`), the tool built from both
(:func:`call_tool`), how a call of it names the tool it runs (:func:`unwrapped_call`), and how
that name resolves among the tools the caller may call (:func:`resolve_called`).
"""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping
from typing import Annotated, Any

from pydantic import BeforeValidator

from toolrelay.exceptions import InvalidJsonError
from toolrelay.execution import match_tool_name
from toolrelay.messages import ToolCall
from toolrelay.tools import FunctionTool, Tool, ToolDefinition, ToolMetadata, provider_safe_name
from toolrelay.tools._arguments import decode_arguments, require_object
from toolrelay.tools._schema import cached_function_schema
from toolrelay.toolsearch._search_tool import CALL_TOOL_NAME, TOOL_SEARCH_NAME
from toolrelay.toolsearch._texts import DEFAULT_CALL_PARAMETERS

__all__ = [
    "CALL_TOOL_NAME",
    "CallArguments",
    "call_tool",
    "call_tool_schema",
    "resolve_called",
    "unwrapped_call",
]


def _as_object(value: object) -> object:
    """``arguments`` as an object: given as one, as a JSON text of one, or left out (null)."""
    if value is None:
        return {}
    try:
        if isinstance(value, str):
            return decode_arguments(CALL_TOOL_NAME, value)
        return require_object(CALL_TOOL_NAME, value)
    except InvalidJsonError as exc:
        problem = exc.problems[0].message
    raise ValueError(
        f"{problem} Send arguments as a JSON object of the tool's parameters (its "
        f"input_schema from {TOOL_SEARCH_NAME}), or leave it out for a tool without any."
    )


CallArguments = Annotated[dict[str, Any], BeforeValidator(_as_object)]
"""``call_tool``'s ``arguments``: an object, a JSON text of one (blank: none), or null."""


def call_tool_schema(parameters: Mapping[str, str]) -> dict[str, Any]:
    """The input schema of ``call_tool`` as the model reads it.

    ``arguments`` is a plain ``object`` with an empty default, not a union with ``null``:
    clients that build the call from a form or the command line (the MCP Inspector among
    them) turn a value into JSON only for a parameter of type ``object``.

    Args:
        parameters: The description of each parameter (``name``, ``arguments``); a
            parameter left out keeps the English one.
    """
    described = {**DEFAULT_CALL_PARAMETERS, **parameters}
    return {
        "type": "object",
        "properties": {
            "name": {"type": "string", "description": described["name"]},
            "arguments": {"type": "object", "description": described["arguments"], "default": {}},
        },
        "required": ["name"],
    }


def call_tool(
    function: Callable[..., Any],
    description: str,
    parameters: Mapping[str, str],
    metadata: ToolMetadata | None = None,
) -> FunctionTool:
    """``call_tool`` as the model sees it, running ``function``.

    The model reads :func:`call_tool_schema`; ``function``'s own schema validates the calls
    (its ``arguments`` should be :data:`CallArguments`, which takes an object or a JSON text
    of one).
    """
    return FunctionTool(
        function=function,
        definition=ToolDefinition(
            name=CALL_TOOL_NAME,
            description=description,
            input_schema=call_tool_schema(parameters),
        ),
        metadata=metadata if metadata is not None else ToolMetadata(),
        schema=cached_function_schema(function, tool_name=CALL_TOOL_NAME),
    )


def unwrapped_call(call: ToolCall) -> ToolCall | None:
    """The call of the named tool that a ``call_tool`` call stands for (same id), or ``None``.

    ``None`` when ``call`` is not a call of ``call_tool``, or its arguments are unusable
    (not a JSON object, no string ``name``, ``arguments`` neither an object nor a JSON text
    of one): such a call is left to be validated as a call of ``call_tool`` itself, whose
    feedback says what to send.
    """
    if call.name != CALL_TOOL_NAME or not isinstance(call.arguments, str):
        return None
    try:
        values = json.loads(call.arguments) if call.arguments.strip() else None
        if not isinstance(values, dict) or not isinstance(values.get("name"), str):
            return None
        arguments = _as_object(values.get("arguments"))
    except ValueError:  # JSON errors and the problems of _as_object
        return None
    return ToolCall(
        id=call.id,
        name=values["name"],
        arguments=json.dumps(arguments, ensure_ascii=False, separators=(",", ":")),
    )


def resolve_called(
    name: str, tools: Mapping[str, Tool], may_call: Callable[[str], bool]
) -> Tool | None:
    """The tool ``name`` means among ``tools`` (by canonical name), if the caller may call it.

    An exact name (canonical or provider-safe) resolves to that tool or, when the caller may
    not call it, to nothing; any other name to the one tool it matches leniently
    (:func:`~toolrelay.execution.match_tool_name`) among those the caller may call, so a
    forbidden look-alike neither wins nor makes the match ambiguous.
    """
    exact: str | None = name if name in tools else None
    if exact is None:
        exact = next((n for n in tools if provider_safe_name(n) == name), None)
    if exact is not None:
        return tools[exact] if may_call(exact) else None
    matched = match_tool_name(name, [n for n in tools if may_call(n)])
    return tools[matched] if matched is not None else None
