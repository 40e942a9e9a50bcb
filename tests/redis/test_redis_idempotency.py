"""RedisIdempotencyStore: the first reservation wins, lost owners stay unknown, results replay."""

from __future__ import annotations

import asyncio
import json
import time
import uuid
from collections.abc import AsyncIterator
from typing import Any

import pytest
from redis.asyncio import Redis

from tests.execution.test_idempotency import RETRY, LostReply, Refunds, run_round
from tests.execution.test_idempotency_rules import SCENARIOS
from toolrelay.exceptions import ConfigurationError, StorageUnavailableError
from toolrelay.execution import (
    IdempotencyInterceptor,
    IdempotencyStore,
    ReservationStatus,
    ToolCallingManager,
)
from toolrelay.messages import ToolCall, UserMessage
from toolrelay.prompt import ChatOptions, Prompt
from toolrelay.redis import RedisIdempotencyStore
from toolrelay.testing import tool_call_response
from toolrelay.tools import FunctionTool, tool

ACQUIRED, COMPLETED, RUNNING, UNKNOWN = (
    ReservationStatus.ACQUIRED,
    ReservationStatus.COMPLETED,
    ReservationStatus.RUNNING,
    ReservationStatus.UNKNOWN,
)


@pytest.fixture
async def store(redis_url: str, prefix: str) -> AsyncIterator[RedisIdempotencyStore]:
    async with RedisIdempotencyStore(redis_url, prefix=prefix) as value:
        yield value


def test_it_is_an_idempotency_store(redis_url: str) -> None:
    assert isinstance(RedisIdempotencyStore(redis_url), IdempotencyStore)


async def test_reserve_complete_replay(store: RedisIdempotencyStore) -> None:
    assert (await store.reserve("k", owner="a", lease=60)).status is ACQUIRED
    assert (await store.reserve("k", owner="b", lease=60)).status is RUNNING
    # The owner repeating its reservation (its first reply was lost) still holds the key.
    assert (await store.reserve("k", owner="a", lease=60)).status is ACQUIRED
    await store.complete("k", owner="a", result="paid #1")
    replay = await store.reserve("k", owner="b", lease=60)
    assert replay.status is COMPLETED
    assert replay.result == "paid #1"
    await store.complete("k", owner="b", result="paid #2")
    assert (await store.reserve("k", owner="c", lease=60)).result == "paid #1"


async def test_keys_and_results_utf8_cannot_encode_are_kept_exactly(
    store: RedisIdempotencyStore,
) -> None:
    # A function key built from the model's arguments, and a result echoing them.
    key, result = "refund:\ud83d", "refunded \ud83d\ude00 and \udfff"
    assert (await store.reserve(key, owner="a", lease=60)).status is ACQUIRED
    assert (await store.reserve("refund:\ude00", owner="b", lease=60)).status is ACQUIRED
    await store.complete(key, owner="a", result=result)
    replay = await store.reserve(key, owner="c", lease=60)
    assert replay.status is COMPLETED
    assert replay.result == result


async def test_release_frees_only_the_owners_reservation(store: RedisIdempotencyStore) -> None:
    await store.reserve("k", owner="a", lease=60)
    await store.release("k", owner="b")
    assert (await store.reserve("k", owner="b", lease=60)).status is RUNNING
    await store.release("k", owner="a")
    assert (await store.reserve("k", owner="b", lease=60)).status is ACQUIRED
    await store.complete("k", owner="b", result="r")
    await store.release("k", owner="b")  # a recorded result is never released
    assert (await store.reserve("k", owner="c", lease=60)).status is COMPLETED


async def test_a_reservation_whose_lease_ran_out_is_unknown_never_taken_over(
    store: RedisIdempotencyStore,
) -> None:
    await store.reserve("k", owner="crashed", lease=0.05)
    assert await store.confirm("k", owner="crashed")  # its run had started
    await asyncio.sleep(0.2)
    assert (await store.reserve("k", owner="b", lease=60)).status is UNKNOWN
    await store.delete("k")  # someone checked what happened
    assert (await store.reserve("k", owner="b", lease=60)).status is ACQUIRED


