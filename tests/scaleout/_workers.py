"""Worker processes for the scale-out tests: a real client stack over shared Redis state.

Each worker runs ``ChatClient`` + ``MessageChatMemoryAdvisor`` (window memory over
``RedisChatMemoryRepository``) + ``ToolSearchAdvisor`` (``RedisSessionStore``, an index that is
``PostgresToolIndex`` when a DSN is given, else BM25) + ``IdempotencyInterceptor``
(``RedisIdempotencyStore``). The model is a ``FunctionModel`` deciding from the prompt alone,
so any worker plays any turn of any conversation the same way:

- a user message: call the tenant's refund tool when it is already shown (pinned by the
  conversation's first reveal or discovered in an earlier turn, on whichever worker), else
  ``tool_search("refund order")``;
- a ``tool_search`` answer: call the first refund tool found, or answer that none is allowed;
- a refund result: answer with it.

Every prompt is checked for leaks: a tool shown or named in a search answer that the
conversation's tenant and role may not see is recorded as a violation.
"""

from __future__ import annotations

import asyncio
import json
import multiprocessing
import os
import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from toolrelay.client import ChatClient, MessageChatMemoryAdvisor, ToolSearchAdvisor, tenant_scope
from toolrelay.execution import IdempotencyInterceptor
from toolrelay.memory import MessageWindowChatMemory
from toolrelay.messages import ChatResponse, ToolCall, ToolResponseMessage, UserMessage
from toolrelay.prompt import Prompt
from toolrelay.redis import RedisChatMemoryRepository, RedisIdempotencyStore, RedisSessionStore
from toolrelay.search import BM25ToolIndex, ToolIndex
from toolrelay.testing import FunctionModel, tool_call_response
from toolrelay.tools import (
    FunctionTool,
    Tool,
    ToolContext,
    ToolDefinition,
    provider_safe_name,
    tool,
)
from toolrelay.toolsearch import SearchOptions

TENANTS = ("acme", "globex", "initech", "umbrella")
ACTIONS = {
    "refund_order": "Refund a customer's order to their card.",
    "lookup_invoice": "Look up an invoice by number.",
    "cancel_subscription": "Cancel a customer's subscription at the end of the period.",
    "update_address": "Change the shipping address of an order.",
}

EXECUTIONS: list[tuple[str, str]] = []  # (tool, refund_id) of every run, in this process
VIOLATIONS: list[str] = []


def make_tool(tenant: str, action: str, description: str) -> Tool:
    async def run(refund_id: str, context: ToolContext) -> str:
        """Act on a refund.

        Args:
            refund_id: The refund.
        """
        await asyncio.sleep(float(context.get("tool_delay", 0.0)))
        EXECUTIONS.append((f"{tenant}.{action}", refund_id))
        return json.dumps(
            {"tool": f"{tenant}.{action}", "refund_id": refund_id, "pid": os.getpid()}
        )

    decorated = tool(
        name=f"{tenant}.{action}", description=description, idempotency_key=["refund_id"]
    )(run)
    return FunctionTool.from_function(decorated)


def catalog() -> list[Tool]:
    tools = [make_tool(t, a, f"{d} ({t})") for t in TENANTS for a, d in ACTIONS.items()]
    tools.append(make_tool("shared", "weather", "Current weather for a city."))
    return tools


def permitted(context: ToolContext, definition: ToolDefinition) -> bool:
    """Tenants see their own tools and shared ones; viewers see no refund tool."""
    owner, _, action = definition.name.partition(".")
    if owner not in (context.tenant_id, "shared"):
        return False
    return not (context.get("role") == "viewer" and action == "refund_order")


def _check_leaks(prompt: Prompt) -> None:
    context = ToolContext(prompt.options.tool_context)
    for shown in prompt.options.tools:
        definition = shown.definition
        if definition.name != "tool_search" and not permitted(context, definition):
            VIOLATIONS.append(f"{context.tenant_id} was shown {definition.name}")
    for message in prompt.messages:
        if isinstance(message, ToolResponseMessage):
            for response in message.responses:
                for other in TENANTS:
                    if other != context.tenant_id and f"{other}__" in response.data:
                        VIOLATIONS.append(f"{context.tenant_id} read {response.data[:80]}")


def decide(prompt: Prompt) -> ChatResponse | str:
    _check_leaks(prompt)
    context = ToolContext(prompt.options.tool_context)
    refund = provider_safe_name(f"{context.tenant_id}.refund_order")
    question = next(m for m in reversed(prompt.messages) if isinstance(m, UserMessage))
    refund_id = question.text.split()[-1]
    last = prompt.messages[-1]
    if isinstance(last, UserMessage):
        shown = {provider_safe_name(t.definition.name) for t in prompt.options.tools}
        if refund in shown:
            return tool_call_response(
                ToolCall(id="", name=refund, arguments=json.dumps({"refund_id": refund_id}))
            )
        return tool_call_response(("tool_search", {"queries": ["refund order"]}))
    assert isinstance(last, ToolResponseMessage)
    response = last.responses[0]
    if response.name == "tool_search":
        found = [hit["name"] for hit in json.loads(response.data)]
        if refund not in found:
            return f"no refund tool for {refund_id}"
        return tool_call_response(
            ToolCall(id="", name=refund, arguments=json.dumps({"refund_id": refund_id}))
        )
    return f"done {refund_id}: {response.data}"


