"""The Anthropic Messages wire format: request parts in, messages and stream events out.

Pure functions over plain JSON data (the SDK's objects are dumped first).
:class:`~toolrelay.models.AnthropicChatModel` does the sending.

Mapping:

- Every :class:`~toolrelay.messages.SystemMessage` goes into the top-level ``system`` (the
  Messages API has no system role), joined by blank lines.
- An :class:`~toolrelay.messages.AssistantMessage` becomes ``text`` and ``tool_use`` blocks;
  a :class:`~toolrelay.messages.ToolResponseMessage` becomes ``tool_result`` blocks of a user
  turn, with ``is_error`` for failed calls. Consecutive turns of one role are merged, with
  the tool results first, as the API requires.
- Prompt caching (:data:`EPHEMERAL` breakpoints, at most :data:`MAX_BREAKPOINTS` a request):
  the last tool and the system text end the stable prefix (tools, then system), and
  :func:`mark_history` puts rolling breakpoints on the newest turns, so each call of a tool
  loop reads the previous call's prefix from the cache. ``thinking`` and
  ``redacted_thinking`` blocks take no breakpoint, nor does a block without content.
- ``prompt_tokens`` counts every input token (uncached + cache reads + cache writes); the
  cache parts are in the response metadata under
  ``CACHE_READ_TOKENS`` and
  ``CACHE_WRITE_TOKENS``.
- ``thinking`` blocks are not kept.
- A :class:`~toolrelay.messages.ToolChangeMessage`, for a model that accepts mid-conversation
  tool changes (``tool_changes=True``), becomes a ``role: "system"`` message of
  ``tool_addition`` blocks (each tool by value: ``tool_definition``, the
  :data:`INLINE_TOOLS_BETA` beta) and ``tool_removal`` blocks (by ``tool_reference``). The
  API takes such a message only right after a user turn (tool results included) and followed
  by an assistant turn or at the end, never first; consecutive ones are one section. One
  found elsewhere (a history replayed from another model, a turn that failed) moves to the
  next place the API takes. For any other model it is left out.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping, Sequence
from typing import Any, Final

from toolrelay.exceptions import InvalidJsonError
from toolrelay.messages import (
    AssistantMessage,
    ChatResponse,
    Generation,
    Message,
    SystemMessage,
    ToolCall,
    ToolChangeMessage,
    ToolResponseMessage,
    Usage,
    UserMessage,
)
from toolrelay.models import _metadata as keys
from toolrelay.models._call_ids import consistent_call_ids
from toolrelay.models._chunks import TOOL_CALL_INDEXES
from toolrelay.models._schemas import provider_schema
from toolrelay.models._tool_choice import ToolChoiceSettings
from toolrelay.models._tool_names import ToolNameMap
from toolrelay.tools._arguments import decode_arguments
from toolrelay.tools._base import ToolDefinition

__all__ = [
    "EPHEMERAL",
    "INLINE_TOOLS_BETA",
    "MAX_BREAKPOINTS",
    "TOOL_CHANGE_MODELS",
    "UNCACHEABLE_BLOCKS",
    "AnthropicStreamParser",
    "accepts_tool_changes",
    "content_body",
    "count_breakpoints",
    "mark_history",
    "message_to_response",
    "messages_to_anthropic",
    "model_family",
    "system_to_anthropic",
    "tool_choice_to_anthropic",
    "tools_to_anthropic",
    "usage_from_anthropic",
]

TOOL_CHANGE_MODELS: Final = frozenset(
    {
        "claude-opus-4-8",
        "claude-opus-5",
        "claude-opus-5-5",
        "claude-fable-5",
        "claude-fable-5-1",
        "claude-mythos-5",
        "claude-mythos-5-1",
    }
)
"""The models Anthropic lists as accepting mid-conversation tool changes (``tool_addition``
and ``tool_removal`` blocks; "Mid-conversation system messages and tool changes", Claude API
docs). Claude Sonnet 5 refuses them, and Haiku 5.5 is not listed; a model not named here gets
the proxy channel."""

_SNAPSHOT = re.compile(r"-(\d{8}|0)$")


def model_family(model: str) -> str:
    """``model`` as Anthropic's tables list it: no snapshot date, no ``-0`` alias suffix.

    ``claude-sonnet-4-5-20250929`` → ``claude-sonnet-4-5``; ``claude-sonnet-4-0`` →
    ``claude-sonnet-4``.
    """
    return _SNAPSHOT.sub("", model)


def accepts_tool_changes(model: str) -> bool:
    """Whether ``model`` (an alias, or a dated snapshot of one) is in :data:`TOOL_CHANGE_MODELS`."""
    return model_family(model) in TOOL_CHANGE_MODELS


INLINE_TOOLS_BETA = "inline-tools-2026-09-15"
"""The beta under which a ``tool_addition`` block carries a tool's definition by value."""

