"""An advisor that records what passes through it, for testing advisor order and loops."""

from __future__ import annotations

from collections.abc import AsyncIterator

from toolrelay.client._advisor import AdvisorChain
from toolrelay.client._requests import ChatClientRequest, ChatClientResponse

__all__ = ["RecordingAdvisor"]


class RecordingAdvisor:
    """Passes requests and responses on unchanged and records them.

    Args:
        name: Written to ``log`` on every request, so several recorders show their order.
        order: Position in the chain.
        log: A list shared between recorders; each request appends ``name``.

    Attributes:
        requests: Every request seen, in order.
        responses: Every response (call) or chunk (stream) seen, in order.
    """

    def __init__(self, name: str, order: int, log: list[str] | None = None) -> None:
        self.name = name
        self.order = order
        self.log = log if log is not None else []
        self.requests: list[ChatClientRequest] = []
        self.responses: list[ChatClientResponse] = []

    async def advise_call(
        self, request: ChatClientRequest, chain: AdvisorChain
    ) -> ChatClientResponse:
        """Record, then pass on."""
        self.requests.append(request)
        self.log.append(self.name)
        response = await chain.next_call(request)
        self.responses.append(response)
        return response

    async def advise_stream(
        self, request: ChatClientRequest, chain: AdvisorChain
    ) -> AsyncIterator[ChatClientResponse]:
        """Record, then pass every chunk on."""
        self.requests.append(request)
        self.log.append(self.name)
        async for chunk in chain.next_stream(request):
            self.responses.append(chunk)
            yield chunk

    def __repr__(self) -> str:
        return f"RecordingAdvisor(name={self.name!r}, order={self.order})"
