"""What flows through the advisor chain: a request (prompt + context) and a response.

The context is a read-only mapping shared by the advisors of one request: advisor parameters
such as the conversation id (``CONVERSATION_ID``) travel in it, and advisors may add entries
for the advisors outside them (the tool loop records the turn's history there).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import Any

from toolrelay.messages import ChatResponse, Message
from toolrelay.prompt import ChatOptions, Prompt

__all__ = ["ChatClientRequest", "ChatClientResponse"]


@dataclass(frozen=True, kw_only=True)
class ChatClientRequest:
    """A request on its way to the model.

    Attributes:
        prompt: The messages and options the model will get.
        context: Advisor parameters and shared state (read-only).
    """

    prompt: Prompt
    context: Mapping[str, Any] = field(default_factory=dict)

    def __post_init__(self) -> None:
        object.__setattr__(self, "context", MappingProxyType(dict(self.context)))

    def with_prompt(self, prompt: Prompt) -> ChatClientRequest:
        """The same context with another prompt."""
        return ChatClientRequest(prompt=prompt, context=self.context)

    def with_messages(self, messages: Sequence[Message]) -> ChatClientRequest:
        """The same options and context over other messages."""
        return self.with_prompt(self.prompt.with_messages(messages))

    def with_options(self, options: ChatOptions) -> ChatClientRequest:
        """The same messages and context with other options."""
        return self.with_prompt(Prompt(messages=self.prompt.messages, options=options))

    def with_context(self, **updates: Any) -> ChatClientRequest:
        """The same prompt with ``updates`` added to the context."""
        return ChatClientRequest(prompt=self.prompt, context={**self.context, **updates})


@dataclass(frozen=True, kw_only=True)
class ChatClientResponse:
    """The model's answer (or one streamed chunk of it) on its way back out.

    Attributes:
        chat_response: The answer or chunk.
        context: The request's context, plus whatever advisors added on the way back.
    """

    chat_response: ChatResponse
    context: Mapping[str, Any] = field(default_factory=dict)

    def __post_init__(self) -> None:
        object.__setattr__(self, "context", MappingProxyType(dict(self.context)))

    def with_chat_response(self, chat_response: ChatResponse) -> ChatClientResponse:
        """The same context with another response."""
        return ChatClientResponse(chat_response=chat_response, context=self.context)

    def with_context(self, **updates: Any) -> ChatClientResponse:
        """The same response with ``updates`` added to the context."""
        return ChatClientResponse(
            chat_response=self.chat_response, context={**self.context, **updates}
        )
