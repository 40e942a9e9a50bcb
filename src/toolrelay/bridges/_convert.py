"""What the converters of every bridge share: the manager a converted tool runs through.

Also what every bridge's adapters do alike: a framework's listing of a tool, made once
(:class:`Listings`), a framework's tool's result as text (:func:`result_text`), a run object
as a tool context (:func:`mapping_context`).

A converted tool runs through a :class:`~toolrelay.execution.ToolCallingManager` (argument
validation, timeout, failures as feedback, and the guards its tool declares), given or built
from the same guard options as :class:`~toolrelay.bridges.BridgeSearch` takes. A tool that
requires approval needs ``approval=``: a handler decides in toolrelay, and
``ApprovalInterceptor()`` (no handler) lets a person decide through the framework's own way
of pausing a run, where it has one.
"""

from __future__ import annotations

import dataclasses
import functools
import json
from collections.abc import Callable, Mapping
from typing import Generic, TypeVar, Unpack

from toolrelay.execution import (
    GuardOptions,
    Proceed,
    ToolCallingManager,
    ToolCallInterceptor,
    ToolCallOutcome,
    ToolInvocation,
)
from toolrelay.execution._manager import configured_manager
from toolrelay.execution._pipeline import check_guard_options, given_guards
from toolrelay.execution._result import ApprovalDecision
from toolrelay.tools import Tool, ToolContext

__all__ = ["Listings", "decided", "manager_for", "mapping_context", "person_decides", "result_text"]

_Listing = TypeVar("_Listing")

_MAX_LISTINGS = 100_000  # tools whose framework listing is kept


@functools.cache
def _plain() -> ToolCallingManager:
    """One shared manager with no options: validation, timeouts and failures as feedback."""
    return ToolCallingManager()


def manager_for(
    tool: Tool,
    *,
    owner: str,
    tool_calling_manager: ToolCallingManager | None = None,
    **guards: Unpack[GuardOptions],
) -> ToolCallingManager:
    """The manager a converted ``tool`` runs through, checked against the tool.

    ``tool_calling_manager``, or one built from the guard options (the shared plain one when
    none is given: without ``idempotency=``, every manager records keys in the process's
    store, so converting a tool twice never runs a keyed call twice).

    Raises:
        ConfigurationError: A manager is given with guard options, a guard option is
            unknown, or ``tool`` requires approval and the manager has no approval configured.
    """
    if tool_calling_manager is None and not given_guards(guards):
        check_guard_options(guards, owner=owner)
        manager = _plain()
    else:
        manager = configured_manager(tool_calling_manager, owner=owner, **guards)
    manager.check_tools((tool,), owner=owner)
    return manager


def person_decides(manager: ToolCallingManager, tool: Tool) -> bool:
    """Whether a call of ``tool`` waits for a person: the framework pauses the run for it.

    It does when the manager's approval step asks about the tool and has no handler to decide.
    """
    approval = manager.guards.approval
    return approval is not None and approval.handler is None and approval.needs_approval(tool)


def decided(decision: ApprovalDecision) -> ToolCallInterceptor:
    """Hands the approval step a person's decision taken through the framework."""

    async def decided(invocation: ToolInvocation, proceed: Proceed, /) -> ToolCallOutcome:
        return await proceed(dataclasses.replace(invocation, decision=decision))

    return decided


def result_text(value: object) -> str:
    """What a framework's tool returned, as a toolrelay tool's answer: text, else JSON."""
    return value if isinstance(value, str) else json.dumps(value, ensure_ascii=False, default=str)


def mapping_context(values: object) -> ToolContext:
    """A framework's run object as a tool context: itself, a mapping's copy, else empty."""
    if isinstance(values, ToolContext):
        return values
    if isinstance(values, Mapping):
        return ToolContext(values)
    return ToolContext()


class Listings(Generic[_Listing]):
    """Each tool's listing for a framework, made once: frameworks ask for the tools every step.

    Args:
        make: Makes a tool's listing.
    """

    def __init__(self, make: Callable[[Tool], _Listing]) -> None:
        self._make = make
        self._made: dict[int, tuple[Tool, _Listing]] = {}

    def __call__(self, tool: Tool) -> _Listing:
        """``tool``'s listing."""
        known = self._made.get(id(tool))
        if known is not None and known[0] is tool:
            return known[1]
        listing = self._make(tool)
        if len(self._made) >= _MAX_LISTINGS:
            self._made.clear()  # tools replaced many times over: start again
        self._made[id(tool)] = (tool, listing)
        return listing
