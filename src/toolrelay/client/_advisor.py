"""Advisors and the ordered chain that runs them around a model call.

An advisor wraps the rest of the chain: ``advise_call(request, chain)`` may change the
request, must call ``chain.next_call(request)`` (or not, to short-circuit), and may change the
response. Advisors run sorted by ``order``, lowest first, so a lower order sits *outside* a
higher one; the last link of the chain calls the model. Streaming works the same way with
``advise_stream`` and ``chain.next_stream``.

Default orders::

    HIGHEST_PRECEDENCE          outermost
    HIGHEST_PRECEDENCE + 200    MessageChatMemoryAdvisor (sees the turn once)
    HIGHEST_PRECEDENCE + 300    ToolCallingAdvisor (the tool loop)
    anything larger             inside the loop: runs once per model call

The chain is immutable: ``next_call`` can be called again, and ``chain.copy(excluding=self)``
gives a chain of just the advisors after ``self``, which is how a looping advisor calls the
model again without calling itself.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Awaitable, Callable, Sequence
from typing import Protocol, runtime_checkable

from toolrelay.client._requests import ChatClientRequest, ChatClientResponse
from toolrelay.client._streaming import StreamAggregator
from toolrelay.exceptions import ConfigurationError
from toolrelay.messages import Message
from toolrelay.models._base import ChatModel, ensure_tools_supported

__all__ = [
    "HIGHEST_PRECEDENCE",
    "LOWEST_PRECEDENCE",
    "MEMORY_ADVISOR_ORDER",
    "TOOL_CALLING_ADVISOR_ORDER",
    "Advisor",
    "AdvisorChain",
    "BaseAdvisor",
    "CallAdvisor",
    "HistoryAdvisor",
    "StreamAdvisor",
]

HIGHEST_PRECEDENCE = -(2**31)
"""The smallest order: the outermost position."""
LOWEST_PRECEDENCE = 2**31 - 1
"""The largest order: the innermost position, right before the model."""
MEMORY_ADVISOR_ORDER = HIGHEST_PRECEDENCE + 200
"""Default order of the memory advisor: outside the tool loop."""
TOOL_CALLING_ADVISOR_ORDER = HIGHEST_PRECEDENCE + 300
"""Default order of the tool-calling advisor."""


class Advisor(Protocol):
    """Anything in the chain: a name for messages and an order for sorting."""

    @property
    def name(self) -> str:
        """A short name for error messages and logs."""
        ...

    @property
    def order(self) -> int:
        """Lower runs first (outside); see the module docs."""
        ...


@runtime_checkable
class CallAdvisor(Advisor, Protocol):
    """An advisor around non-streaming calls."""

    async def advise_call(
        self, request: ChatClientRequest, chain: AdvisorChain
    ) -> ChatClientResponse:
        """Handle ``request``, normally by calling ``chain.next_call``."""
        ...


@runtime_checkable
class StreamAdvisor(Advisor, Protocol):
    """An advisor around streaming calls."""

    def advise_stream(
        self, request: ChatClientRequest, chain: AdvisorChain
    ) -> AsyncIterator[ChatClientResponse]:
        """Handle ``request``, normally by passing on the chunks of ``chain.next_stream``."""
        ...


@runtime_checkable
class HistoryAdvisor(Protocol):
    """An advisor that keeps the conversation and adds it to every request it sees.

    When one sits inside the tool loop (a higher order than the tool-calling advisor), the
    loop sends it only the new messages of each round, and hands it, through :meth:`remember`,
    the messages of a turn's last round that never went through it (the tool results of a
    return-direct round and the answer built from them).
    """

    async def remember(self, request: ChatClientRequest, messages: Sequence[Message]) -> None:
        """Store ``messages`` in the conversation of ``request``."""
        ...


ModelCall = Callable[[ChatClientRequest], Awaitable[ChatClientResponse]]
ModelStream = Callable[[ChatClientRequest], AsyncIterator[ChatClientResponse]]


class AdvisorChain:
    """The advisors still to run for one request, then the model.

    Args:
        advisors: The advisors; they are sorted by ``order`` (ties keep their given order).
        call_model: The last link for calls.
        stream_model: The last link for streams.
        model: The chat model the last links call, when there is one: what an advisor asks
            about the model of its requests (the tool loop's provider, its tool channels).

    Attributes:
        model: As given.
    """

    def __init__(
        self,
        advisors: Sequence[Advisor],
        *,
        call_model: ModelCall,
        stream_model: ModelStream,
        model: ChatModel | None = None,
    ) -> None:
        self._all = tuple(sorted(advisors, key=lambda a: a.order))
        self._start = 0
        self._call_model = call_model
        self._stream_model = stream_model
        self.model = model

    @classmethod
    def for_model(cls, model: ChatModel, advisors: Sequence[Advisor]) -> AdvisorChain:
        """A chain whose last link calls ``model`` (after checking it can take the tools)."""

        async def call_model(request: ChatClientRequest) -> ChatClientResponse:
            ensure_tools_supported(model, request.prompt)
            response = await model.call(request.prompt)
            return ChatClientResponse(chat_response=response, context=request.context)

        async def stream_model(request: ChatClientRequest) -> AsyncIterator[ChatClientResponse]:
            ensure_tools_supported(model, request.prompt)
            async for chunk in model.stream(request.prompt):
                yield ChatClientResponse(chat_response=chunk, context=request.context)

        return cls(advisors, call_model=call_model, stream_model=stream_model, model=model)

    @property
    def advisors(self) -> tuple[Advisor, ...]:
        """The advisors this chain still runs, outermost first."""
        return self._all[self._start :]

    def _from(self, start: int) -> AdvisorChain:
        chain = AdvisorChain.__new__(AdvisorChain)
        chain._all = self._all
        chain._start = start
        chain._call_model = self._call_model
        chain._stream_model = self._stream_model
        chain.model = self.model
        return chain

    def copy(self, *, excluding: Advisor) -> AdvisorChain:
        """A chain of the advisors that come after ``excluding``, then the model.

        Raises:
            ConfigurationError: ``excluding`` is not in this chain.
        """
        for position, advisor in enumerate(self._all):
            if advisor is excluding:
                return self._from(position + 1)
        raise ConfigurationError(f"advisor {excluding.name!r} is not in this chain")

    async def next_call(self, request: ChatClientRequest) -> ChatClientResponse:
        """Run the next call advisor with the rest of the chain, or the model at the end."""
        for position in range(self._start, len(self._all)):
            advisor = self._all[position]
            if isinstance(advisor, CallAdvisor):
                return await advisor.advise_call(request, self._from(position + 1))
        return await self._call_model(request)

    def next_stream(self, request: ChatClientRequest) -> AsyncIterator[ChatClientResponse]:
        """Run the next stream advisor with the rest of the chain, or the model at the end."""
        for position in range(self._start, len(self._all)):
            advisor = self._all[position]
            if isinstance(advisor, StreamAdvisor):
                return advisor.advise_stream(request, self._from(position + 1))
        return self._stream_model(request)


class BaseAdvisor:
    """An advisor made of a ``before`` and an ``after`` step, for calls and streams alike.

    Subclasses override :meth:`before` and/or :meth:`after`. When streaming, chunks pass
    through unchanged and ``after`` receives the whole answer once the stream is exhausted
    (its return value is then unused: the chunks are already gone).

    Args:
        order: Position in the chain (lower is outer).
        name: Defaults to the class name.
    """

    def __init__(self, *, order: int = 0, name: str | None = None) -> None:
        self.order = order
        self.name = name or type(self).__name__

    async def before(self, request: ChatClientRequest, chain: AdvisorChain) -> ChatClientRequest:
        """Change the request on the way in (default: unchanged)."""
        return request

    async def after(self, response: ChatClientResponse, chain: AdvisorChain) -> ChatClientResponse:
        """Change the response on the way out (default: unchanged)."""
        return response

    async def advise_call(
        self, request: ChatClientRequest, chain: AdvisorChain
    ) -> ChatClientResponse:
        """``before``, the rest of the chain, ``after``."""
        request = await self.before(request, chain)
        response = await chain.next_call(request)
        return await self.after(response, chain)

    async def advise_stream(
        self, request: ChatClientRequest, chain: AdvisorChain
    ) -> AsyncIterator[ChatClientResponse]:
        """``before``, the chunks of the rest of the chain, ``after`` on the whole answer."""
        request = await self.before(request, chain)
        aggregator = StreamAggregator()
        async for chunk in chain.next_stream(request):
            aggregator.add(chunk)
            yield chunk
        await self.after(aggregator.response(), chain)

    def __repr__(self) -> str:
        return f"{type(self).__name__}(name={self.name!r}, order={self.order})"
