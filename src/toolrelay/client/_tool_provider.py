"""Where the tool loop takes a turn's tools from: a :class:`ToolProvider`.

The loop opens each turn with its provider and then asks the turn, never anything else:

1. before each model call, :meth:`TurnTools.prepare` gives that call's request (the tools the
   model is shown, and any text the provider adds);
2. before each round, :meth:`TurnTools.round` says what the round's calls may run with
   (:class:`RoundTools`: the tools calls resolve to, interceptors for this round only, and
   the answer to a name none of them answers to; a proxy tool such as ``call_tool`` is a
   :class:`~toolrelay.execution.ForwardingTool` among them);
3. after each round, :meth:`TurnTools.after_round` hears how it went;
4. at the end, :meth:`TurnTools.finish` may add its report to the final response.

:class:`RequestTools`, the default, offers the request's own tools. The searching provider
(:class:`~toolrelay.client.ToolSearch`) offers progressive disclosure; others are yours to
write. Every loop option (manager, interceptors, limits, return-direct, memory order) is the
loop's, so it holds whichever provider offers the tools.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Protocol, runtime_checkable

from toolrelay.client._requests import ChatClientRequest, ChatClientResponse
from toolrelay.execution import ToolCallingManager, ToolCallInterceptor, ToolExecutionResult
from toolrelay.messages import ChatResponse
from toolrelay.models import ChatModel
from toolrelay.tools import Tool

__all__ = ["RequestTools", "RoundTools", "ToolProvider", "TurnTools"]


@dataclass(frozen=True, kw_only=True)
class RoundTools:
    """What one round's calls may run with.

    Attributes:
        tools: The tools the calls resolve to (besides the manager's own).
        interceptors: Steps around each call of this round only, outside the manager's own
            (a call they refuse never reaches its approval, idempotency or audit).
        unavailable: The answer to a called name none of ``tools`` answers to, given that
            name (tool search's "not available"); calls then resolve among ``tools`` only.
            ``None``: the manager's unknown-tool feedback.
    """

    tools: tuple[Tool, ...]
    interceptors: tuple[ToolCallInterceptor, ...] = ()
    unavailable: Callable[[str], str] | None = None


@runtime_checkable
class TurnTools(Protocol):
    """A provider's side of one turn (see the module docs for when each method is asked)."""

    def prepare(self, request: ChatClientRequest, *, model_call: int) -> ChatClientRequest:
        """The request of model call number ``model_call`` (1-based)."""
        ...

    def round(self, request: ChatClientRequest, response: ChatResponse) -> RoundTools:
        """What the calls of ``response`` may run with; ``request`` is the call's request."""
        ...

    async def after_round(self, result: ToolExecutionResult) -> None:
        """The round's result (also a partial one, when a call limit stopped the round)."""
        ...

    def finish(self, response: ChatClientResponse) -> ChatClientResponse:
        """The final response, with whatever the turn reports."""
        ...


@runtime_checkable
class ToolProvider(Protocol):
    """Offers the tool loop its tools, one turn at a time."""

    async def open(
        self,
        request: ChatClientRequest,
        *,
        owner: str,
        manager: ToolCallingManager,
        model: ChatModel | None,
    ) -> TurnTools:
        """Open a turn for ``request`` (its ``tool_names`` resolved).

        ``owner`` names the loop, for errors; ``manager`` runs the turn's rounds (its result
        bound is what a tool of the provider's own fits its answers to); ``model`` is the
        chat model the turn's requests go to (the client's), ``None`` when the loop runs on
        a chain without one.
        """
        ...


class RequestTools:
    """The default provider: every model call is shown the request's own tools."""

    async def open(
        self,
        request: ChatClientRequest,
        *,
        owner: str,
        manager: ToolCallingManager,
        model: ChatModel | None,
    ) -> TurnTools:
        """The request's tools, for the whole turn."""
        return _REQUEST_TURN

    def __repr__(self) -> str:
        return "RequestTools()"


class _RequestTurn:
    def prepare(self, request: ChatClientRequest, *, model_call: int) -> ChatClientRequest:
        return request

    def round(self, request: ChatClientRequest, response: ChatResponse) -> RoundTools:
        return RoundTools(tools=request.prompt.options.tools)

    async def after_round(self, result: ToolExecutionResult) -> None:
        return None

    def finish(self, response: ChatClientResponse) -> ChatClientResponse:
        return response


_REQUEST_TURN = _RequestTurn()