EPHEMERAL: Mapping[str, str] = {"type": "ephemeral"}
"""The ``cache_control`` marking the end of a cached prefix."""

MAX_BREAKPOINTS = 4
"""The most ``cache_control`` breakpoints the Messages API accepts in one request."""

UNCACHEABLE_BLOCKS = frozenset({"thinking", "redacted_thinking"})
"""Content block types the API refuses a ``cache_control`` on."""

_ID_CHARACTER = re.compile(r"[a-zA-Z0-9_-]")


def system_to_anthropic(
    messages: Sequence[Message], *, cache: bool = False
) -> str | list[dict[str, Any]] | None:
    """The top-level ``system`` of a request, or ``None`` when there is no system text."""
    text = "\n\n".join(m.text for m in messages if isinstance(m, SystemMessage) and m.text)
    if not text:
        return None
    if not cache:
        return text
    return [{"type": "text", "text": text, "cache_control": dict(EPHEMERAL)}]


def _input_object(arguments: str) -> dict[str, Any]:
    """A call's arguments as the object ``tool_use.input`` must be.

    Arguments that are not a JSON object (the execution layer answered the call with an
    error) go back as ``{}``; the tool result tells the model what was wrong. They are read
    with the one decoder of the model's JSON, so a ``NaN`` never reaches the request body.
    """
    try:
        return decode_arguments("", arguments)
    except InvalidJsonError:
        return {}


def tool_change_blocks(message: ToolChangeMessage) -> list[dict[str, Any]]:
    """The ``tool_removal`` and ``tool_addition`` blocks of a tool change, removals first."""
    blocks: list[dict[str, Any]] = [
        {"type": "tool_removal", "tool": {"type": "tool_reference", "name": _safe(name)}}
        for name in message.removed
    ]
    for added in message.added:
        definition = {**added, "name": _safe(added["name"])}
        blocks.append(
            {"type": "tool_addition", "tool": {"type": "tool_definition", "definition": definition}}
        )
    return blocks


def _safe(name: str) -> str:
    return ToolNameMap.to_provider(name)


def messages_to_anthropic(
    messages: Sequence[Message], *, tool_changes: bool = False
) -> list[dict[str, Any]]:
    """The ``messages`` of a request body (system messages left out).

    With ``tool_changes``, each :class:`~toolrelay.messages.ToolChangeMessage` becomes a
    system message where the API takes one (module docs); without, it is left out.
    """
    turns: list[tuple[str, list[dict[str, Any]]]] = []
    for message in consistent_call_ids(messages, allowed=_ID_CHARACTER):
        role: str
        blocks: list[dict[str, Any]]
        match message:
            case UserMessage(text=text):
                role, blocks = "user", [{"type": "text", "text": text}] if text else []
            case AssistantMessage(text=text, tool_calls=calls):
                role = "assistant"
                blocks = [{"type": "text", "text": text}] if text else []
                blocks.extend(
                    {
                        "type": "tool_use",
                        "id": call.id,
                        "name": ToolNameMap.to_provider(call.name),
                        "input": _input_object(call.arguments),
                    }
                    for call in calls
                )
            case ToolResponseMessage(responses=responses):
                role = "user"
                blocks = []
                for response in responses:
                    block: dict[str, Any] = {
                        "type": "tool_result",
                        "tool_use_id": response.id,
                        "content": response.data,
                    }
                    if response.is_error:
                        block["is_error"] = True
                    blocks.append(block)
            case ToolChangeMessage() if tool_changes:
                role, blocks = "system", tool_change_blocks(message)
            case _:
                continue
        if not blocks:
            continue
        if turns and turns[-1][0] == role:
            turns[-1][1].extend(blocks)
        else:
            turns.append((role, blocks))
    wire = []
    for role, blocks in _placed(turns):
        # Tool results must open a user turn; keep every other block's order.
        blocks.sort(key=lambda b: b["type"] != "tool_result")
        wire.append({"role": role, "content": blocks})
    return wire


