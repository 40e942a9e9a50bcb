"""SqliteIdempotencyStore: whatever text a model controls is stored and read back exactly."""

from __future__ import annotations

from pathlib import Path

from toolrelay.execution import ReservationStatus, SqliteIdempotencyStore


async def test_keys_and_results_utf8_cannot_encode_are_kept_exactly(tmp_path: Path) -> None:
    # A function key built from the model's arguments, and a result echoing them.
    key, other, result = "refund:\ud83d", "refund:\ude00", "refunded \ud83d\ude00 and \udfff"
    with SqliteIdempotencyStore(tmp_path / "keys.sqlite3") as store:
        reserved = await store.reserve(key, owner="a", lease=60)
        assert reserved.status is ReservationStatus.ACQUIRED
        await store.complete(key, owner="a", result=result)
        acquired = await store.reserve(other, owner="b", lease=60)
        assert acquired.status is ReservationStatus.ACQUIRED
    with SqliteIdempotencyStore(tmp_path / "keys.sqlite3") as reopened:
        replay = await reopened.reserve(key, owner="c", lease=60)
        assert replay.status is ReservationStatus.COMPLETED
        assert replay.result == result
        await reopened.release(other, owner="b")
        assert (await reopened.reserve(other, owner="d", lease=60)).status is (
            ReservationStatus.ACQUIRED
        )
        await reopened.delete(key)
        assert (await reopened.reserve(key, owner="e", lease=60)).status is (
            ReservationStatus.ACQUIRED
        )
