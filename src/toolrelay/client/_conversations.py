"""Whose conversation it is: the key a conversation's state is kept under, scoped by tenant.

A conversation id names a conversation within one tenant. Two tenants may pick the same id
(``"c1"``, a ticket number, a chat id handed out per customer), so state kept by id alone
would be shared: one tenant would see the other's history and discovered tools. Every store
keyed by conversation therefore uses :func:`scoped_key`, which passes the id and the
request's tool context through the **scope function**:

- chat memory (:class:`~toolrelay.client.MessageChatMemoryAdvisor`),
- discovered tools (:class:`~toolrelay.client.ToolSearchAdvisor`'s session store),
- the approval state of a turn waiting for a person
  (:class:`~toolrelay.client.ApprovalState`: resuming it under another key is refused).

The default, :func:`tenant_scope`, puts the context's ``tenant_id`` in front of the id, so a
reused id is a new conversation in another tenant. Choose another with
``ChatClient.builder(model).conversation_scope(fn)`` (or the ``conversation_scope`` advisor
parameter of one request), e.g. ``lambda cid, ctx: f"{ctx.tenant_id}/{ctx.user_id}/{cid}"``
to keep users of one tenant apart too, or :func:`unscoped` for ids that are unique already.
"""

from __future__ import annotations

from collections.abc import Callable
from urllib.parse import quote

from toolrelay.client._requests import ChatClientRequest
from toolrelay.exceptions import ConfigurationError
from toolrelay.memory import CONVERSATION_ID
from toolrelay.tools import ToolContext

__all__ = [
    "CONVERSATION_SCOPE",
    "ConversationScope",
    "scoped_key",
    "tenant_scope",
    "turn_conversation",
    "unscoped",
]

CONVERSATION_SCOPE = "conversation_scope"
"""The advisor parameter holding the scope function (the default is :func:`tenant_scope`)."""

ConversationScope = Callable[[str, ToolContext], str]
"""``(conversation_id, tool_context) -> key``: where a conversation's state is kept."""

_TENANT = "tenant:"


def tenant_scope(conversation_id: str, context: ToolContext) -> str:
    """The default scope: the conversation id within the context's ``tenant_id``.

    ``"c1"`` of tenant ``acme`` is kept as ``"tenant:acme:c1"``. Without a tenant the id is
    the key (so single-tenant stores keep their keys); an id that itself starts with
    ``"tenant:"`` is then escaped, so that no request without a tenant can name another
    tenant's conversation. Distinct (tenant, id) pairs always give distinct keys.

    Example:
        >>> tenant_scope("c1", ToolContext(tenant_id="acme"))
        'tenant:acme:c1'
        >>> tenant_scope("c1", ToolContext())
        'c1'
    """
    tenant = context.tenant_id
    if tenant is None or tenant == "":
        if conversation_id.startswith(_TENANT):
            return f"{_TENANT}:{conversation_id}"
        return conversation_id
    # Percent-encoded: the tenant part holds no ":", so the first one after it ends it.
    return f"{_TENANT}{quote(str(tenant), safe='', errors='surrogatepass')}:{conversation_id}"


def unscoped(conversation_id: str, context: ToolContext) -> str:
    """The conversation id alone, for ids unique across tenants already (a UUID per chat)."""
    return conversation_id


def scoped_key(request: ChatClientRequest, conversation_id: str) -> str:
    """The key ``conversation_id`` is kept under for ``request`` (its scope and tool context).

    Raises:
        ConfigurationError: The ``conversation_scope`` parameter is not a function, or it
            returned something other than text.
    """
    scope = request.context.get(CONVERSATION_SCOPE, tenant_scope)
    if not callable(scope):
        raise ConfigurationError(
            f"the {CONVERSATION_SCOPE!r} advisor parameter must be a function "
            f"(conversation_id, tool_context) -> str, not {scope!r}"
        )
    key = scope(conversation_id, ToolContext(request.prompt.options.tool_context))
    if not isinstance(key, str):
        raise ConfigurationError(
            f"the conversation scope {scope!r} gave {key!r} for conversation "
            f"{conversation_id!r}; it must return text"
        )
    return key


def turn_conversation(request: ChatClientRequest) -> str:
    """The scoped key of the conversation ``request`` belongs to (its id may be absent)."""
    return scoped_key(request, str(request.context.get(CONVERSATION_ID) or ""))
