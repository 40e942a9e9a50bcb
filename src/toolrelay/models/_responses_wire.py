"""The OpenAI Responses wire format: input items in, responses and stream events out.

Pure functions over plain JSON data (the SDK's objects are dumped first), so the format is
tested without a network. :class:`~toolrelay.models.OpenAIResponsesModel` does the sending.

Mapping:

- The history becomes the request's ``input``, one message at a time and in order, in
  :func:`messages_to_input` (the one place a message type meets its items):
  :class:`~toolrelay.messages.SystemMessage` → a ``system`` message item, kept where it
  stands rather than lifted into ``instructions``; :class:`~toolrelay.messages.UserMessage`
  → ``user``; :class:`~toolrelay.messages.AssistantMessage` → an ``assistant`` message item
  for its text, then one ``function_call`` item per call; each
  :class:`~toolrelay.messages.ToolResponse` → one ``function_call_output`` item. Call ids pair
  calls with outputs (made consistent first, as for every provider).
- ``function_call_output`` has no error flag, so a failed call's output is prefixed, as in
  Chat Completions (``DEFAULT_ERROR_PREFIX``).
- Tools go out as flat ``function`` tools (``name``, ``description``, ``parameters`` and
  ``strict`` side by side, with no ``function`` object around them) under their provider-safe
  names.
- ``usage.input_tokens`` and ``output_tokens`` map to :class:`~toolrelay.messages.Usage`; the
  cached input tokens (``input_tokens_details.cached_tokens``) and the reasoning tokens go to
  the response metadata (``CACHE_READ_TOKENS``, ``REASONING_TOKENS``), as for Chat
  Completions.
- A generation's ``finish_reason`` is the response's ``status`` (``"completed"``), or the
  reason it is incomplete (``"max_output_tokens"``, ``"content_filter"``).
- ``reasoning`` items of the output are not kept.
- A :class:`~toolrelay.messages.ToolChangeMessage` becomes an ``additional_tools`` item
  (``role: "developer"``) where it stands, its added tools as flat ``function`` tools, so
  the request's ``tools`` (the start of the cached prefix) never change. The API has no item
  that retires a tool: removals are not sent, a removed tool is simply not added again, and
  the tool loop answers a call of it as it answers any tool it does not offer. A change
  that only removes sends nothing.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from toolrelay.exceptions import ModelAPIError
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
from toolrelay.models._openai_wire import (
    DEFAULT_ERROR_PREFIX,
    WireTools,
    arguments_text,
    function_definition,
    response_metadata,
    sent_arguments,
    usage_from_openai,
)
from toolrelay.models._provider_errors import status_error
from toolrelay.models._tool_changes import change_definition
from toolrelay.models._tool_choice import ToolChoiceSettings
from toolrelay.models._tool_names import ToolNameMap
from toolrelay.tools._base import ToolDefinition

__all__ = [
    "ResponsesStreamParser",
    "messages_to_input",
    "response_to_chat",
    "tool_choice_to_responses",
    "tools_to_responses",
    "usage_from_responses",
]

_PROVIDER = "openai"


def messages_to_input(
    messages: Sequence[Message],
    *,
    error_prefix: str = DEFAULT_ERROR_PREFIX,
    strict: bool = False,
) -> list[dict[str, Any]]:
    """The ``input`` items of a request body (``strict``: the tools' strict mode)."""
    items: list[dict[str, Any]] = []
    for message in consistent_call_ids(messages):
        match message:
            case SystemMessage(text=text):
                # In place rather than in ``instructions``: a system message later in a history
                # keeps its position, and the input stays the one list every message maps into.
                items.append({"role": "system", "content": text})
            case UserMessage(text=text):
                items.append({"role": "user", "content": text})
            case AssistantMessage(text=text, tool_calls=calls):
                if text:
                    items.append({"role": "assistant", "content": text})
                items.extend(
                    {
                        "type": "function_call",
                        "call_id": call.id,
                        "name": ToolNameMap.to_provider(call.name),
                        "arguments": sent_arguments(call),
                    }
                    for call in calls
                )
            case ToolResponseMessage(responses=responses):
                items.extend(
                    {
                        "type": "function_call_output",
                        "call_id": r.id,
                        "output": f"{error_prefix}{r.data}" if r.is_error else r.data,
                    }
                    for r in responses
                )
            case ToolChangeMessage(added=added) if added:
                tools = tools_to_responses([change_definition(d) for d in added], strict=strict)
                items.append({"type": "additional_tools", "role": "developer", "tools": tools})
    return items


def tools_to_responses(
    definitions: Sequence[ToolDefinition], *, strict: bool = False
) -> list[dict[str, Any]]:
    """The ``tools`` of a request body.

    ``strict`` is always sent: the SDK's type requires it, and the API's default is ``true``,
    which a schema outside strict mode's subset would fail.

    Raises:
        ConfigurationError: ``strict`` and a schema strict mode cannot express (the tool is
            named).
    """
    return [
        {"type": "function", **function_definition(d, strict=strict), "strict": strict}
        for d in definitions
    ]


def tool_choice_to_responses(settings: ToolChoiceSettings) -> str | dict[str, Any] | None:
    """The ``tool_choice`` of a request body, or ``None`` to leave the API's default."""
    if settings.mode == "raw":
        return dict(settings.raw or {})
    if settings.mode == "tool" and settings.tool is not None:
        return {"type": "function", "name": ToolNameMap.to_provider(settings.tool)}
    return settings.mode


def usage_from_responses(data: Mapping[str, Any] | None) -> tuple[Usage, dict[str, Any]]:
    """The usage of a response, and the metadata entries of its token details."""
    return usage_from_openai(data, fields=("input_tokens", "output_tokens"))


def response_to_chat(data: Mapping[str, Any], tools: WireTools) -> ChatResponse:
    """The :class:`ChatResponse` of a complete ``response`` object.

    Raises:
        ModelAPIError: The response failed (``status`` ``"failed"``).
    """
    _raise_failure(data)
    texts: list[str] = []
    calls: list[ToolCall] = []
    extra: dict[str, Any] = {}
    for item in data.get("output") or ():
        if item.get("type") == "function_call":
            calls.append(
                tools.call(
                    item.get("call_id") or f"call_{len(calls)}",
                    item.get("name") or "",
                    arguments_text(item.get("arguments")),
                )
            )
        elif item.get("type") == "message":
            for part in item.get("content") or ():
                if part.get("type") == "output_text":
                    texts.append(part.get("text") or "")
                elif part.get("type") == "refusal" and part.get("refusal"):
                    extra[keys.REFUSAL] = part["refusal"]
    generation = Generation(
        message=AssistantMessage(text="".join(texts) if texts else None, tool_calls=tuple(calls)),
        finish_reason=_finish_reason(data),
        metadata=extra,
    )
    usage, details = usage_from_responses(data.get("usage"))
    return ChatResponse(
        generations=(generation,), usage=usage, metadata={**response_metadata(data), **details}
    )


def _finish_reason(data: Mapping[str, Any]) -> str | None:
    reason = (data.get("incomplete_details") or {}).get("reason")
    return str(reason) if reason else data.get("status")


def _raise_failure(data: Mapping[str, Any]) -> None:
    if data.get("status") != "failed":
        return
    error = data.get("error") or {}
    raise _error(error.get("code"), error.get("message") or "the response failed")


def _error(code: Any, message: str) -> ModelAPIError:
    return status_error(_PROVIDER, None, f"{code}: {message}" if code else message)


class ResponsesStreamParser:
    """Turns Responses stream events into toolrelay chunks.

    Each ``function_call`` output item becomes a call, numbered in order of appearance: its
    id and name when the item is added, its ``function_call_arguments.delta`` pieces as
    argument fragments. In strict mode the arguments are held back and sent whole when the
    item is done, because dropping the nulls strict mode added needs all of them; an item whose
    arguments never came in deltas sends them then too. The usage, the finish reason and the
    response's id come with ``response.completed`` (or ``response.incomplete``); an ``error``
    event or ``response.failed`` raises :class:`~toolrelay.exceptions.ModelAPIError`.
    """

    def __init__(self, tools: WireTools) -> None:
        self._tools = tools
        self._slots: dict[int, int] = {}  # output index → call index
        self._streamed: set[int] = set()  # output indexes whose arguments came in deltas
        self._metadata_sent = False

    def parse(self, event: Mapping[str, Any]) -> ChatResponse | None:
        """The chunk of one event, or ``None`` for events that carry nothing."""
        kind = event.get("type")
        index = int(event.get("output_index") or 0)
        if kind == "response.output_text.delta":
            text = str(event.get("delta") or "")
            return ChatResponse(generations=(_generation(text=text),)) if text else None
        if kind == "response.refusal.done":
            generation = _generation(metadata={keys.REFUSAL: event.get("refusal") or ""})
            return ChatResponse(generations=(generation,))
        if kind == "response.output_item.added":
            item = event.get("item") or {}
            if item.get("type") != "function_call":
                return None
            self._slots[index] = len(self._slots)
            name = self._tools.names.to_canonical(str(item.get("name") or ""))
            return self._fragment(index, call_id=str(item.get("call_id") or ""), name=name)
        if kind == "response.function_call_arguments.delta":
            delta = str(event.get("delta") or "")
            if self._tools.strict or index not in self._slots or not delta:
                return None
            self._streamed.add(index)
            return self._fragment(index, arguments=delta)
        if kind == "response.output_item.done":
            return self._item_done(index, event.get("item") or {})
        if kind in ("response.created", "response.in_progress"):
            return self._metadata(event.get("response") or {})
        if kind in ("response.completed", "response.incomplete", "response.failed"):
            return self._end(event.get("response") or {})
        if kind == "error":
            raise _error(event.get("code"), str(event.get("message") or "the stream failed"))
        return None

    def finish(self) -> ChatResponse | None:
        """Nothing: every chunk is sent as its event arrives."""
        return None

    def _item_done(self, index: int, item: Mapping[str, Any]) -> ChatResponse | None:
        if item.get("type") != "function_call" or index not in self._slots:
            return None
        if index in self._streamed:
            return None
        arguments = arguments_text(item.get("arguments"))
        if self._tools.strict:
            name = str(item.get("name") or "")
            arguments = self._tools.call("", name, arguments).arguments
        return self._fragment(index, arguments=arguments) if arguments else None

    def _metadata(self, response: Mapping[str, Any]) -> ChatResponse | None:
        metadata = response_metadata(response)
        if self._metadata_sent or not metadata:
            return None
        self._metadata_sent = True
        return ChatResponse(metadata=metadata)

    def _end(self, response: Mapping[str, Any]) -> ChatResponse:
        _raise_failure(response)
        usage, details = usage_from_responses(response.get("usage"))
        first = self._metadata(response)
        metadata = {**(first.metadata if first else {}), **details}
        generation = _generation(finish_reason=_finish_reason(response))
        return ChatResponse(generations=(generation,), usage=usage, metadata=metadata)

    def _fragment(
        self, index: int, *, call_id: str = "", name: str = "", arguments: str = ""
    ) -> ChatResponse:
        generation = _generation(
            calls=(ToolCall(id=call_id, name=name, arguments=arguments),),
            metadata={TOOL_CALL_INDEXES: (self._slots[index],)},
        )
        return ChatResponse(generations=(generation,))


def _generation(
    *,
    text: str | None = None,
    calls: tuple[ToolCall, ...] = (),
    finish_reason: str | None = None,
    metadata: Mapping[str, Any] | None = None,
) -> Generation:
    return Generation(
        message=AssistantMessage(text=text, tool_calls=calls),
        finish_reason=finish_reason,
        metadata=metadata or {},
    )
