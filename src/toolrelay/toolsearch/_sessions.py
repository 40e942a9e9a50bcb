"""Where the tool search keeps each conversation's discovered tools between turns.

A :class:`SessionStore` maps a conversation key to :class:`StoredTools`: the names of the
tools found so far, in the order they were found, the ones the model called, and the tools
the conversation's first reveal pinned to its tool list. That order is the order in which the
tools are shown to the model, so it must never be shuffled: a stable tool list keeps
providers' prompt caches hitting.

:class:`InMemorySessionStore` keeps the most recently used conversations of one process
(LRU, 1000 by default) and can forget idle ones after a time to live. A store shared by
several processes (Redis, a database) implements the same five async methods.
"""

from __future__ import annotations

import dataclasses
import threading
import time
from collections import OrderedDict
from collections.abc import Callable, Collection, Sequence
from dataclasses import dataclass
from typing import Literal, Protocol, runtime_checkable

from toolrelay.exceptions import ConfigurationError

__all__ = [
    "DEFAULT_MAX_SESSIONS",
    "Discoveries",
    "InMemorySessionStore",
    "Retention",
    "SessionStore",
    "StoredTools",
]

DEFAULT_MAX_SESSIONS = 1000
"""How many conversations an :class:`InMemorySessionStore` keeps by default."""


@dataclass(frozen=True, kw_only=True)
class StoredTools:
    """What a :class:`SessionStore` keeps of one conversation.

    Attributes:
        names: The discovered tools, in the order they were found.
        used: The tools the model called (what ``retention="used"`` keeps shown); replacing
            ``names`` keeps them.
        pinned: The tools the reveal before the conversation's first model call put in its
            tool list, which every later call shows too; ``None`` until that call (``()``:
            it pinned none). Set once, by :meth:`SessionStore.pin`; replacing ``names``
            keeps it.
    """

    names: tuple[str, ...] = ()
    used: frozenset[str] = frozenset()
    pinned: tuple[str, ...] | None = None


_EMPTY = StoredTools()


@runtime_checkable
class SessionStore(Protocol):
    """Each conversation's discovered tools in order, the ones it called, its pinned tools.

    A conversation is one entry: its names, used and pinned tools are kept, counted against a
    store's bound, expired and evicted together. Every method must be atomic for one key:
    two turns of the same conversation may run at the same time, and neither may lose the
    other's names.
    """

    async def get(self, key: str) -> StoredTools:
        """What is stored for ``key`` (empty when nothing is)."""
        ...

    async def add(
        self, key: str, names: Sequence[str] = (), *, used: Collection[str] = ()
    ) -> StoredTools:
        """Append the new ``names`` in their order, add ``used``; return what is stored now."""
        ...

    async def replace(self, key: str, names: Sequence[str]) -> None:
        """Store exactly ``names`` (duplicates dropped, first kept), keeping the rest.

        The used and pinned tools stay. A key left with no names, used tools or pinned tools
        is forgotten.
        """
        ...

    async def pin(self, key: str, names: Sequence[str]) -> StoredTools:
        """Pin ``names`` (duplicates dropped) for ``key``; return what is stored now.

        Only when ``key`` has no pinned tools yet: of two first turns running at the same
        time, the pin stored first is kept, and both list it. Pinning none (``()``) is a
        value too: the conversation's tool list is then fixed with no pinned tool.
        """
        ...

    async def delete(self, key: str) -> None:
        """Forget ``key`` and all it holds (nothing happens when it is unknown)."""
        ...


Retention = Literal["used", "all", "last_search"]
"""Which discovered tools stay shown (``ToolSearchAdvisor(retention=...)``).

- ``"used"`` (default): the tools the model called stay for the rest of the conversation;
  a found tool it passed over (it had a round of tool calls in which it could have called
  it) leaves the list when it searches again, or at once when a lone search found it and
  the model called another of that search's hits: that one need is met. The hits of the
  turn's reveal and of a round that searched for several needs at once (a plan of the
  task's steps) stay through the turn;
- ``"all"``: every tool found stays shown;
- ``"last_search"``: only what the last round of searches found is shown.
"""


@dataclass(frozen=True, kw_only=True)
class Discoveries:
    """A conversation's discovered tools as one turn tracks them.

    Attributes:
        names: The tools shown beyond the fixed ones, in the order they were found.
        used: The discovered tools the model has called in this conversation.
        fresh: Tools found since the model last called tools other than ``tool_search``:
            it has not yet had the chance to call them, so a search does not retire them.
        pending: The hits of a round's lone search, until the next round of calls: when that
            round calls one of them, the model has chosen, and the others are passed over.
            Several searches in one round leave this empty (which hit answers which need
            is not known then).
        task: The hits of the turn's reveal (a search of the whole request) and of its
            searches for several needs at once (a plan): they serve the task's later steps
            too, so the turn never retires them.
    """

    names: tuple[str, ...]
    used: frozenset[str] = frozenset()
    fresh: frozenset[str] = frozenset()
    pending: frozenset[str] = frozenset()
    task: frozenset[str] = frozenset()

    def after_round(
        self,
        *,
        found: Sequence[Sequence[str]],
        called: Collection[str],
        retention: Retention,
        whole_task: bool = False,
    ) -> Discoveries:
        """The discoveries after a tool round.

        Args:
            found: What each of the round's searches found, best first (none: no search).
            called: The names of the other tools it called.
            retention: Which tools stay shown (:data:`Retention`).
            whole_task: The one search was the reveal's, of the whole request (its hits
                become :attr:`task`).
        """
        searched = bool(found)
        hits = tuple(dict.fromkeys(name for search in found for name in search))
        if retention == "last_search":
            return Discoveries(names=hits) if searched else self
        if retention == "all":
            new = tuple(n for n in hits if n not in self.names)
            return Discoveries(names=(*self.names, *new)) if new else self
        if not searched and not called:
            return self
        chosen = not self.pending.isdisjoint(called)
        newly_used = {n for n in called if n in self.names and n not in self.used}
        if not searched and not newly_used and not chosen and not self.fresh:
            return self  # the common round: tools in use called again
        used = self.used | newly_used
        passed_over = self.pending - used if chosen else frozenset()
        # The reveal, or several needs searched at once: the hits serve later steps too.
        task = self.task | frozenset(hits) if whole_task or len(found) > 1 else self.task
        # A round of calls was the chance to call what earlier searches found.
        waiting = frozenset() if called else self.fresh
        kept = tuple(
            n
            for n in self.names
            if n in task or (n not in passed_over and (not searched or n in used or n in waiting))
        )
        new = tuple(n for n in hits if n not in kept)
        if len(found) == 1 and not whole_task:
            pending = frozenset(found[0])
        else:
            pending = frozenset() if searched or called else self.pending
        return Discoveries(
            names=(*kept, *new) if new else kept,
            used=used,
            fresh=waiting | set(hits),
            pending=pending,
            task=task,
        )


