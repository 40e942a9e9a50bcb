"""Authorization: whether a call may run at all, as the outermost step of its pipeline.

:class:`AuthorizationInterceptor` asks an :data:`Authorizer` about every call before anything
else sees it: ``True`` lets the call go on, a string denies it with that text (status
``denied``; an empty string gets the standard denial text), anything else denies it with the
standard text. A manager's ``authorize=`` puts one first in its pipeline, so a forbidden
call is never replayed from the idempotency store nor put before a person for approval::

    def own_tenant_only(context, tool, arguments):
        return str(arguments.get("ticket_id", "")).startswith(f"{context.tenant_id}-")

    manager = ToolCallingManager(authorize=own_tenant_only, approval=ApprovalInterceptor())

The MCP gateway and the bridges put one on each call from their ``authorize`` option.
"""

from __future__ import annotations

import inspect
from collections.abc import Awaitable, Callable, Collection, Mapping
from typing import Any, TypeAlias

from toolrelay.execution import _feedback as feedback
from toolrelay.execution._interception import Proceed, ToolInvocation, answer
from toolrelay.execution._result import ToolCallOutcome
from toolrelay.tools._base import Tool, ToolContext

__all__ = ["AuthorizationInterceptor", "Authorizer"]

Authorizer: TypeAlias = Callable[
    [ToolContext, Tool, Mapping[str, Any]], bool | str | Awaitable[bool | str]
]
"""Whether a call may run: ``True``, or ``False``/a reason to deny it (sync or async).

Called with the tool context, the tool and the validated arguments.
"""


class AuthorizationInterceptor:
    """Denies every call its :data:`Authorizer` does not allow (see the module docs).

    Args:
        authorize: Asked about every call but those of ``exempt`` tools.
        exempt: Tools never asked about (the tool search's own ``tool_search``), compared
            by identity.

    An authorizer that raises aborts the round, as any interceptor's exception does: deny by
    answering.
    """

    def __init__(self, authorize: Authorizer, *, exempt: Collection[Tool] = ()) -> None:
        self.authorize = authorize
        self._exempt = frozenset(id(tool) for tool in exempt)
        self.exempt = tuple(exempt)  # keeps the tools, so their ids stay theirs

    async def __call__(self, invocation: ToolInvocation, proceed: Proceed, /) -> ToolCallOutcome:
        """Let the call go on, or answer it with the denial."""
        if id(invocation.tool) in self._exempt:
            return await proceed(invocation)
        verdict = self.authorize(invocation.context, invocation.tool, invocation.arguments.values)
        if inspect.isawaitable(verdict):
            verdict = await verdict
        if verdict is True:
            return await proceed(invocation)
        reason = verdict if isinstance(verdict, str) else ""
        return answer(invocation, reason or feedback.denied(invocation.tool_name))
