"""The OpenAI Chat Completions wire format: request bodies in, responses and chunks out.

Pure functions over plain JSON data (the SDK's objects are dumped first), so the format is
tested without a network and without the SDK's types.
:class:`~toolrelay.models.OpenAIChatModel` does the sending.

Mapping:

- :class:`~toolrelay.messages.SystemMessage` → ``system``, :class:`~toolrelay.messages.UserMessage`
  → ``user``, :class:`~toolrelay.messages.AssistantMessage` → ``assistant`` with
  ``tool_calls`` (and ``""`` content when it has no text), each
  :class:`~toolrelay.messages.ToolResponse` → one ``tool`` message.
- Chat Completions has no error flag on tool results, so the content of a failed call is
  prefixed with :data:`DEFAULT_ERROR_PREFIX` (``"ERROR: "``, configurable).
- Tools go out as ``function`` tools under their provider-safe names; in strict mode with
  ``to_strict_schema`` schemas and ``"strict": true``.
- Usage maps to :class:`~toolrelay.messages.Usage`; cached prompt tokens and reasoning tokens
  go to the response metadata (``CACHE_READ_TOKENS``, ...).
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from toolrelay.exceptions import ConfigurationError
from toolrelay.messages import (
    AssistantMessage,
    ChatResponse,
    Generation,
    Message,
    SystemMessage,
    ToolCall,
    ToolResponseMessage,
    Usage,
    UserMessage,
)
from toolrelay.models import _metadata as keys
from toolrelay.models._call_ids import consistent_call_ids
from toolrelay.models._chunks import TOOL_CALL_INDEXES, ChunkMerger
from toolrelay.models._schemas import provider_schema
from toolrelay.models._strict_schema import drop_added_nulls, to_strict_schema
from toolrelay.models._tool_choice import ToolChoiceSettings
from toolrelay.models._tool_names import ToolNameMap
from toolrelay.tools._base import ToolDefinition

__all__ = [
    "DEFAULT_ERROR_PREFIX",
    "OpenAIStreamParser",
    "WireTools",
    "arguments_text",
    "completion_to_response",
    "content_body",
    "function_definition",
    "messages_to_openai",
    "response_metadata",
    "sent_arguments",
    "tool_choice_to_openai",
    "tools_to_openai",
    "usage_from_openai",
]

DEFAULT_ERROR_PREFIX = "ERROR: "
"""Put before the content of a failed tool call (Chat Completions has no error flag)."""


@dataclass(frozen=True, kw_only=True)
class WireTools:
    """The tools of one request as the reply parser needs them.

    Attributes:
        names: Canonical ↔ provider-safe names.
        strict: Whether the tools were sent in strict mode (nulls are then cleaned).
    """

    names: ToolNameMap
    strict: bool = False

    def call(self, call_id: str, name: str, arguments: str) -> ToolCall:
        """A complete call from the reply, with its canonical name and cleaned arguments."""
        canonical = self.names.to_canonical(name)
        if self.strict:
            definition = self.names.definition(canonical)
            if definition is not None:
                arguments = drop_added_nulls(arguments, definition.input_schema)
        return ToolCall(id=call_id, name=canonical, arguments=arguments)


def messages_to_openai(
    messages: Sequence[Message], *, error_prefix: str = DEFAULT_ERROR_PREFIX
) -> list[dict[str, Any]]:
    """The ``messages`` of a request body."""
    wire: list[dict[str, Any]] = []
    for message in consistent_call_ids(messages):
        match message:
            case SystemMessage(text=text):
                wire.append({"role": "system", "content": text})
            case UserMessage(text=text):
                wire.append({"role": "user", "content": text})
            case AssistantMessage(text=text, tool_calls=calls):
                # "" rather than null: OpenAI accepts both next to tool calls, while some
                # compatible servers (llama-cpp-python's) reject null.
                entry: dict[str, Any] = {"role": "assistant", "content": text or ""}
                if calls:
                    entry["tool_calls"] = [
                        {
                            "id": call.id,
                            "type": "function",
                            "function": {
                                "name": ToolNameMap.to_provider(call.name),
                                "arguments": sent_arguments(call),
                            },
                        }
                        for call in calls
                    ]
                wire.append(entry)
            case ToolResponseMessage(responses=responses):
                wire.extend(
                    {
                        "role": "tool",
                        "tool_call_id": r.id,
                        "content": f"{error_prefix}{r.data}" if r.is_error else r.data,
                    }
                    for r in responses
                )
    return wire


def sent_arguments(call: ToolCall) -> str:
    """A call's arguments as the history sends them (servers parse them again: never blank)."""
    return call.arguments if call.arguments.strip() else "{}"