@dataclass(kw_only=True)
class _Entry:
    stored: StoredTools
    touched: float


class InMemorySessionStore:
    """A :class:`SessionStore` in this process's memory.

    Args:
        max_entries: How many conversations are kept (each with its discovered, used and pinned
            tools); using one more evicts the least recently used (read or written).
        ttl: Seconds a conversation may stay unused (neither read nor written) before it is
            forgotten; ``None`` keeps it until the LRU evicts it.
        clock: Returns the current time in seconds (``time.monotonic`` by default; tests
            inject their own).

    Raises:
        ConfigurationError: ``max_entries`` is below 1 or ``ttl`` is not positive.

    Safe to share between event loops and threads: every method runs under one lock and
    never awaits while holding it.
    """

    def __init__(
        self,
        *,
        max_entries: int = DEFAULT_MAX_SESSIONS,
        ttl: float | None = None,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        if max_entries < 1:
            raise ConfigurationError(f"max_entries must be >= 1, not {max_entries}")
        if ttl is not None and ttl <= 0:
            raise ConfigurationError(f"ttl must be > 0 seconds or None, not {ttl}")
        self.max_entries = max_entries
        self.ttl = ttl
        self._clock = clock
        self._entries: OrderedDict[str, _Entry] = OrderedDict()
        self._lock = threading.Lock()

    def __len__(self) -> int:
        """How many conversations are stored (expired ones included until next touched)."""
        return len(self._entries)

    def __repr__(self) -> str:
        return f"InMemorySessionStore(max_entries={self.max_entries}, ttl={self.ttl})"

    async def get(self, key: str) -> StoredTools:
        """What is stored for ``key``."""
        with self._lock:
            entry = self._live(key)
            return entry.stored if entry is not None else _EMPTY

    async def add(
        self, key: str, names: Sequence[str] = (), *, used: Collection[str] = ()
    ) -> StoredTools:
        """Append the new ``names`` in order, add ``used``; return what is stored for ``key``."""
        with self._lock:
            entry = self._live(key)
            stored = entry.stored if entry is not None else _EMPTY
            fresh = [n for n in dict.fromkeys(names) if n not in stored.names]
            if not fresh and stored.used.issuperset(used):
                return stored
            stored = dataclasses.replace(
                stored, names=(*stored.names, *fresh), used=stored.used.union(used)
            )
            self._put(key, stored)
            return stored

    async def replace(self, key: str, names: Sequence[str]) -> None:
        """Store exactly ``names`` for ``key``, keeping its used and pinned tools."""
        with self._lock:
            entry = self._live(key)
            stored = entry.stored if entry is not None else _EMPTY
            unique = tuple(dict.fromkeys(names))
            if unique or stored.used or stored.pinned is not None:
                self._put(key, StoredTools(names=unique, used=stored.used, pinned=stored.pinned))
            else:
                self._entries.pop(key, None)

    async def pin(self, key: str, names: Sequence[str]) -> StoredTools:
        """Pin ``names`` for ``key`` unless it has pinned tools; return what is stored."""
        with self._lock:
            entry = self._live(key)
            stored = entry.stored if entry is not None else _EMPTY
            if stored.pinned is None:
                stored = dataclasses.replace(stored, pinned=tuple(dict.fromkeys(names)))
                self._put(key, stored)
            return stored

    async def delete(self, key: str) -> None:
        """Forget ``key``."""
        with self._lock:
            self._entries.pop(key, None)

    # --- under the lock ------------------------------------------------------------------

    def _live(self, key: str) -> _Entry | None:
        """The entry of ``key`` unless it expired; marks it as just used."""
        entry = self._entries.get(key)
        if entry is None:
            return None
        now = self._clock()
        if self.ttl is not None and now - entry.touched >= self.ttl:
            del self._entries[key]
            return None
        entry.touched = now
        self._entries.move_to_end(key)
        return entry

    def _put(self, key: str, stored: StoredTools) -> None:
        self._entries[key] = _Entry(stored=stored, touched=self._clock())
        self._entries.move_to_end(key)
        self._evict()

    def _evict(self) -> None:
        if self.ttl is not None:
            # Entries are in last-use order, so the expired ones are at the front.
            deadline = self._clock() - self.ttl
            while self._entries:
                oldest = next(iter(self._entries.values()))
                if oldest.touched > deadline:
                    break
                self._entries.popitem(last=False)
        while len(self._entries) > self.max_entries:
            self._entries.popitem(last=False)
