"""Conversations are kept per tenant: a reused id is a new conversation for another tenant."""

from __future__ import annotations

import json

import pytest
from hypothesis import given
from hypothesis import strategies as st

from tests.search_only import SEARCH_ONLY
from toolrelay.client import (
    ChatClient,
    MessageChatMemoryAdvisor,
    ToolSearchAdvisor,
    tenant_scope,
    unscoped,
)
from toolrelay.client._conversations import CONVERSATION_SCOPE
from toolrelay.exceptions import ConfigurationError
from toolrelay.memory import MessageWindowChatMemory
from toolrelay.messages import ToolResponseMessage, UserMessage
from toolrelay.prompt import Prompt
from toolrelay.search._bm25 import BM25ToolIndex
from toolrelay.testing import FunctionModel, text_response, tool_call_response
from toolrelay.tools import ToolContext, tool


@tool(name="payments.refund")
def refund(payment_id: str) -> str:
    """Refund a card payment to the customer."""
    return f"refunded {payment_id}"


@tool(name="tickets.open")
def open_ticket(title: str) -> str:
    """Open a support ticket."""
    return f"opened {title}"


TENANTS = st.one_of(st.none(), st.text(max_size=6), st.integers(-3, 3))
IDS = st.text(max_size=12)


@given(st.tuples(TENANTS, IDS), st.tuples(TENANTS, IDS))
def test_distinct_tenant_and_id_pairs_never_share_a_key(
    first: tuple[object, str], second: tuple[object, str]
) -> None:
    def same_tenant(a: object, b: object) -> bool:
        # No tenant and an empty one are the same; 3 and "3" name the same tenant.
        return ("" if a is None else str(a)) == ("" if b is None else str(b))

    (tenant_a, id_a), (tenant_b, id_b) = first, second
    key_a = tenant_scope(id_a, ToolContext(tenant_id=tenant_a))
    key_b = tenant_scope(id_b, ToolContext(tenant_id=tenant_b))
    assert (key_a == key_b) == (same_tenant(tenant_a, tenant_b) and id_a == id_b)


def test_keys_read_as_the_tenant_then_the_id() -> None:
    assert tenant_scope("c1", ToolContext(tenant_id="acme")) == "tenant:acme:c1"
    assert tenant_scope("c1", ToolContext(tenant_id="a:b")) == "tenant:a%3Ab:c1"
    assert tenant_scope("c1", ToolContext()) == "c1"  # single-tenant keys stay as they were
    # Without a tenant, no id can name a tenant's conversation.
    assert tenant_scope("tenant:acme:c1", ToolContext()) == "tenant::tenant:acme:c1"


def echo_history(prompt: Prompt) -> object:
    """Answers with every user message it was sent, so a test sees what history came along."""
    return text_response(" | ".join(m.text for m in prompt.messages if isinstance(m, UserMessage)))


def memory_client(**scope: object) -> ChatClient:
    builder = ChatClient.builder(FunctionModel(echo_history)).default_advisors(
        MessageChatMemoryAdvisor(MessageWindowChatMemory())
    )
    if "scope" in scope:
        builder = builder.conversation_scope(scope["scope"])  # type: ignore[arg-type]
    return builder.build()


def ask(client: ChatClient, text: str, tenant: str | None, conversation: str = "c1") -> str:
    spec = client.prompt(text).conversation(conversation)
    if tenant is not None:
        spec = spec.tool_context({"tenant_id": tenant})
    return spec.call().content() or ""


def test_a_reused_conversation_id_is_a_new_conversation_in_another_tenant() -> None:
    client = memory_client()
    assert ask(client, "acme's secret", "acme") == "acme's secret"
    assert ask(client, "hello", "globex") == "hello"  # nothing of acme's
    assert ask(client, "again", "acme") == "acme's secret | again"
    assert ask(client, "no tenant", None) == "no tenant"
    assert ask(client, "guess", None, conversation="tenant:acme:c1") == "guess"


def test_the_scope_is_chosen_on_the_builder() -> None:
    # Users of one tenant kept apart too.
    def per_user(conversation_id: str, context: ToolContext) -> str:
        return f"{context.tenant_id}/{context.user_id}/{conversation_id}"

    client = memory_client(scope=per_user)
    first = client.prompt("mine").conversation("c1").tool_context({"tenant_id": "a", "user_id": 1})
    assert first.call().content() == "mine"
    other = client.prompt("yours").conversation("c1").tool_context({"tenant_id": "a", "user_id": 2})
    assert other.call().content() == "yours"
    # Ids unique across tenants already may opt out of scoping.
    shared = memory_client(scope=unscoped)
    assert ask(shared, "one", "acme") == "one"
    assert ask(shared, "two", "globex") == "one | two"


def test_a_scope_that_is_not_a_function_is_refused() -> None:
    with pytest.raises(ConfigurationError, match="conversation_scope"):
        ChatClient.builder(FunctionModel(echo_history)).conversation_scope("tenant")  # type: ignore[arg-type]
    client = memory_client()
    with pytest.raises(ConfigurationError, match="must be a function"):
        client.prompt("x").conversation("c1").advisor_params(**{CONVERSATION_SCOPE: 3}).call()


def searching_model(prompt: Prompt) -> object:
    """Searches for a refund tool unless one is shown already; reports what it was shown."""
    shown = sorted(t.definition.name for t in prompt.options.tools)
    last = prompt.messages[-1]
    if isinstance(last, UserMessage) and "payments.refund" not in shown:
        return tool_call_response(("tool_search", {"queries": ["refund a card payment"]}))
    if isinstance(last, ToolResponseMessage):
        found = json.loads(last.responses[0].data)
        return text_response(f"found {[hit['name'] for hit in found]}")
    return text_response(f"shown {shown}")


def test_discovered_tools_are_kept_per_tenant() -> None:
    advisor = ToolSearchAdvisor(
        [refund, open_ticket], index=BM25ToolIndex(), channel="rewrite", **SEARCH_ONLY
    )
    client = ChatClient.builder(FunctionModel(searching_model)).default_advisors(advisor).build()

    def turn(tenant: str) -> str:
        spec = client.prompt("refund p-1").conversation("c1").tool_context({"tenant_id": tenant})
        return spec.call().content() or ""

    assert turn("acme") == "found ['payments__refund']"
    assert turn("acme") == "shown ['payments.refund', 'tool_search']"  # kept for acme's c1
    # Another tenant reusing "c1" starts from nothing: it must search for itself.
    assert turn("globex") == "found ['payments__refund']"