def function_definition(definition: ToolDefinition, *, strict: bool) -> dict[str, Any]:
    """A tool's ``name``, ``description`` and ``parameters`` as both OpenAI APIs take them.

    Raises:
        ConfigurationError: ``strict`` and a schema strict mode cannot express (see
            ``to_strict_schema``); the tool is named.
    """
    schema = provider_schema(definition.input_schema)
    if strict:
        try:
            schema = to_strict_schema(schema)
        except ConfigurationError as exc:
            raise ConfigurationError(f"tool {definition.name!r}: {exc}") from exc
    return {
        "name": ToolNameMap.to_provider(definition.name),
        "description": definition.description,
        "parameters": schema,
    }


def tools_to_openai(
    definitions: Sequence[ToolDefinition], *, strict: bool = False
) -> list[dict[str, Any]]:
    """The ``tools`` of a request body (see :func:`function_definition` for what it raises)."""
    strict_flag = {"strict": True} if strict else {}
    return [
        {"type": "function", "function": {**function_definition(d, strict=strict), **strict_flag}}
        for d in definitions
    ]


def content_body(
    messages: Sequence[Message],
    definitions: Sequence[ToolDefinition],
    *,
    strict: bool = False,
    error_prefix: str = DEFAULT_ERROR_PREFIX,
) -> dict[str, Any]:
    """The content of a Chat Completions body: ``messages``, and ``tools`` when there are any.

    Shared by :class:`~toolrelay.models.OpenAIChatModel` and the billing, so what is priced
    is what is sent.
    """
    body: dict[str, Any] = {"messages": messages_to_openai(messages, error_prefix=error_prefix)}
    if definitions:
        body["tools"] = tools_to_openai(definitions, strict=strict)
    return body


def tool_choice_to_openai(settings: ToolChoiceSettings) -> str | dict[str, Any] | None:
    """The ``tool_choice`` of a request body, or ``None`` to leave the server's default."""
    if settings.mode == "raw":
        return dict(settings.raw or {})
    if settings.mode == "tool" and settings.tool is not None:
        return {"type": "function", "function": {"name": ToolNameMap.to_provider(settings.tool)}}
    return settings.mode


def usage_from_openai(
    data: Mapping[str, Any] | None,
    *,
    fields: tuple[str, str] = ("prompt_tokens", "completion_tokens"),
) -> tuple[Usage, dict[str, Any]]:
    """The usage of a reply, and the metadata entries of its token details.

    ``fields`` names the input and output counts: Chat Completions' by default, the Responses
    API's ``("input_tokens", "output_tokens")``; each count's details are under
    ``<field>_details`` in both.
    """
    if not data:
        return Usage(), {}
    prompt_field, completion_field = fields
    prompt = int(data.get(prompt_field) or 0)
    completion = int(data.get(completion_field) or 0)
    total = int(data.get("total_tokens") or prompt + completion)
    details: dict[str, Any] = {}
    prompt_details = data.get(f"{prompt_field}_details") or {}
    completion_details = data.get(f"{completion_field}_details") or {}
    for key, source, field in (
        (keys.CACHE_READ_TOKENS, prompt_details, "cached_tokens"),
        (keys.CACHE_WRITE_TOKENS, prompt_details, "cache_write_tokens"),
        (keys.REASONING_TOKENS, completion_details, "reasoning_tokens"),
    ):
        if source.get(field) is not None:
            details[key] = int(source[field])
    usage = Usage(prompt_tokens=prompt, completion_tokens=completion, total_tokens=total)
    return usage, details


def response_metadata(data: Mapping[str, Any]) -> dict[str, Any]:
    """The response's ``id`` and ``model``, under the metadata keys."""
    return {key: data[key] for key in (keys.ID, keys.MODEL) if data.get(key) is not None}


def completion_to_response(data: Mapping[str, Any], tools: WireTools) -> ChatResponse:
    """The :class:`ChatResponse` of a complete (non-streamed) ``chat.completion``."""
    generations = []
    for choice in sorted(data.get("choices") or (), key=lambda c: int(c.get("index") or 0)):
        message = choice.get("message") or {}
        calls = tuple(
            tools.call(
                call.get("id") or f"call_{position}",
                (call.get("function") or {}).get("name") or "",
                arguments_text((call.get("function") or {}).get("arguments")),
            )
            for position, call in enumerate(message.get("tool_calls") or ())
        )
        extra = {keys.REFUSAL: message["refusal"]} if message.get("refusal") else {}
        generations.append(
            Generation(
                message=AssistantMessage(text=message.get("content"), tool_calls=calls),
                finish_reason=choice.get("finish_reason"),
                metadata=extra,
            )
        )
    usage, details = usage_from_openai(data.get("usage"))
    return ChatResponse(
        generations=tuple(generations),
        usage=usage,
        metadata={**response_metadata(data), **details},
    )


