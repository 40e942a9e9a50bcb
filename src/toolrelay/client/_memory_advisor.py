"""The advisor that gives a conversation its memory.

Before a request it prepends the conversation's stored messages and stores the request's new
(non-system) messages; after it, it stores the model's answer. Where it sits decides what it
sees:

- **Outside the tool loop** (the default order, ``HIGHEST_PRECEDENCE + 200``): once per
  turn. It stores the user's message and the final answer, nothing of the tool rounds.
- **Inside the tool loop** (an order above the tool-calling advisor's, e.g.
  ``HIGHEST_PRECEDENCE + 400``): once per model call. It stores every round: each assistant
  message with tool calls and each tool response message. The tool loop notices a
  :class:`~toolrelay.client._advisor.HistoryAdvisor` after it and then sends each round only
  the new messages (the system messages and the latest tool responses), so nothing is stored
  or sent twice; when the loop ends without another model call (return-direct, a tool-call
  limit), it hands the last tool responses and the final answer to :meth:`remember`.

The conversation is kept under :func:`~toolrelay.client._conversations.scoped_key`: the
id scoped by the tool context's tenant by default, so another tenant reusing the id starts a
conversation of its own.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Mapping, Sequence
from typing import Any

from toolrelay.client._advisor import MEMORY_ADVISOR_ORDER, AdvisorChain
from toolrelay.client._conversations import scoped_key
from toolrelay.client._requests import ChatClientRequest, ChatClientResponse
from toolrelay.client._streaming import StreamAggregator
from toolrelay.exceptions import ConfigurationError
from toolrelay.memory._base import CONVERSATION_ID, ChatMemory
from toolrelay.messages import ChatResponse, Message, SystemMessage

__all__ = ["MessageChatMemoryAdvisor", "answer_message"]


def answer_message(response: ChatResponse) -> Message | None:
    """The message of a response worth remembering.

    The first generation that asks for tool calls (the one the tool loop runs), else the
    first generation; ``None`` when there is no generation.
    """
    for generation in response.generations:
        if generation.message.tool_calls:
            return generation.message
    return response.generations[0].message if response.generations else None


class MessageChatMemoryAdvisor:
    """Keeps a conversation in a :class:`~toolrelay.memory.ChatMemory`.

    Args:
        chat_memory: Where messages are kept (e.g. a ``MessageWindowChatMemory``).
        order: Position in the chain; above the tool-calling advisor's order it runs inside
            the tool loop (see the module docs).
        conversation_id: Used when a request names no conversation; when ``None``, every
            request must name one.
        name: For messages.

    Raises:
        ConfigurationError: (per request) no conversation id is given, neither as the
            ``conversation_id`` advisor parameter nor as a default.
    """

    def __init__(
        self,
        chat_memory: ChatMemory,
        *,
        order: int = MEMORY_ADVISOR_ORDER,
        conversation_id: str | None = None,
        name: str = "chat_memory",
    ) -> None:
        self.order = order
        self.name = name
        self.chat_memory = chat_memory
        self.default_conversation_id = conversation_id

    def __repr__(self) -> str:
        return f"{type(self).__name__}(name={self.name!r}, order={self.order})"

    def conversation_id(self, context: Mapping[str, Any]) -> str:
        """The conversation named in a request's (or response's) ``context``.

        Raises:
            ConfigurationError: No conversation id was given.
        """
        value = context.get(CONVERSATION_ID, self.default_conversation_id)
        if value is None or value == "":
            raise ConfigurationError(
                f"{self.name}: missing advisor parameter {CONVERSATION_ID!r}; pass it with "
                f'.conversation("...") or .advisor_params({CONVERSATION_ID}="...") on the '
                "request, or give the advisor a default conversation_id"
            )
        return str(value)

    def conversation_key_of(self, request: ChatClientRequest) -> str:
        """Where the conversation of ``request`` is kept: its id, scoped (module docs).

        Raises:
            ConfigurationError: No conversation id was given, or the scope is unusable.
        """
        return scoped_key(request, self.conversation_id(request.context))

    async def advise_call(
        self, request: ChatClientRequest, chain: AdvisorChain
    ) -> ChatClientResponse:
        """Add the history, run the rest of the chain, store the answer."""
        key = self.conversation_key_of(request)
        response = await chain.next_call(await self._recall(request, key))
        await self._store_answer(response, key)
        return response

    async def advise_stream(
        self, request: ChatClientRequest, chain: AdvisorChain
    ) -> AsyncIterator[ChatClientResponse]:
        """As :meth:`advise_call`, passing the chunks on; the whole answer is stored."""
        key = self.conversation_key_of(request)
        aggregator = StreamAggregator()
        async for chunk in chain.next_stream(await self._recall(request, key)):
            aggregator.add(chunk)
            yield chunk
        await self._store_answer(aggregator.response(), key)

    async def remember(self, request: ChatClientRequest, messages: Sequence[Message]) -> None:
        """Store ``messages`` in the conversation of ``request`` (used by the tool loop)."""
        if messages:
            await self.chat_memory.add(self.conversation_key_of(request), list(messages))

    async def _recall(self, request: ChatClientRequest, key: str) -> ChatClientRequest:
        """Store the request's new messages and send them after the stored history."""
        history = await self.chat_memory.get(key)
        messages = request.prompt.messages
        system = [m for m in messages if isinstance(m, SystemMessage)]
        new = [m for m in messages if not isinstance(m, SystemMessage)]
        await self.chat_memory.add(key, new)
        return request.with_messages([*system, *history, *new])

    async def _store_answer(self, response: ChatClientResponse, key: str) -> None:
        message = answer_message(response.chat_response)
        if message is not None:
            await self.chat_memory.add(key, [message])