async def test_a_reservation_that_never_started_is_taken_over_once_its_lease_ends(
    store: RedisIdempotencyStore,
) -> None:
    await store.reserve("k", owner="lost", lease=0.05)  # its reply was lost: never confirmed
    assert (await store.reserve("k", owner="b", lease=60)).status is RUNNING
    await asyncio.sleep(0.2)
    assert (await store.reserve("k", owner="b", lease=60)).status is ACQUIRED
    assert not await store.confirm("k", owner="lost")  # the lost owner's run never starts
    assert await store.confirm("k", owner="b")


async def test_a_retry_after_a_lost_reservation_reply_runs_at_once(redis_url: str) -> None:
    desk = Refunds()
    store = RedisIdempotencyStore(redis_url, prefix=f"t{uuid.uuid4().hex}:")
    lossy: Any = LostReply(store)
    manager = ToolCallingManager(idempotency=IdempotencyInterceptor(lossy, wait=30))
    with pytest.raises(StorageUnavailableError):
        await run_round(manager, desk, RETRY, user_id="clerk")
    started = time.monotonic()
    retried = await run_round(manager, desk, RETRY, user_id="clerk")
    assert time.monotonic() - started < 5  # not the 30 s a call "running elsewhere" waits
    assert retried.outcomes[0].ok
    assert desk.paid == [("r-1", 100)]


async def test_unknown_outcomes_stay_until_a_result_or_a_release(
    store: RedisIdempotencyStore,
) -> None:
    await store.reserve("k", owner="a", lease=60)
    await store.mark_unknown("k", owner="b")  # not b's reservation: nothing happens
    assert (await store.reserve("k", owner="c", lease=60)).status is RUNNING
    await store.mark_unknown("k", owner="a")
    assert (await store.reserve("k", owner="c", lease=60)).status is UNKNOWN
    assert (await store.reserve("k", owner="a", lease=60)).status is UNKNOWN
    await store.complete("k", owner="a", result="late")  # the body finished after all
    assert (await store.reserve("k", owner="c", lease=60)).result == "late"
    await store.reserve("u", owner="a", lease=60)
    await store.mark_unknown("u", owner="a")
    await store.release("u", owner="a")  # it failed later: the key is free again
    assert (await store.reserve("u", owner="c", lease=60)).status is ACQUIRED


async def test_results_expire_after_the_ttl(redis_url: str, prefix: str) -> None:
    raw = Redis.from_url(redis_url)
    async with RedisIdempotencyStore(redis_url, prefix=prefix, ttl=3600) as store:
        await store.reserve("k", owner="a", lease=60)
        await store.complete("k", owner="a", result="r")
        assert 3_000_000 < await raw.pttl(store.key_of("k")) <= 3_600_000
        await store.delete("k")
        assert (await store.reserve("k", owner="b", lease=60)).status is ACQUIRED
    async with RedisIdempotencyStore(redis_url, prefix=prefix) as forever:
        await forever.complete("k2", owner="a", result="r")
        assert await raw.pttl(forever.key_of("k2")) == -1
    await raw.aclose()


async def test_exactly_one_of_many_concurrent_reservations_acquires(
    redis_url: str, prefix: str
) -> None:
    stores = [RedisIdempotencyStore(redis_url, prefix=prefix) for _ in range(5)]
    answers = await asyncio.gather(
        *(stores[i % 5].reserve("k", owner=f"o{i}", lease=60) for i in range(100))
    )
    assert [a.status for a in answers].count(ACQUIRED) == 1
    for s in stores:
        await s.aclose()


def test_bad_settings_are_rejected(redis_url: str) -> None:
    with pytest.raises(ConfigurationError):
        RedisIdempotencyStore(redis_url, ttl=-1)


async def test_a_zero_lease_is_rejected(store: RedisIdempotencyStore) -> None:
    with pytest.raises(ConfigurationError):
        await store.reserve("k", owner="a", lease=0)