@dataclass
class Stack:
    """One worker's client and the stores it shares with the others."""

    client: ChatClient
    stores: Sequence[Any] = field(default_factory=list)
    index: ToolIndex | None = None

    async def aclose(self) -> None:
        for store in self.stores:
            await store.aclose()
        close = getattr(self.index, "close", None)
        if close is not None:
            close()


def build_stack(
    redis_url: str,
    prefix: str,
    postgres_dsn: str | None = None,
    schema: str = "",
    wait: float = 10.0,
    timeout: float = 5.0,
    require_durable: bool = True,
) -> Stack:
    """The stack over Redis at ``redis_url``; ``timeout`` is every store's (see the stores)."""
    sessions = RedisSessionStore(redis_url, prefix=prefix, ttl=3600, timeout=timeout)
    repository = RedisChatMemoryRepository(redis_url, prefix=prefix, timeout=timeout)
    idempotency = RedisIdempotencyStore(
        redis_url, prefix=prefix, timeout=timeout, require_durable=require_durable
    )
    index: ToolIndex
    if postgres_dsn:
        from toolrelay.search._postgres import PostgresToolIndex

        index = PostgresToolIndex(postgres_dsn, schema=schema, max_connections=16)
    else:
        index = BM25ToolIndex()
    search = ToolSearchAdvisor(
        catalog(),
        index=index,
        session_store=sessions,
        options=SearchOptions(tool_filter=permitted),
        channel="rewrite",  # the model reads the tools it was shown from the tool list
    )
    memory = MessageChatMemoryAdvisor(MessageWindowChatMemory(repository, max_messages=200))
    client = (
        ChatClient.builder(FunctionModel(decide))
        .default_advisors(memory, search)
        .guards(idempotency=IdempotencyInterceptor(idempotency, wait=wait, poll_interval=0.01))
        .build()
    )
    return Stack(client=client, stores=[sessions, repository, idempotency], index=index)


@dataclass(frozen=True, kw_only=True)
class Turn:
    conversation: str
    tenant: str
    role: str
    text: str
    tool_delay: float = 0.0

    @property
    def key(self) -> str:
        """Where the conversation is kept: its id within its tenant (the default scope)."""
        return tenant_scope(self.conversation, ToolContext(tenant_id=self.tenant))


async def play(stack: Stack, turns: Sequence[Turn]) -> list[tuple[str, str]]:
    """Run turns concurrently; (turn.key, answer or "error:<ExceptionType>: ...") each."""

    async def one(turn: Turn) -> tuple[str, str]:
        context = {"tenant_id": turn.tenant, "role": turn.role, "tool_delay": turn.tool_delay}
        try:
            response = await (
                stack.client.prompt(turn.text)
                .conversation(turn.conversation)
                .tool_context(context)
                .acall()
            )
        except Exception as exc:
            return turn.key, f"error:{type(exc).__name__}: {exc}"
        return turn.key, response.content() or ""

    return list(await asyncio.gather(*(one(t) for t in turns)))


# --- worker processes ----------------------------------------------------------------------


def _serve(inbox: Any, outbox: Any, settings: dict[str, Any]) -> None:
    async def main() -> None:
        stack = build_stack(**settings)
        try:
            while True:
                turns = await asyncio.to_thread(inbox.get)
                if turns is None:
                    break
                EXECUTIONS.clear()
                VIOLATIONS.clear()
                started = time.perf_counter()
                answers = await play(stack, turns)
                outbox.put(
                    {
                        "pid": os.getpid(),
                        "answers": answers,
                        "executions": list(EXECUTIONS),
                        "violations": list(VIOLATIONS),
                        "seconds": time.perf_counter() - started,
                    }
                )
        finally:
            await stack.aclose()

    asyncio.run(main())


class Workers:
    """Worker processes, each with its own job queue, serving batches of turns."""

    def __init__(self, count: int, **settings: Any) -> None:
        context = multiprocessing.get_context("spawn")
        self.outboxes = [context.Queue() for _ in range(count)]
        self.inboxes = [context.Queue() for _ in range(count)]
        self.processes = [
            context.Process(target=_serve, args=(i, o, settings), daemon=True)
            for i, o in zip(self.inboxes, self.outboxes, strict=True)
        ]
        for process in self.processes:
            process.start()

    def run(self, batches: Sequence[Sequence[Turn]], timeout: float = 120) -> list[dict[str, Any]]:
        """Give batch i to worker i (all at once); return their reports in worker order."""
        for inbox, batch in zip(self.inboxes, batches, strict=True):
            inbox.put(list(batch))
        return [outbox.get(timeout=timeout) for outbox in self.outboxes]

    def close(self) -> None:
        for inbox in self.inboxes:
            inbox.put(None)
        for process in self.processes:
            process.join(30)
            if process.is_alive():
                process.kill()
