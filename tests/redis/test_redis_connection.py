"""The Redis stores' connections: one bounded pool per store, reused by every loop, closed."""

from __future__ import annotations

import asyncio
import multiprocessing
from collections.abc import Callable

from tests.redis_servers import RedisServer
from toolrelay._sync import run_sync
from toolrelay.client import ChatClient, MessageChatMemoryAdvisor, ToolSearchAdvisor
from toolrelay.memory import MessageWindowChatMemory
from toolrelay.prompt import Prompt
from toolrelay.redis import RedisChatMemoryRepository, RedisIdempotencyStore, RedisSessionStore
from toolrelay.search import BM25ToolIndex
from toolrelay.testing import FunctionModel, text_response, tool_call_response
from toolrelay.tools import tool


@tool(name="refund.issue", idempotency_key=["refund_id"])
def issue(refund_id: str) -> str:
    """Issue a refund."""
    return f"refunded {refund_id}"


def refund_once(prompt: Prompt) -> object:
    if prompt.messages[-1].__class__.__name__ == "UserMessage":
        return tool_call_response(("refund__issue", {"refund_id": "r-1"}))
    return text_response("done")


def test_a_thousand_blocking_calls_reuse_one_bounded_pool_per_store(
    redis_servers: Callable[..., RedisServer],
) -> None:
    server = redis_servers("--appendonly", "yes")
    sessions = RedisSessionStore(server.url)
    memory = RedisChatMemoryRepository(server.url)
    idempotency = RedisIdempotencyStore(server.url)
    search = ToolSearchAdvisor(
        [issue], index=BM25ToolIndex(), session_store=sessions, always_on=["refund.issue"]
    )
    client = (
        ChatClient.builder(FunctionModel(refund_once))
        .default_advisors(MessageChatMemoryAdvisor(MessageWindowChatMemory(memory)), search)
        .guards(idempotency=idempotency)
        .default_tool_context({"user_id": "clerk"})
        .single_tenant()  # the stores are shared, and every request is the one tenant's
        .build()
    )
    # Every blocking call runs on an event loop of its own (run_sync).
    for n in range(1000):
        assert client.prompt("refund r-1").conversation(f"c{n % 10}").call().content() == "done"

    clients = int(server.info("clients")["connected_clients"])
    accepted = int(server.info("stats")["total_connections_received"])
    # The INFO connection itself is one client; each store keeps a connection or two.
    assert clients <= 1 + 3 * 2, clients
    assert accepted <= 1 + 3 * 2 + 2, accepted  # reused across calls, not opened per call
    for store in (sessions, memory, idempotency):
        store.close()
    assert int(server.info("clients")["connected_clients"]) == 1  # only the INFO one


async def test_a_burst_waits_for_the_pool_instead_of_opening_more(
    redis_servers: Callable[..., RedisServer],
) -> None:
    server = redis_servers()
    async with RedisSessionStore(server.url, max_connections=4) as store:
        added = await asyncio.gather(*(store.add(f"c{n}", [f"t{n}"]) for n in range(300)))
        assert [a.names for a in added] == [(f"t{n}",) for n in range(300)]
        assert int(server.info("clients")["connected_clients"]) <= 1 + 4
    assert int(server.info("clients")["connected_clients"]) == 1


def _child_reads(store: RedisSessionStore, queue: multiprocessing.Queue[object]) -> None:
    queue.put(run_sync(store.get("c1")).names)
    store.close()


def test_a_forked_child_opens_its_own_pool(redis_servers: Callable[..., RedisServer]) -> None:
    server = redis_servers()
    store = RedisSessionStore(server.url)
    assert run_sync(store.add("c1", ["a"])).names == ("a",)  # the parent's loop and pool exist now
    context = multiprocessing.get_context("fork")
    queue: multiprocessing.Queue[object] = context.Queue()
    # The child inherits the store, whose loop thread did not survive the fork.
    child = context.Process(target=_child_reads, args=(store, queue))
    child.start()
    assert queue.get(timeout=30) == ("a",)
    child.join(30)
    assert child.exitcode == 0
    assert run_sync(store.get("c1")).names == ("a",)  # the parent's pool still works
    store.close()