_Turns = list[tuple[str, list[dict[str, Any]]]]


def _placed(turns: _Turns) -> _Turns:
    """``turns`` with each system section where the API takes it (module docs).

    A section after anything but a user turn, or before a user turn, waits for the next user
    turn that ends the messages or precedes an assistant turn; with none, it is left out.
    """
    placed: _Turns = []
    waiting: list[dict[str, Any]] = []
    for position, (role, blocks) in enumerate(turns):
        if role == "system":
            waiting.extend(blocks)
        elif placed and placed[-1][0] == role:
            placed[-1][1].extend(blocks)
        else:
            placed.append((role, blocks))
        following = next((r for r, _ in turns[position + 1 :] if r != "system"), None)
        if waiting and placed and placed[-1][0] == "user" and following in (None, "assistant"):
            placed.append(("system", waiting))
            waiting = []
    return placed


def count_breakpoints(body: Mapping[str, Any]) -> int:
    """How many ``cache_control`` breakpoints a request body holds.

    Only where the API reads them: tools, system blocks, content blocks and the blocks inside
    a tool result (a tool parameter named ``cache_control`` is not one).
    """

    def marked(blocks: Any) -> int:
        if not isinstance(blocks, list):
            return 0
        own = sum(1 for b in blocks if isinstance(b, Mapping) and b.get("cache_control"))
        inner = sum(marked(b.get("content")) for b in blocks if isinstance(b, Mapping))
        return own + inner

    messages = body.get("messages") or ()
    return (
        marked(body.get("tools"))
        + marked(body.get("system"))
        + sum(marked(m.get("content")) for m in messages if isinstance(m, Mapping))
    )


def _cacheable(block: Mapping[str, Any]) -> bool:
    if block.get("type") in UNCACHEABLE_BLOCKS:
        return False
    if block.get("type") == "text":
        return bool(block.get("text"))  # the API refuses a breakpoint on empty text
    if block.get("type") == "tool_result":
        return bool(block.get("content"))
    return True


def mark_history(messages: Sequence[Mapping[str, Any]], *, available: int) -> list[dict[str, Any]]:
    """``messages`` with rolling cache breakpoints, at most ``available`` of them.

    The first goes on the last message, so the whole request is written to the cache; the
    second on the user turn before the last assistant turn, which is where the previous call
    of a tool loop (or the previous turn of a conversation) put its first: this call then
    reads that prefix however many blocks the newest turns added (the API looks back only
    about 20 blocks from a breakpoint for an earlier cache entry). Each goes on the last block
    of its message that can carry one (:func:`_cacheable`); a message with none gets none.
    """
    wire = [dict(m) for m in messages]
    targets: list[int] = []
    if wire:
        targets.append(len(wire) - 1)
        assistants = [i for i, m in enumerate(wire) if m.get("role") == "assistant"]
        if assistants:
            users = [i for i in range(assistants[-1]) if wire[i].get("role") == "user"]
            if users:
                targets.append(users[-1])
    for index in targets[: max(available, 0)]:
        content = wire[index].get("content")
        if not isinstance(content, list):
            continue
        blocks = [dict(b) for b in content]
        for position in reversed(range(len(blocks))):
            if _cacheable(blocks[position]):
                blocks[position]["cache_control"] = dict(EPHEMERAL)
                wire[index]["content"] = blocks
                break
    return wire


def tools_to_anthropic(
    definitions: Sequence[ToolDefinition], *, cache: bool = False
) -> list[dict[str, Any]]:
    """The ``tools`` of a request body; with ``cache``, the last one ends the cached prefix."""
    tools: list[dict[str, Any]] = [
        {
            "name": ToolNameMap.to_provider(d.name),
            "description": d.description,
            "input_schema": provider_schema(d.input_schema),
        }
        for d in definitions
    ]
    if cache and tools:
        tools[-1]["cache_control"] = dict(EPHEMERAL)
    return tools


