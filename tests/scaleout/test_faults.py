"""Redis restarted mid-run: acknowledged state survives, clients reconnect, turns fail clearly."""

from __future__ import annotations

import asyncio
from collections.abc import Callable

from tests.redis_servers import RedisServer

from . import _workers
from ._workers import Turn, build_stack, play


def turns(name: str, count: int, delay: float = 0.0) -> list[Turn]:
    return [
        Turn(
            conversation=f"acme:{name}{n}",
            tenant="acme",
            role="agent",
            text=f"refund {name}-{n}",
            tool_delay=delay,
        )
        for n in range(count)
    ]


async def test_redis_restarted_mid_run(redis_servers: Callable[..., RedisServer]) -> None:
    from redis.asyncio import Redis

    from toolrelay.messages import AssistantMessage, UserMessage
    from toolrelay.redis import RedisChatMemoryRepository

    # An append-only file synced on every write: acknowledged state survives a SIGKILL.
    redis_server = redis_servers("--appendonly", "yes", "--appendfsync", "always")
    prefix = "fault:"
    stack = build_stack(redis_server.url, prefix, wait=0.5)
    _workers.EXECUTIONS.clear()

    # Acknowledged: 30 finished turns.
    done = turns("a", 30)
    assert all(answer.startswith("done") for _, answer in await play(stack, done))
    assert len(_workers.EXECUTIONS) == 30

    # In flight: 30 turns inside their (slow) refund call when Redis dies.
    flying = asyncio.create_task(play(stack, turns("b", 30, delay=1.5)))
    raw = Redis.from_url(redis_server.url)
    for _ in range(200):
        if len([k async for k in raw.scan_iter(match=f"{prefix}idempotency:*")]) == 60:
            break
        await asyncio.sleep(0.05)
    await raw.aclose()
    redis_server.kill()
    answers = await flying
    errors = {answer.split(":", 2)[1] for _, answer in answers}
    assert errors == {"StorageUnavailableError"}, answers[:3]

    # While Redis is down, operations fail at once with the same clear error.
    repository = RedisChatMemoryRepository(redis_server.url, prefix=prefix, timeout=2)
    ((_, down),) = await play(stack, turns("c", 1))
    assert down.startswith("error:StorageUnavailableError")

    redis_server.start()  # the append-only file is replayed
    # Acknowledged state survived: memory, discovered tools and recorded results. The same
    # clients reconnect by themselves.
    for turn in done:
        messages = await repository.find_by_conversation_id(turn.key)
        assert [m.text for m in messages if isinstance(m, UserMessage)] == [turn.text]
    executed = len(_workers.EXECUTIONS)
    again = await play(stack, done)
    assert all(answer.startswith("done") for _, answer in again), again[:3]
    assert len(_workers.EXECUTIONS) == executed  # replayed, not run again

    # The interrupted turns left no half-written state: each conversation holds at most
    # its question, and a retry never pays twice (the live reservation says "running").
    for turn in turns("b", 30):
        messages = await repository.find_by_conversation_id(turn.key)
        assert [type(m) for m in messages] in ([], [UserMessage]), messages
    paid = {refund for _, refund in _workers.EXECUTIONS}
    retried = await play(stack, turns("b", 30))
    assert all(not answer.startswith("error") for _, answer in retried)
    assert sum(refund in paid for _, refund in _workers.EXECUTIONS) == len(_workers.EXECUTIONS)
    new_runs = [refund for _, refund in _workers.EXECUTIONS if refund.startswith("b-")]
    assert len(new_runs) == len(set(new_runs)) == 30  # each ran once, before the crash
    for turn in turns("b", 30):
        messages = await repository.find_by_conversation_id(turn.key)
        assert isinstance(messages[-1], AssistantMessage)
    await repository.aclose()
    await stack.aclose()
