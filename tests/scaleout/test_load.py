"""1,000 concurrent conversations on 4 worker processes: no leaks, no loss, no double runs.

The four tenants use the same conversation ids (``c0`` ... ``c249`` each): a conversation is
told apart by its tenant, never by its id alone.
"""

from __future__ import annotations

import time
from collections import Counter

import pytest

from ._workers import TENANTS, Turn, Workers

CONVERSATIONS = 1000
WORKERS = 4
SHARED_REFUNDS = 100  # conversations that pair up on one refund id, to race for it


def conversations() -> list[Turn]:
    turns = []
    for n in range(CONVERSATIONS):
        tenant = TENANTS[n % len(TENANTS)]
        role = "viewer" if n % 5 == 0 else "agent"
        # Pairs (n, n + 4) share a tenant; the first SHARED_REFUNDS of them share a refund id.
        refund = f"r-{n - 4}" if 4 <= n < 4 + SHARED_REFUNDS and (n // 4) % 2 else f"r-{n}"
        conversation = f"c{n // len(TENANTS)}"  # each id is used by every tenant
        turns.append(
            Turn(conversation=conversation, tenant=tenant, role=role, text=f"refund {refund}")
        )
    return turns


async def test_many_conversations_over_four_workers(
    redis_url: str,
    prefix: str,
    postgres_schema: tuple[str | None, str],
    capsys: pytest.CaptureFixture[str],
) -> None:
    from toolrelay.messages import AssistantMessage, UserMessage
    from toolrelay.redis import RedisChatMemoryRepository

    dsn, schema = postgres_schema
    turns = conversations()
    workers = Workers(WORKERS, redis_url=redis_url, prefix=prefix, postgres_dsn=dsn, schema=schema)
    try:
        started = time.perf_counter()
        reports = workers.run([turns[w::WORKERS] for w in range(WORKERS)])
        # Turn 2 of each conversation on the next worker, which never saw it.
        reports += workers.run([turns[(w - 1) % WORKERS :: WORKERS] for w in range(WORKERS)])
        elapsed = time.perf_counter() - started
    finally:
        workers.close()

    answers = [answer for report in reports for answer in report["answers"]]
    assert len(answers) == 2 * CONVERSATIONS
    assert [a for a in answers if a[1].startswith("error:")] == []
    assert [v for report in reports for v in report["violations"]] == []
    assert len({report["pid"] for report in reports}) == WORKERS

    runs = Counter(run for report in reports for run in report["executions"])
    assert [run for run, count in runs.items() if count > 1] == []  # nothing ran twice
    expected = {
        (f"{t.tenant}.refund_order", t.text.split()[-1]) for t in turns if t.role == "agent"
    }
    assert set(runs) == expected  # every permitted refund ran exactly once; viewers' never
    tenant_of = {t.key: t.tenant for t in turns}
    assert len(tenant_of) == CONVERSATIONS
    for key, answer in answers:
        assert tenant_of[key] in answer or answer.startswith("no refund tool"), answer

    repository = RedisChatMemoryRepository(redis_url, prefix=prefix)
    for turn in turns:
        messages = await repository.find_by_conversation_id(turn.key)
        questions = [m.text for m in messages if isinstance(m, UserMessage)]
        replies = [m.text for m in messages if isinstance(m, AssistantMessage) and m.text]
        assert questions == [turn.text, turn.text], turn.key  # none lost, none of another's
        assert len(replies) == 2, turn.key
    await repository.aclose()

    with capsys.disabled():
        index = "PostgreSQL" if dsn else "in-process BM25"
        print(
            f"\n[load] {2 * CONVERSATIONS} turns of {CONVERSATIONS} conversations on {WORKERS} "
            f"workers (Redis state, {index} index): {elapsed:.1f} s, "
            f"{2 * CONVERSATIONS / elapsed:.0f} turns/s, {sum(runs.values())} refunds run once"
        )
