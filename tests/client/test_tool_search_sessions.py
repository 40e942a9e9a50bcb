"""The in-memory session store of the tool search: order, atomic adds, LRU and TTL eviction."""

from __future__ import annotations

import asyncio

import pytest
from hypothesis import given
from hypothesis import strategies as st

from toolrelay.exceptions import ConfigurationError
from toolrelay.toolsearch import InMemorySessionStore, SessionStore, StoredTools
from toolrelay.toolsearch._sessions import DEFAULT_MAX_SESSIONS


async def names(store: InMemorySessionStore, key: str) -> tuple[str, ...]:
    return (await store.get(key)).names


class Clock:
    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


def test_satisfies_the_protocol_and_keeps_1000_by_default() -> None:
    store = InMemorySessionStore()
    assert isinstance(store, SessionStore)
    assert store.max_entries == DEFAULT_MAX_SESSIONS == 1000
    assert store.ttl is None


async def test_add_appends_new_names_in_discovery_order() -> None:
    store = InMemorySessionStore()
    assert await store.get("c1") == StoredTools()
    assert (await store.add("c1", ["b", "a"])).names == ("b", "a")
    assert (await store.add("c1", ["c", "a", "c", "d"])).names == ("b", "a", "c", "d")
    assert await names(store, "c1") == ("b", "a", "c", "d")
    assert await names(store, "c2") == ()


async def test_used_tools_are_added_beside_the_names_and_survive_a_replace() -> None:
    store = InMemorySessionStore()
    assert await store.add("c1", ["a", "b"], used=["a"]) == StoredTools(
        names=("a", "b"), used=frozenset({"a"})
    )
    assert await store.add("c1", used=["b", "a"]) == StoredTools(
        names=("a", "b"), used=frozenset({"a", "b"})
    )
    await store.replace("c1", ["c"])
    assert await store.get("c1") == StoredTools(names=("c",), used=frozenset({"a", "b"}))
    await store.replace("c1", [])
    assert await store.get("c1") == StoredTools(used=frozenset({"a", "b"}))
    assert len(store) == 1
    await store.delete("c1")
    assert await store.get("c1") == StoredTools()
    assert len(store) == 0


async def test_pin_is_kept_once_beside_the_names_and_survives_a_replace() -> None:
    store = InMemorySessionStore()
    assert (await store.get("c1")).pinned is None
    assert await store.pin("c1", ["p", "q", "p"]) == StoredTools(pinned=("p", "q"))
    # A concurrent first turn pinning its own keeps the first: every turn lists the same.
    assert await store.pin("c1", ["r"]) == StoredTools(pinned=("p", "q"))
    assert await store.add("c1", ["a"], used=["a"]) == StoredTools(
        names=("a",), used=frozenset({"a"}), pinned=("p", "q")
    )
    await store.replace("c1", [])
    assert await store.get("c1") == StoredTools(used=frozenset({"a"}), pinned=("p", "q"))
    await store.delete("c1")
    assert await store.get("c1") == StoredTools()
    # Pinning nothing is a value: the conversation's list is fixed without pinned tools.
    assert await store.pin("c2", []) == StoredTools(pinned=())
    await store.replace("c2", [])
    assert len(store) == 1
    assert await store.pin("c2", ["p"]) == StoredTools(pinned=())


async def test_adding_nothing_to_an_unknown_key_stores_nothing() -> None:
    store = InMemorySessionStore()
    assert await store.add("c1", []) == StoredTools()
    assert await store.add("c1", [], used=[]) == StoredTools()
    assert len(store) == 0


async def test_replace_and_delete() -> None:
    store = InMemorySessionStore()
    await store.add("c1", ["a", "b"])
    await store.replace("c1", ["c", "a", "c"])
    assert await names(store, "c1") == ("c", "a")
    await store.replace("c1", [])
    assert await names(store, "c1") == ()
    assert len(store) == 0
    await store.add("c1", ["a"])
    await store.delete("c1")
    await store.delete("never-there")
    assert await names(store, "c1") == ()


