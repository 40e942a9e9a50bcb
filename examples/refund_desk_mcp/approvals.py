"""The refund desk's approval policy, the gateway's ``[approval] handler``.

A support agent may retry failed refunds: the call is approved when the request names the
agent (the tool context's ``user_id``: the MCP request's ``_meta`` where the client is trusted,
over stdio or on loopback; the verified bearer token's with an ``[auth]`` table). Every
other call that needs approval (forcing a refund to succeeded, topping up a merchant
balance, pausing a payment channel, cancelling a refund) is for finance administrators and
is refused with a reason the model passes on.
"""

from __future__ import annotations

from toolrelay.execution import Approve, Deny, ToolInvocation

AGENT_MAY_RUN = frozenset({"refund.retry_failed_order"})
"""Tools a support agent's call is approved for."""


def decide(request: ToolInvocation, /) -> Approve | Deny:
    """Approve a named agent's retries; refuse everything else that needs approval."""
    name = request.tool.definition.name
    if name not in AGENT_MAY_RUN:
        return Deny(f"{name} needs a finance administrator; tell the user it was not done.")
    if not request.context.user_id:
        return Deny(f"{name} needs a signed-in support agent; the request names no user.")
    return Approve()