def content_body(
    messages: Sequence[Message],
    definitions: Sequence[ToolDefinition],
    *,
    tool_changes: bool = False,
    cache_prompt: bool = False,
    cache_history: bool = True,
) -> dict[str, Any]:
    """The content of a request body: ``messages``, ``system``, ``tools`` and ``betas``.

    With their cache breakpoints (``cache_prompt``: the tools and the system text;
    ``cache_history``: :func:`mark_history` with the breakpoints left); ``tool_changes``: the
    model accepts them (:func:`messages_to_anthropic`), and a body that holds one names the
    :data:`INLINE_TOOLS_BETA` beta. The one builder of what a request says, shared by
    :class:`~toolrelay.models.AnthropicChatModel` and the billing, so what is priced is what
    is sent.
    """
    wire = messages_to_anthropic(messages, tool_changes=tool_changes)
    body: dict[str, Any] = {"messages": wire}
    if any(m["role"] == "system" for m in wire):
        body["betas"] = [INLINE_TOOLS_BETA]
    system = system_to_anthropic(messages, cache=cache_prompt)
    if system is not None:
        body["system"] = system
    if definitions:
        body["tools"] = tools_to_anthropic(definitions, cache=cache_prompt)
    if cache_history:
        available = MAX_BREAKPOINTS - count_breakpoints(body)
        body["messages"] = mark_history(wire, available=available)
    return body


def tool_choice_to_anthropic(settings: ToolChoiceSettings) -> dict[str, Any] | None:
    """The ``tool_choice`` of a request body, or ``None`` for the API's default."""
    if settings.mode == "raw":
        return dict(settings.raw or {})
    choice: dict[str, Any]
    if settings.mode == "tool" and settings.tool is not None:
        choice = {"type": "tool", "name": ToolNameMap.to_provider(settings.tool)}
    elif settings.mode == "required":
        choice = {"type": "any"}
    elif settings.mode == "none":
        return {"type": "none"}
    elif settings.mode == "auto" or settings.parallel is False:
        choice = {"type": "auto"}
    else:
        return None
    if settings.parallel is False:
        choice["disable_parallel_tool_use"] = True
    return choice


def usage_from_anthropic(data: Mapping[str, Any] | None) -> tuple[Usage, dict[str, Any]]:
    """The usage of a reply, and the metadata entries of its cache tokens."""
    if not data:
        return Usage(), {}
    uncached = int(data.get("input_tokens") or 0)
    read = data.get("cache_read_input_tokens")
    written = data.get("cache_creation_input_tokens")
    prompt = uncached + int(read or 0) + int(written or 0)
    completion = int(data.get("output_tokens") or 0)
    details: dict[str, Any] = {}
    if read is not None:
        details[keys.CACHE_READ_TOKENS] = int(read)
    if written is not None:
        details[keys.CACHE_WRITE_TOKENS] = int(written)
    usage = Usage(
        prompt_tokens=prompt, completion_tokens=completion, total_tokens=prompt + completion
    )
    return usage, details


def _metadata(data: Mapping[str, Any]) -> dict[str, Any]:
    return {key: data[key] for key in (keys.ID, keys.MODEL) if data.get(key) is not None}


def message_to_response(data: Mapping[str, Any], names: ToolNameMap) -> ChatResponse:
    """The :class:`ChatResponse` of a complete (non-streamed) ``message``."""
    texts: list[str] = []
    calls: list[ToolCall] = []
    for block in data.get("content") or ():
        if block.get("type") == "text":
            texts.append(block.get("text") or "")
        elif block.get("type") == "tool_use":
            calls.append(
                ToolCall(
                    id=block.get("id") or f"call_{len(calls)}",
                    name=names.to_canonical(block.get("name") or ""),
                    arguments=json.dumps(block.get("input") or {}, ensure_ascii=False),
                )
            )
    stop_sequence = data.get("stop_sequence")
    generation = Generation(
        message=AssistantMessage(text="".join(texts) if texts else None, tool_calls=tuple(calls)),
        finish_reason=data.get("stop_reason"),
        metadata={keys.STOP_SEQUENCE: stop_sequence} if stop_sequence else {},
    )
    usage, details = usage_from_anthropic(data.get("usage"))
    return ChatResponse(
        generations=(generation,), usage=usage, metadata={**_metadata(data), **details}
    )