class OpenAIStreamParser:
    """Turns ``chat.completion.chunk`` objects into toolrelay chunks, one at a time.

    Tool-call deltas are tagged with their call's index (as
    :class:`~toolrelay.models.ChunkMerger` reads them). A delta at an index already taken by a
    call with another, non-empty id starts a new call (some servers number every call 0); empty
    and repeated ids continue the call. In strict
    mode the calls are held back and sent complete by :meth:`finish`, because dropping the
    nulls strict mode added needs the whole arguments.
    """

    def __init__(self, tools: WireTools) -> None:
        self._tools = tools
        self._calls: dict[tuple[int, int], tuple[str, int]] = {}  # (choice, index) → id, slot
        self._next_slot: dict[int, int] = {}
        self._held = ChunkMerger()
        self._metadata_sent = False

    def parse(self, data: Mapping[str, Any]) -> ChatResponse:
        """The toolrelay chunk of one streamed chunk."""
        generations: dict[int, Generation] = {}
        held: dict[int, Generation] = {}
        for choice in data.get("choices") or ():
            position = int(choice.get("index") or 0)
            delta = choice.get("delta") or {}
            fragments, indexes = self._fragments(position, delta.get("tool_calls") or ())
            text = delta.get("content")
            calls_metadata = {TOOL_CALL_INDEXES: tuple(indexes)} if fragments else {}
            if self._tools.strict and fragments:
                held[position] = Generation(
                    message=AssistantMessage(tool_calls=fragments), metadata=calls_metadata
                )
                fragments, calls_metadata = (), {}
            extra = {keys.REFUSAL: delta["refusal"]} if delta.get("refusal") else {}
            generations[position] = Generation(
                message=AssistantMessage(text=text or None, tool_calls=fragments),
                finish_reason=choice.get("finish_reason"),
                metadata={**calls_metadata, **extra},
            )
        if held:
            self._held.add(ChatResponse(generations=_dense(held)))
        usage, details = usage_from_openai(data.get("usage"))
        metadata = details
        if not self._metadata_sent and response_metadata(data):
            metadata = {**response_metadata(data), **details}
            self._metadata_sent = True
        return ChatResponse(generations=_dense(generations), usage=usage, metadata=metadata)

    def finish(self) -> ChatResponse | None:
        """The held-back calls of a strict-mode stream (``None`` when there are none)."""
        if self._held.chunk_count == 0:
            return None
        merged = self._held.response()
        generations = {
            position: Generation(
                message=AssistantMessage(
                    tool_calls=tuple(
                        self._tools.call(c.id, c.name, c.arguments)
                        for c in generation.message.tool_calls
                    )
                ),
                metadata={TOOL_CALL_INDEXES: tuple(range(len(generation.message.tool_calls)))},
            )
            for position, generation in enumerate(merged.generations)
        }
        return ChatResponse(generations=_dense(generations))

    def _fragments(
        self, position: int, deltas: Sequence[Mapping[str, Any]]
    ) -> tuple[tuple[ToolCall, ...], list[int]]:
        fragments: list[ToolCall] = []
        indexes: list[int] = []
        for order, delta in enumerate(deltas):
            index = int(delta["index"]) if delta.get("index") is not None else order
            call_id = delta.get("id") or ""
            known = self._calls.get((position, index))
            if known is None or (call_id and known[0] and call_id != known[0]):
                slot = self._next_slot.get(position, 0)
                self._next_slot[position] = slot + 1
                known = (call_id, slot)
                self._calls[(position, index)] = known
            elif call_id and not known[0]:
                known = (call_id, known[1])
                self._calls[(position, index)] = known
            function = delta.get("function") or {}
            name = function.get("name") or ""
            fragments.append(
                ToolCall(
                    id=call_id,
                    name=self._tools.names.to_canonical(name) if name else "",
                    arguments=arguments_text(function.get("arguments")),
                )
            )
            indexes.append(known[1])
        return tuple(fragments), indexes


def arguments_text(value: Any) -> str:
    """Arguments as JSON text; some servers send an object where the API has a string."""
    if value is None:
        return ""
    return value if isinstance(value, str) else json.dumps(value, ensure_ascii=False)


def _dense(generations: Mapping[int, Generation]) -> tuple[Generation, ...]:
    """Generations by choice index; the positions in between get empty generations."""
    if not generations:
        return ()
    return tuple(
        generations.get(i, Generation(message=AssistantMessage()))
        for i in range(max(generations) + 1)
    )
