"""Two worker processes serve alternate turns of one conversation over shared Redis state."""

from __future__ import annotations

import json

from ._workers import Turn, Workers


async def test_alternate_turns_see_the_same_tools_and_memory(redis_url: str, prefix: str) -> None:
    from toolrelay.messages import UserMessage
    from toolrelay.redis import RedisChatMemoryRepository, RedisSessionStore

    workers = Workers(2, redis_url=redis_url, prefix=prefix)
    try:
        turn = Turn(conversation="c1", tenant="acme", role="agent", text="refund r-1")
        first = workers.run([[turn], []])[0]
        assert first["answers"][0][1].startswith("done r-1")
        second = workers.run([[], [turn]])[1]
        third = workers.run([[turn], []])[0]
    finally:
        workers.close()
    assert first["pid"] != second["pid"]
    # Turn 2 ran on the other process: it found the refund tool already shown (no
    # search), and the call was answered from the first run's recorded result.
    answer = second["answers"][0][1]
    assert answer.startswith("done r-1")
    # The recorded result, after the line telling the model the call did not run again.
    assert "[not run again: this exact call already ran at " in answer
    assert json.loads(answer.splitlines()[-1])["pid"] == first["pid"]
    assert first["executions"] == [("acme.refund_order", "r-1")]
    assert second["executions"] == third["executions"] == []
    assert first["violations"] == second["violations"] == []

    sessions = RedisSessionStore(redis_url, prefix=prefix)
    repository = RedisChatMemoryRepository(redis_url, prefix=prefix)
    stored = await sessions.get(turn.key)
    shown = (*(stored.pinned or ()), *stored.names)  # pinned by turn 1's reveal, or found
    assert shown[0] == "acme.refund_order"
    assert all(name.split(".")[0] in ("acme", "shared") for name in shown)
    messages = await repository.find_by_conversation_id(turn.key)
    users = [m.text for m in messages if isinstance(m, UserMessage)]
    assert users == ["refund r-1"] * 3  # every turn's question, from both processes, in order
    await sessions.aclose()
    await repository.aclose()