async def test_two_managers_sharing_redis_pay_once(redis_url: str, prefix: str) -> None:
    paid: list[str] = []

    @tool(idempotency_key=["refund_id"])
    async def refund_retry(refund_id: str) -> str:
        """Retry a failed refund.

        Args:
            refund_id: The failed refund.
        """
        await asyncio.sleep(0.05)  # both workers are inside the call at the same time
        paid.append(refund_id)
        return f"paid {refund_id}"

    retry = FunctionTool.from_function(refund_retry)
    options = ChatOptions(tools=(retry,), tool_context={"user_id": "clerk"})
    prompt = Prompt(messages=(UserMessage(text="retry"),), options=options)
    call = ToolCall(id="c1", name="refund_retry", arguments=json.dumps({"refund_id": "r-1"}))
    stores = [RedisIdempotencyStore(redis_url, prefix=prefix) for _ in range(2)]
    managers = [
        ToolCallingManager(idempotency=IdempotencyInterceptor(s, poll_interval=0.01))
        for s in stores
    ]
    results = await asyncio.gather(
        *(m.execute_tool_calls(prompt, tool_call_response(call)) for m in managers)
    )
    assert paid == ["r-1"]
    outcomes = [r.outcomes[0] for r in results]
    ran, replayed = sorted(outcomes, key=lambda o: o.replayed)
    assert ran.response.data == replayed.recorded_result == "paid r-1"
    assert replayed.response.data.startswith("[not run again: this exact call already ran at ")
    assert sorted(o.replayed for o in outcomes) == [False, True]
    for s in stores:
        await s.aclose()


async def test_unreachable_redis_is_a_clear_error(free_port: int) -> None:
    store = RedisIdempotencyStore(f"redis://127.0.0.1:{free_port}/0", timeout=1)
    with pytest.raises(StorageUnavailableError, match="idempotency store"):
        await store.reserve(uuid.uuid4().hex, owner="a", lease=60)
    await store.aclose()


@pytest.mark.parametrize("scenario", SCENARIOS, ids=lambda s: s.__name__)
async def test_the_rules_of_keys_hold_on_redis(scenario: Any, store: RedisIdempotencyStore) -> None:
    """Other arguments under a used key are refused, replays say so, tenant and user scope."""
    await scenario(store)


async def test_the_record_of_a_key_is_kept_and_never_changed_by_a_look(
    store: RedisIdempotencyStore,
) -> None:
    held = {"fingerprint": "f1", "summary": 'a="\ud83d"'}  # a model's lone surrogate too
    assert (await store.reserve("k", owner="a", lease=60, **held)).status is ACQUIRED
    running = await store.reserve("k", owner="b", lease=60, fingerprint="f2", summary="other")
    assert (running.status, running.fingerprint, running.summary) == (RUNNING, "f1", 'a="\ud83d"')
    assert running.ran_at is not None
    assert abs(running.ran_at - time.time()) < 60  # the server's clock, in seconds
    await store.mark_unknown("k", owner="a")
    unknown = await store.reserve("k", owner="c", lease=60, fingerprint="f3", summary="third")
    assert (unknown.status, unknown.fingerprint, unknown.ran_at) == (UNKNOWN, "f1", running.ran_at)
    await asyncio.sleep(0.01)
    await store.complete("k", owner="a", result="late")
    done = await store.reserve("k", owner="d", lease=60)
    assert (done.status, done.result, done.fingerprint, done.summary, done.ran_at) == (
        COMPLETED,
        "late",
        "f1",
        'a="\ud83d"',
        running.ran_at,  # when it took the key, not when its result came
    )
    assert await store.reserve("k", owner="e", lease=60, fingerprint="f4") == done
    await store.complete("fresh", owner="x", result="r", fingerprint="f", summary="s")
    fresh = await store.reserve("fresh", owner="y", lease=60)
    assert (fresh.fingerprint, fresh.summary) == ("f", "s")
