"""Tool calling by constrained decoding: the prompt a local model sees and the grammars it obeys.

A local model has no tool-calling API, so :class:`~toolrelay.models.LlamaCppChatModel`
describes the tools in the system prompt and constrains generation in two steps, so that
every call it returns names an exposed tool and has arguments matching that tool's schema:

1. **Choose.** The reply may either open a call, ``{"name": "<tool>"`` with ``<tool>`` one of
   the exposed provider-safe names (:func:`choice_grammar`), or be a plain-text answer
   (anything that does not start with ``{``). With tool choice ``"required"`` only the call
   is allowed; with a named tool this step is skipped.
2. **Fill in.** For a call, generation continues after ``, "arguments": `` under a grammar
   built from the chosen tool's JSON Schema, with every free string and array bounded
   (:func:`bounded_schema`) so a looping model still closes them; the reply is then closed
   with ``}``. Arguments cut off by the token limit anyway are generated once more under
   tight bounds.

The tools are listed compactly (:func:`tool_catalog`): one line per tool with its
provider-safe name, its parameters and the first sentence of its description, so dozens of
tools fit a small context; the full schema only acts through the second step's grammar.

Nothing here imports llama.cpp: this module builds text (GBNF grammars, prompt messages);
the adapter compiles and runs them.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping, Sequence
from typing import Any

from toolrelay.messages import (
    AssistantMessage,
    Message,
    SystemMessage,
    ToolResponseMessage,
    UserMessage,
)
from toolrelay.models._tool_names import ToolNameMap
from toolrelay.tools._base import ToolDefinition

__all__ = [
    "ARGUMENTS_PREFIX",
    "CALL_PREFIX",
    "CALL_SUFFIX",
    "DEFAULT_INSTRUCTIONS",
    "bounded_schema",
    "choice_grammar",
    "chosen_name",
    "render_messages",
    "tool_catalog",
    "tool_line",
]

CALL_PREFIX = '{"name": "'
"""How a tool call opens; step 1 ends after the name and its closing quote."""
ARGUMENTS_PREFIX = ', "arguments": '
"""Appended to the prompt before step 2 generates the arguments."""
CALL_SUFFIX = "}"
"""Closes a call after its arguments."""

DEFAULT_INSTRUCTIONS = (
    "You can call these tools:\n{tools}\n\n"
    'To call a tool, reply with only a JSON object: {{"name": "<tool name>", "arguments": '
    "{{...}}}}. Call a tool when it helps with the user's request. To answer without a "
    "tool, reply in plain text."
)
"""The tools section of the system prompt; ``{tools}`` is replaced by the tool lines."""

_FIRST_SENTENCE = re.compile(r"^(.+?[.!?])(?:\s|$)", re.DOTALL)
_MAX_DESCRIPTION = 200


def _first_sentence(text: str) -> str:
    text = " ".join(text.split())
    match = _FIRST_SENTENCE.match(text)
    sentence = match.group(1) if match else text
    if len(sentence) > _MAX_DESCRIPTION:
        sentence = sentence[: _MAX_DESCRIPTION - 3].rstrip() + "..."
    return sentence


def _type_name(schema: Mapping[str, Any]) -> str:
    if "enum" in schema:
        return " | ".join(json.dumps(v) for v in schema["enum"])
    if "const" in schema:
        return json.dumps(schema["const"])
    for key in ("anyOf", "oneOf"):
        if key in schema:
            kinds = [_type_name(s) for s in schema[key] if s.get("type") != "null"]
            return " | ".join(dict.fromkeys(kinds)) or "null"
    kind = schema.get("type")
    if isinstance(kind, list):
        return " | ".join(str(k) for k in kind if k != "null")
    if kind == "array" and isinstance(schema.get("items"), Mapping):
        return f"list[{_type_name(schema['items'])}]"
    if "$ref" in schema:
        return str(schema["$ref"]).rsplit("/", 1)[-1]
    return str(kind or "any")


def tool_line(definition: ToolDefinition) -> str:
    """One tool as a line, e.g. ``- name(a: string, b?: integer): First sentence.``."""
    schema = definition.input_schema
    required = set(schema.get("required", ()))
    parameters = ", ".join(
        f"{name}{'' if name in required else '?'}: {_type_name(sub)}"
        for name, sub in (schema.get("properties") or {}).items()
    )
    name = ToolNameMap.to_provider(definition.name)
    return f"- {name}({parameters}): {_first_sentence(definition.description)}"


def tool_catalog(definitions: Sequence[ToolDefinition]) -> str:
    """The tool lines of the system prompt."""
    return "\n".join(tool_line(d) for d in definitions)


def bounded_schema(
    schema: Mapping[str, Any], *, max_string_length: int, max_items: int
) -> dict[str, Any]:
    """``schema`` with an upper bound on every free string and array (for step 2).

    Small models can loop inside a string (``"3232323..."``) until the token limit cuts the
    arguments off, leaving invalid JSON. A bound makes the grammar close the string in time.
    Strings with a pattern, format, enum or const are bounded already and left alone.
    """
    out: dict[str, Any] = {}
    for key, value in schema.items():
        if key == "$schema":
            continue
        if isinstance(value, Mapping):
            bounded = key in ("properties", "$defs", "definitions")
            out[key] = (
                {k: _bound(v, max_string_length, max_items) for k, v in value.items()}
                if bounded
                else _bound(value, max_string_length, max_items)
            )
        elif isinstance(value, list) and key in ("anyOf", "oneOf", "allOf", "prefixItems"):
            out[key] = [_bound(v, max_string_length, max_items) for v in value]
        else:
            out[key] = value
    kinds = schema.get("type")
    kinds = kinds if isinstance(kinds, list) else [kinds]
    free = not any(k in schema for k in ("pattern", "format", "enum", "const"))
    if "string" in kinds and free:
        out["maxLength"] = min(int(schema.get("maxLength", max_string_length)), max_string_length)
    if "array" in kinds:
        out["maxItems"] = min(int(schema.get("maxItems", max_items)), max_items)
    return out


def _bound(value: Any, max_string_length: int, max_items: int) -> Any:
    if not isinstance(value, Mapping):
        return value
    return bounded_schema(value, max_string_length=max_string_length, max_items=max_items)


def _gbnf_literal(text: str) -> str:
    escaped = text.replace("\\", "\\\\").replace('"', '\\"').replace("\n", "\\n")
    return f'"{escaped}"'


def choice_grammar(names: Sequence[str], *, allow_answer: bool) -> str:
    """The GBNF grammar of step 1: open a call to one of ``names``, or answer in text.

    Args:
        names: The provider-safe names of the exposed tools.
        allow_answer: Whether a plain-text answer is allowed (tool choice ``"auto"``).
    """
    alternatives = " | ".join(_gbnf_literal(n) for n in names)
    rules = [
        "root ::= call" + (" | answer" if allow_answer else ""),
        f"call ::= {_gbnf_literal(CALL_PREFIX)} name {_gbnf_literal(chr(34))}",
        f"name ::= {alternatives}",
    ]
    if allow_answer:
        # Any text that does not open a JSON object; whitespace first would hide a "{".
        rules.append("answer ::= [^{ \\t\\n] [^\\x00]*")
    return "\n".join(rules) + "\n"


def chosen_name(text: str) -> str | None:
    """The provider-safe tool name a step-1 reply opened a call to, or ``None`` for text."""
    stripped = text.strip()
    if not stripped.startswith(CALL_PREFIX):
        return None
    rest = stripped[len(CALL_PREFIX) :]
    return rest[:-1] if rest.endswith('"') else rest


def render_messages(
    messages: Sequence[Message],
    definitions: Sequence[ToolDefinition],
    *,
    instructions: str = DEFAULT_INSTRUCTIONS,
    tool_role: str = "tool",
) -> list[dict[str, str]]:
    """The conversation as ``{"role", "content"}`` messages for the model's chat template.

    System texts are joined and followed by the tools section; assistant tool calls are
    written in the call format the model is asked to use; each tool result is a message of
    ``tool_role`` (use ``"user"`` for templates that only know system/user/assistant).
    """
    system = "\n\n".join(m.text for m in messages if isinstance(m, SystemMessage) and m.text)
    if definitions:
        tools = instructions.format(tools=tool_catalog(definitions))
        system = f"{system}\n\n{tools}" if system else tools
    rendered: list[dict[str, str]] = [{"role": "system", "content": system}] if system else []
    for message in messages:
        if isinstance(message, UserMessage):
            rendered.append({"role": "user", "content": message.text})
        elif isinstance(message, AssistantMessage):
            parts = [message.text] if message.text else []
            parts.extend(
                f"{CALL_PREFIX}{ToolNameMap.to_provider(c.name)}"
                f'"{ARGUMENTS_PREFIX}{c.arguments.strip() or "{}"}{CALL_SUFFIX}'
                for c in message.tool_calls
            )
            rendered.append({"role": "assistant", "content": "\n".join(parts)})
        elif isinstance(message, ToolResponseMessage):
            for response in message.responses:
                name = ToolNameMap.to_provider(response.name)
                verb = "failed" if response.is_error else "returned"
                rendered.append(
                    {"role": tool_role, "content": f"Tool {name} {verb}: {response.data}"}
                )
    return rendered