async def test_least_recently_used_conversation_is_evicted() -> None:
    store = InMemorySessionStore(max_entries=2)
    await store.add("c1", ["a"])
    await store.add("c2", ["b"])
    assert await names(store, "c1") == ("a",)  # c1 is now the most recently used
    await store.add("c3", ["c"])
    assert len(store) == 2
    assert await names(store, "c2") == ()
    assert await names(store, "c1") == ("a",)
    assert await names(store, "c3") == ("c",)


async def test_the_default_bound_counts_conversations_with_their_used_tools() -> None:
    store = InMemorySessionStore()
    extra = 250
    # What the tool search stores per conversation: the tools found, then the one it called.
    for n in range(DEFAULT_MAX_SESSIONS + extra):
        await store.add(f"c{n}", [f"found{n}", "shared"])
        await store.add(f"c{n}", used=[f"found{n}"])
    assert len(store) == DEFAULT_MAX_SESSIONS
    kept = [n for n in range(DEFAULT_MAX_SESSIONS + extra) if (await store.get(f"c{n}")).names]
    assert kept == list(range(extra, DEFAULT_MAX_SESSIONS + extra))  # the most recent ones
    for n in kept:
        assert await store.get(f"c{n}") == StoredTools(
            names=(f"found{n}", "shared"), used=frozenset({f"found{n}"})
        )
    assert len(store) == DEFAULT_MAX_SESSIONS  # reading the evicted ones stored nothing


async def test_idle_conversations_expire_after_the_ttl() -> None:
    clock = Clock()
    store = InMemorySessionStore(ttl=60.0, clock=clock)
    await store.add("c1", ["a"], used=["a"])
    await store.add("c2", ["b"])
    clock.now += 59.0
    assert await names(store, "c1") == ("a",)  # a read keeps it alive
    clock.now += 59.0  # c1 idle 59 s, c2 idle 118 s
    assert await names(store, "c1") == ("a",)
    assert await names(store, "c2") == ()
    clock.now += 60.0
    assert await store.get("c1") == StoredTools()  # its used tools went with it
    assert (await store.add("c1", ["z"])).names == ("z",)  # an expired entry starts afresh


async def test_writes_sweep_expired_entries() -> None:
    clock = Clock()
    store = InMemorySessionStore(ttl=10.0, clock=clock)
    for key in ("c1", "c2", "c3"):
        await store.add(key, ["a"])
    clock.now += 10.0
    await store.add("c4", ["b"])
    assert len(store) == 1


@pytest.mark.parametrize(
    ("options", "message"),
    [({"max_entries": 0}, "max_entries"), ({"ttl": 0.0}, "ttl"), ({"ttl": -1.0}, "ttl")],
)
def test_bad_options_are_rejected(options: dict[str, float], message: str) -> None:
    with pytest.raises(ConfigurationError, match=message):
        InMemorySessionStore(**options)  # type: ignore[arg-type]


async def test_concurrent_adds_lose_nothing() -> None:
    store = InMemorySessionStore()
    await asyncio.gather(*(store.add("c1", [f"t{i}", "shared"]) for i in range(50)))
    stored = await names(store, "c1")
    assert len(stored) == 51
    assert set(stored) == {f"t{i}" for i in range(50)} | {"shared"}


@given(st.lists(st.lists(st.sampled_from("abcdefgh"), max_size=4), max_size=8))
def test_stored_names_are_the_first_occurrences_in_order(batches: list[list[str]]) -> None:
    store = InMemorySessionStore()

    async def run() -> tuple[str, ...]:
        for batch in batches:
            await store.add("c", batch)
        return await names(store, "c")

    expected = tuple(dict.fromkeys(name for batch in batches for name in batch))
    assert asyncio.run(run()) == expected