class AnthropicStreamParser:
    """Turns Messages stream events into toolrelay chunks.

    Each ``tool_use`` block becomes a call (numbered in order of appearance); its
    ``input_json_delta`` pieces are the call's argument fragments. Usage is reported once,
    on the chunk of ``message_stop`` (or by :meth:`finish` when the stream ended without it),
    from the input counts of ``message_start`` and the cumulative counts of ``message_delta``.
    """

    def __init__(self, names: ToolNameMap) -> None:
        self._names = names
        self._slots: dict[int, int] = {}  # content block index → call index
        self._unstreamed_input: dict[int, dict[str, Any]] = {}
        self._usage: dict[str, Any] = {}
        self._usage_sent = False

    def parse(self, event: Mapping[str, Any]) -> ChatResponse | None:
        """The chunk of one event, or ``None`` for events that carry nothing."""
        kind = event.get("type")
        if kind == "message_start":
            message = event.get("message") or {}
            self._usage.update(
                {k: v for k, v in (message.get("usage") or {}).items() if v is not None}
            )
            return ChatResponse(metadata=_metadata(message))
        if kind == "content_block_start":
            return self._block_start(int(event.get("index") or 0), event.get("content_block") or {})
        if kind == "content_block_delta":
            return self._block_delta(int(event.get("index") or 0), event.get("delta") or {})
        if kind == "content_block_stop":
            index = int(event.get("index") or 0)
            pending = self._unstreamed_input.pop(index, None)
            if pending:
                return self._fragment(index, arguments=json.dumps(pending, ensure_ascii=False))
            return None
        if kind == "message_delta":
            delta = event.get("delta") or {}
            self._usage.update(
                {k: v for k, v in (event.get("usage") or {}).items() if v is not None}
            )
            stop_sequence = delta.get("stop_sequence")
            generation = Generation(
                message=AssistantMessage(),
                finish_reason=delta.get("stop_reason"),
                metadata={keys.STOP_SEQUENCE: stop_sequence} if stop_sequence else {},
            )
            return ChatResponse(generations=(generation,))
        if kind == "message_stop":
            return self.finish()
        return None

    def finish(self) -> ChatResponse | None:
        """The usage chunk, unless it was sent already."""
        if self._usage_sent or not self._usage:
            return None
        self._usage_sent = True
        usage, details = usage_from_anthropic(self._usage)
        return ChatResponse(usage=usage, metadata=details)

    def _block_start(self, index: int, block: Mapping[str, Any]) -> ChatResponse | None:
        if block.get("type") == "text" and block.get("text"):
            return _text(str(block["text"]))
        if block.get("type") != "tool_use":
            return None
        self._slots[index] = len(self._slots)
        if block.get("input"):
            # Sent whole at the start; it counts only if no delta follows.
            self._unstreamed_input[index] = dict(block["input"])
        return self._fragment(
            index,
            call_id=str(block.get("id") or ""),
            name=self._names.to_canonical(str(block.get("name") or "")),
        )

    def _block_delta(self, index: int, delta: Mapping[str, Any]) -> ChatResponse | None:
        if delta.get("type") == "text_delta":
            return _text(str(delta.get("text") or ""))
        if delta.get("type") == "input_json_delta" and index in self._slots:
            self._unstreamed_input.pop(index, None)
            partial = str(delta.get("partial_json") or "")
            return self._fragment(index, arguments=partial) if partial else None
        return None

    def _fragment(
        self, index: int, *, call_id: str = "", name: str = "", arguments: str = ""
    ) -> ChatResponse:
        call = ToolCall(id=call_id, name=name, arguments=arguments)
        generation = Generation(
            message=AssistantMessage(tool_calls=(call,)),
            metadata={TOOL_CALL_INDEXES: (self._slots[index],)},
        )
        return ChatResponse(generations=(generation,))


def _text(text: str) -> ChatResponse:
    return ChatResponse(generations=(Generation(message=AssistantMessage(text=text)),))
