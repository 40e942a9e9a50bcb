"""Redis restarted mid-run: acknowledged state survives, clients reconnect, turns fail clearly."""

from __future__ import annotations

import asyncio
import os
import shutil
import socket
import subprocess
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

pytest.importorskip("redis.asyncio", reason="needs the redis extra: pip install 'toolrelay[redis]'")

from . import _workers
from ._workers import Turn, build_stack, play


@dataclass
class RedisServer:
    """A private redis-server with an append-only file synced on every write."""

    binary: str
    folder: Path
    port: int
    process: subprocess.Popen[bytes] | None = None

    @property
    def url(self) -> str:
        return f"redis://127.0.0.1:{self.port}/0"

    def start(self) -> None:
        self.process = subprocess.Popen(
            [
                self.binary,
                "--port",
                str(self.port),
                "--bind",
                "127.0.0.1",
                "--dir",
                str(self.folder),
                "--appendonly",
                "yes",
                "--appendfsync",
                "always",
                "--save",
                "",
            ],
            stdout=subprocess.DEVNULL,
        )
        deadline = time.monotonic() + 20
        while time.monotonic() < deadline:
            try:
                with socket.create_connection(("127.0.0.1", self.port), timeout=1) as sock:
                    sock.sendall(b"PING\r\n")
                    if sock.recv(64).startswith(b"+PONG"):
                        return
            except OSError:
                pass
            time.sleep(0.05)
        raise RuntimeError("redis-server did not start")

    def kill(self) -> None:
        """SIGKILL: no shutdown, no final flush; only what was fsynced survives."""
        assert self.process is not None
        self.process.kill()
        self.process.wait(10)


@pytest.fixture
def redis_server(tmp_path: Path) -> Iterator[RedisServer]:
    binary = os.environ.get("TOOLRELAY_TEST_REDIS_SERVER") or shutil.which("redis-server")
    if not binary:
        pytest.skip("needs a redis-server binary (TOOLRELAY_TEST_REDIS_SERVER or on PATH)")
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    server = RedisServer(binary=binary, folder=tmp_path, port=port)
    server.start()
    yield server
    if server.process is not None and server.process.poll() is None:
        server.kill()


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


async def test_redis_restarted_mid_run(redis_server: RedisServer) -> None:
    from redis.asyncio import Redis

    from toolrelay.messages import AssistantMessage, UserMessage
    from toolrelay.redis import RedisChatMemoryRepository

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
        messages = await repository.find_by_conversation_id(turn.conversation)
        assert [m.text for m in messages if isinstance(m, UserMessage)] == [turn.text]
    executed = len(_workers.EXECUTIONS)
    again = await play(stack, done)
    assert all(answer.startswith("done") for _, answer in again), again[:3]
    assert len(_workers.EXECUTIONS) == executed  # replayed, not run again

    # The interrupted turns left no half-written state: each conversation holds at most
    # its question, and a retry never pays twice (the live reservation says "running").
    for turn in turns("b", 30):
        messages = await repository.find_by_conversation_id(turn.conversation)
        assert [type(m) for m in messages] in ([], [UserMessage]), messages
    paid = {refund for _, refund in _workers.EXECUTIONS}
    retried = await play(stack, turns("b", 30))
    assert all(not answer.startswith("error") for _, answer in retried)
    assert sum(refund in paid for _, refund in _workers.EXECUTIONS) == len(_workers.EXECUTIONS)
    new_runs = [refund for _, refund in _workers.EXECUTIONS if refund.startswith("b-")]
    assert len(new_runs) == len(set(new_runs)) == 30  # each ran once, before the crash
    for turn in turns("b", 30):
        messages = await repository.find_by_conversation_id(turn.conversation)
        assert isinstance(messages[-1], AssistantMessage)
    await repository.aclose()
    await stack.aclose()
