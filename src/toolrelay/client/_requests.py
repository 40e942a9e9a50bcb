"""What flows through the advisor chain: a request (prompt + context) and a response.

The context is a read-only mapping shared by the advisors of one request: advisor parameters
such as the conversation id (``CONVERSATION_ID``) travel in it, and advisors may add entries
for the advisors outside them. What the library itself reports travels as typed fields: the
tool loop's :class:`~toolrelay.client.ToolLoopReport` (``response.tool_loop``), tool
search's :class:`~toolrelay.toolsearch.ToolSearchReport` (``response.tool_search``) and the
:class:`~toolrelay.client.ApprovalState` of a turn stopped for approval
(``response.approval``); a request resuming such a turn carries its ``resume``.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import Any

from toolrelay.client._deferred_approval import ApprovalState, Resumption
from toolrelay.client._tool_loop import ToolLoopReport
from toolrelay.messages import ChatResponse, Message
from toolrelay.prompt import ChatOptions, Prompt
from toolrelay.toolsearch import ToolSearchReport

__all__ = ["ChatClientRequest", "ChatClientResponse"]


@dataclass(frozen=True, kw_only=True)
class ChatClientRequest:
    """A request on its way to the model.

    Attributes:
        prompt: The messages and options the model will get.
        context: Advisor parameters and shared state (read-only).
        resume: The stopped turn, and the decisions, that this request continues.
    """

    prompt: Prompt
    context: Mapping[str, Any] = field(default_factory=dict)
    resume: Resumption | None = None

    def __post_init__(self) -> None:
        object.__setattr__(self, "context", MappingProxyType(dict(self.context)))

    def with_prompt(self, prompt: Prompt) -> ChatClientRequest:
        """The same context with another prompt."""
        return ChatClientRequest(prompt=prompt, context=self.context, resume=self.resume)

    def with_messages(self, messages: Sequence[Message]) -> ChatClientRequest:
        """The same options and context over other messages."""
        return self.with_prompt(self.prompt.with_messages(messages))

    def with_options(self, options: ChatOptions) -> ChatClientRequest:
        """The same messages and context with other options."""
        return self.with_prompt(Prompt(messages=self.prompt.messages, options=options))

    def with_context(self, **updates: Any) -> ChatClientRequest:
        """The same prompt with ``updates`` added to the context."""
        return ChatClientRequest(
            prompt=self.prompt, context={**self.context, **updates}, resume=self.resume
        )


@dataclass(frozen=True, kw_only=True)
class ChatClientResponse:
    """The model's answer (or one streamed chunk of it) on its way back out.

    Attributes:
        chat_response: The answer or chunk.
        context: The request's context, plus whatever advisors added on the way back.
        tool_loop: What the tool loop did this turn; ``None`` when no loop ran (and on
            streamed chunks but the last).
        tool_search: What tool search did this turn; ``None`` without tool search.
        approval: When the turn stopped for a person's approval, what resuming it needs.
    """

    chat_response: ChatResponse
    context: Mapping[str, Any] = field(default_factory=dict)
    tool_loop: ToolLoopReport | None = None
    tool_search: ToolSearchReport | None = None
    approval: ApprovalState | None = None

    def __post_init__(self) -> None:
        object.__setattr__(self, "context", MappingProxyType(dict(self.context)))

    def with_chat_response(self, chat_response: ChatResponse) -> ChatClientResponse:
        """The same context and reports with another response."""
        return self._with(chat_response, self.context)

    def with_context(self, **updates: Any) -> ChatClientResponse:
        """The same response with ``updates`` added to the context."""
        return self._with(self.chat_response, {**self.context, **updates})

    def _with(self, chat_response: ChatResponse, context: Mapping[str, Any]) -> ChatClientResponse:
        # The constructor, not dataclasses.replace: this runs several times per model call.
        return ChatClientResponse(
            chat_response=chat_response,
            context=context,
            tool_loop=self.tool_loop,
            tool_search=self.tool_search,
            approval=self.approval,
        )
