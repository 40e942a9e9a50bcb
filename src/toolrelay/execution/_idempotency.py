"""Idempotency: a repeated call gets the recorded result instead of running again.

A tool declares how a call's key is derived (``ToolMetadata.idempotency_key``, or
``@tool(idempotency_key=...)``):

- argument names: ``@tool(idempotency_key=["order_id", "refund_id"])``; the key is the tool's
  name plus a digest of those arguments and of the caller: the context's ``tenant_id`` and
  ``user_id`` (the ``session_id`` instead of a missing ``user_id``), so neither tenants nor
  users nor anonymous sessions share results. A call that names no caller at all (none of
  the three) is refused before it runs (:class:`~toolrelay.exceptions.ToolContextError`):
  callers the application can tell apart never share a key space by accident.
  ``ToolMetadata.idempotency_scope`` widens the scope: ``"tenant"`` (the users of a tenant
  share keys; the call needs a ``tenant_id``) or ``"global"`` (everyone does);
- a function of the arguments and the context:
  ``@tool(idempotency_key=lambda args, ctx: f"refund-retry:{args['refund_id']}")``; the key
  is exactly what it returns, and it keeps full control of its scope (add the tenant and the
  user yourself when results must stay apart).

The key is derived from the validated arguments (see :mod:`~toolrelay.execution._arguments`),
in canonical form: ``5``, ``"5"``, ``5.0`` and ``"05"`` for a function tool's ``int`` parameter
are one operation, and so are ``7`` and ``7.0`` for any tool validated by a JSON Schema (an
MCP tool's), whatever order the keys came in. Without a configured store, every manager of
the process shares one in-memory store (:func:`process_idempotency`), so a declared key never
runs twice in one process, whichever client, gateway, bridge or converted tool runs it.

As with Stripe's idempotency keys, the store records with each key the call's fingerprint
(:func:`call_fingerprint`: its tool and all its validated arguments), a short summary of its
arguments and when it took the key. :class:`IdempotencyInterceptor` looks the key up in an
:class:`IdempotencyStore` before the call runs:

- a key held by a call with other arguments refuses the call (status
  ``idempotency_conflict``): it does not run, is never answered with the other call's result,
  does not wait for that call when it is still running, and leaves its record as it is;
- a result recorded by the same call answers it (``replayed``, status ``ok``) without running
  the tool and without asking for approval again; the text starts with a line saying it was
  not run again and when it ran (``ToolCallOutcome.recorded_result`` is the recorded text).

Otherwise the key is reserved, and confirmed (:meth:`IdempotencyStore.confirm`) the moment the
tool starts, after every other step (an approval) let it through. A reservation never
confirmed provably never started: once its lease is over it is free again, never "unknown";
and a reservation whose reply was lost (the store applied it, the answer never came) is
released on this interceptor's next contact with the store, so a retry of a call that never
ran runs at once. Then:

- a successful result is recorded; when the store fails to record it (unreachable, say),
  the call raises the store's error and its key is marked unknown, never released, so the
  call that took effect is not run again by a retry;
- a failed, denied or pending call, or one that never started, releases the key, so it may
  be tried again; a call whose tool returned a value that cannot be turned into text did its
  work, so it keeps the key, marked unknown;
- a call whose outcome is unknown, because it timed out or was cancelled while running, or
  its tool returned but the round was aborted before the result came back, keeps the key,
  marked unknown (a result known when the round is cancelled is still recorded): an
  identical call is answered that the outcome is unknown (``result_unknown``) and is never
  run again by itself. When a synchronous tool that timed
  out finishes later, its real result is recorded under the key (or, if it failed, the key is
  released). A reservation older than ``lease`` seconds without a result (its process was
  lost) counts as unknown too. :meth:`InMemoryIdempotencyStore.delete` (every store has it)
  frees such a key once someone has checked what happened.

Identical calls in flight at the same time (two in one round, or in concurrent turns of this
process) run one after the other, so the second finds the first one's outcome; a live
reservation held by another process is waited for (``wait`` seconds).

When an approval changes the arguments, the changed call is keyed again before it runs: a
result recorded under its new key answers it, and its result is recorded under that key.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import contextlib
import logging
import math
import threading
import time
import uuid
from collections import OrderedDict
from collections.abc import Callable, Coroutine, Mapping
from dataclasses import dataclass, replace
from enum import StrEnum
from functools import partial
from typing import Any, Protocol, runtime_checkable

from toolrelay._sync import run_sync
from toolrelay.exceptions import ConfigurationError, StorageError
from toolrelay.execution import _feedback as feedback
from toolrelay.execution._canonical import canonical_json, sha256_hex
from toolrelay.execution._interception import ArgumentsCheck, Proceed, ToolInvocation
from toolrelay.execution._result import ToolCallOutcome, ToolCallStatus
from toolrelay.messages import ToolResponse
from toolrelay.tools._base import IdempotencyKey, Tool, ToolContext, check_seconds

__all__ = [
    "DEFAULT_LEASE",
    "DEFAULT_MAX_ENTRIES",
    "DEFAULT_WAIT",
    "IdempotencyInterceptor",
    "IdempotencyStore",
    "InMemoryIdempotencyStore",
    "Reservation",
    "ReservationStatus",
    "call_fingerprint",
    "idempotency_key",
    "process_idempotency",
]

_log = logging.getLogger("toolrelay.execution._idempotency")

DEFAULT_LEASE = 300.0
"""Seconds after which a reservation whose result never came counts as unknown (owner lost)."""
DEFAULT_WAIT = 30.0
"""Seconds a call waits for an identical call running in another process."""
DEFAULT_MAX_ENTRIES = 100_000
"""Keys an :class:`InMemoryIdempotencyStore` holds at most."""


def idempotency_key(tool: Tool, arguments: Mapping[str, Any], context: ToolContext) -> str | None:
    """The key of a call of ``tool``, or ``None`` when the tool declares none.

    Raises:
        ConfigurationError: A key function returned something other than a non-empty string.
        Exception: Whatever the tool's key function raises (e.g. ``KeyError`` for a
            missing argument).
    """
    spec = tool.metadata.idempotency_key
    if spec is None:
        return None
    name = tool.definition.name
    if callable(spec):
        key = spec(dict(arguments), context)
        if not isinstance(key, str) or not key:
            raise ConfigurationError(
                f"the idempotency key function of tool {name!r} returned {key!r}; "
                "it must return a non-empty string"
            )
        return key
    identity: dict[str, Any] = {"arguments": {n: arguments.get(n) for n in _key_names(spec)}}
    scope = tool.metadata.idempotency_scope
    if scope != "global":
        identity["tenant"] = context.tenant_id
    if scope == "user":
        user = context.user_id
        identity["user"] = user
        if user is None or user == "":
            identity["session"] = context.session_id  # an anonymous caller: its session
    return f"{name}:{sha256_hex(canonical_json(identity))}"


def call_fingerprint(tool: Tool, arguments: Mapping[str, Any]) -> str:
    """The digest of a call: its tool's name and all of its (validated) arguments.

    Recorded with the call's idempotency key, it tells a repeat of the call (replayed) from
    another call that happens to have the same key (refused).
    """
    identity = {"tool": tool.definition.name, "arguments": dict(arguments)}
    return sha256_hex(canonical_json(identity))


def _key_names(spec: IdempotencyKey | None) -> tuple[str, ...]:
    """The argument names a key is made of (none for a key function)."""
    if spec is None or callable(spec):
        return ()
    return (spec,) if isinstance(spec, str) else tuple(spec)


# --- stores ------------------------------------------------------------------------------------


class ReservationStatus(StrEnum):
    """What :meth:`IdempotencyStore.reserve` found."""

    ACQUIRED = "acquired"
    """The caller now holds the key: run, then ``complete`` or ``release`` it."""
    COMPLETED = "completed"
    """A result is recorded under the key (``Reservation.result``)."""
    RUNNING = "running"
    """Another owner holds a live reservation; its result is not recorded yet."""
    UNKNOWN = "unknown"
    """A run under the key may or may not have taken effect: it timed out or was cancelled
    while running, or its owner was lost (a reservation older than its lease). The key stays
    taken until a result is recorded, the entry expires, or it is deleted."""


@dataclass(frozen=True, kw_only=True)
class Reservation:
    """The answer of :meth:`IdempotencyStore.reserve`.

    Attributes:
        status: What the store found.
        result: The recorded result when ``status`` is ``COMPLETED``.
        fingerprint: Unless ``ACQUIRED``: the fingerprint of the arguments of the call that
            holds the key (``""`` when it was reserved without one).
        summary: Unless ``ACQUIRED``: the readable summary of those arguments.
        ran_at: Unless ``ACQUIRED``: when that call took the key to run (seconds since the
            epoch, by the store's clock).
    """

    status: ReservationStatus
    result: str | None = None
    fingerprint: str = ""
    summary: str = ""
    ran_at: float | None = None


@runtime_checkable
class IdempotencyStore(Protocol):
    """Records results by idempotency key; shared by every process that must not run twice.

    Each method must be atomic for one key (two processes reserving the same key at the same
    moment: exactly one acquires it).

    With each key the store keeps what the call holding it was: the ``fingerprint`` of its
    arguments, their readable ``summary``, and when it took the key (``ran_at``, by the
    store's clock); :meth:`reserve` reports them whenever it does not acquire the key, and
    writes nothing then, so a call it answers never changes the record.
    """

    async def reserve(
        self, key: str, *, owner: str, lease: float, fingerprint: str = "", summary: str = ""
    ) -> Reservation:
        """Give ``owner`` the key unless it has a result, a live reservation or an unknown outcome.

        Acquiring records ``fingerprint``, ``summary`` and the time with the key. A
        confirmed reservation older than ``lease`` seconds without a result (its owner was
        lost while it ran) is reported as ``UNKNOWN``, never taken over; an unconfirmed one
        (its run never started) is taken over.
        """
        ...

    async def confirm(self, key: str, *, owner: str) -> bool:
        """Mark ``owner``'s reservation as started, right before its tool starts.

        Returns:
            Whether ``owner`` still holds the reservation (``False``: another owner took it
            over, and this run must not start).
        """
        ...

    async def complete(
        self, key: str, *, owner: str, result: str, fingerprint: str = "", summary: str = ""
    ) -> None:
        """Record ``owner``'s result (kept when a result is already recorded).

        ``ran_at`` stays that of ``owner``'s reservation (now when it has none); the
        ``fingerprint`` and ``summary`` given replace the reservation's when not empty.
        """
        ...

    async def release(self, key: str, *, owner: str) -> None:
        """Drop ``owner``'s reservation or unknown mark (nothing if it holds neither)."""
        ...

    async def mark_unknown(
        self, key: str, *, owner: str, fingerprint: str = "", summary: str = ""
    ) -> None:
        """Keep ``owner``'s reservation as an unknown outcome (see ``ReservationStatus``).

        What it records with the key is kept as :meth:`complete` keeps it.
        """
        ...


@dataclass(kw_only=True)
class _Entry:
    owner: str | None
    result: str | None
    since: float  # when last written: the ttl and the lease count from here
    lease: float = 0.0
    unknown: bool = False
    fingerprint: str = ""
    summary: str = ""
    ran_at: float = 0.0
    started: bool = True  # a reservation not confirmed yet: its run never started

    def reservation(self, now: float) -> Reservation:
        return Reservation(
            status=self.status(now),
            result=self.result,
            fingerprint=self.fingerprint,
            summary=self.summary,
            ran_at=self.ran_at,
        )

    def kept(
        self, owner: str, fingerprint: str, summary: str, now: float
    ) -> tuple[str, str, float]:
        """What a write by ``owner`` records: its reservation's, unless it gives new ones."""
        if self.owner != owner:
            return fingerprint, summary, now
        return fingerprint or self.fingerprint, summary or self.summary, self.ran_at

    def status(self, now: float) -> ReservationStatus:
        if self.result is not None:
            return ReservationStatus.COMPLETED
        if self.unknown or now - self.since >= self.lease:
            return ReservationStatus.UNKNOWN
        return ReservationStatus.RUNNING

    def abandoned(self, now: float) -> bool:
        """A reservation whose lease ended before its run started: free to take."""
        return not self.started and self.result is None and now - self.since >= self.lease


class InMemoryIdempotencyStore:
    """Results of one process, in a dict.

    Args:
        ttl: Seconds a recorded result or unknown outcome is kept; ``None`` keeps it for the
            store's life (then ``max_entries`` alone bounds the store).
        max_entries: Keys held at most. Expired entries are dropped as the store is used;
            when it is full all the same, the oldest recorded results are forgotten first
            (logged: an identical call would run again), and a new reservation is refused
            with :class:`~toolrelay.exceptions.StorageError` when only live reservations and
            unknown outcomes are left.
        clock: Current time in seconds (for tests).

    Raises:
        ConfigurationError: ``ttl`` or ``max_entries`` is out of range.
    """

    def __init__(
        self,
        *,
        ttl: float | None = None,
        max_entries: int = DEFAULT_MAX_ENTRIES,
        clock: Callable[[], float] = time.time,
    ) -> None:
        check_seconds("ttl", ttl)
        if isinstance(max_entries, bool) or not isinstance(max_entries, int) or max_entries < 1:
            raise ConfigurationError(f"max_entries must be an integer >= 1, not {max_entries!r}")
        self.ttl = ttl
        self.max_entries = max_entries
        self._clock = clock
        # Oldest first: every write moves its key to the end, so expiry is a sweep from the
        # front that stops at the first entry still kept (amortised O(1) per operation).
        self._entries: OrderedDict[str, _Entry] = OrderedDict()
        self._lock = threading.Lock()  # one store may serve several threads' event loops

    def _expired(self, entry: _Entry, now: float) -> bool:
        if self.ttl is None or now - entry.since < self.ttl:
            return False
        return entry.status(now) is not ReservationStatus.RUNNING  # a live run stays

    def _get(self, key: str, now: float) -> _Entry | None:
        entry = self._entries.get(key)
        if entry is not None and (self._expired(entry, now) or entry.abandoned(now)):
            del self._entries[key]
            return None
        return entry

    def _put(self, key: str, entry: _Entry) -> None:
        self._entries.pop(key, None)
        self._entries[key] = entry

    def _sweep(self, now: float) -> None:
        while self._entries:
            key, entry = next(iter(self._entries.items()))
            if not self._expired(entry, now):
                break
            del self._entries[key]

    def _make_room(self, now: float) -> None:
        """Below ``max_entries`` before a new key goes in: forget the oldest results."""
        self._sweep(now)
        if len(self._entries) < self.max_entries:
            return
        excess = len(self._entries) - self.max_entries + 1
        results = [k for k, e in self._entries.items() if e.result is not None][:excess]
        for key in results:
            del self._entries[key]
        if results:
            _log.warning(
                "the in-memory idempotency store is full (%d keys): forgot the %d oldest "
                "recorded results before their time; identical calls would run again. Raise "
                "max_entries or lower ttl.",
                self.max_entries,
                len(results),
            )
        if len(self._entries) >= self.max_entries:
            raise StorageError(
                f"the in-memory idempotency store is full: {len(self._entries)} keys are live "
                "reservations or unknown outcomes; raise max_entries, or delete() keys whose "
                "outcome has been checked"
            )

    async def reserve(
        self, key: str, *, owner: str, lease: float, fingerprint: str = "", summary: str = ""
    ) -> Reservation:
        """See :meth:`IdempotencyStore.reserve`."""
        with self._lock:
            now = self._clock()
            self._sweep(now)
            entry = self._get(key, now)
            if entry is not None:
                return entry.reservation(now)
            self._make_room(now)
            self._put(
                key,
                _Entry(
                    owner=owner,
                    result=None,
                    since=now,
                    lease=lease,
                    fingerprint=fingerprint,
                    summary=summary,
                    ran_at=now,
                    started=False,
                ),
            )
            return Reservation(status=ReservationStatus.ACQUIRED)

    async def confirm(self, key: str, *, owner: str) -> bool:
        """See :meth:`IdempotencyStore.confirm`."""
        with self._lock:
            now = self._clock()
            entry = self._get(key, now)
            if entry is None or entry.owner != owner or entry.result is not None:
                return False
            entry.started = True
            entry.since = now  # the lease of the run counts from its start
            return True

    async def complete(
        self, key: str, *, owner: str, result: str, fingerprint: str = "", summary: str = ""
    ) -> None:
        """See :meth:`IdempotencyStore.complete`."""
        with self._lock:
            now = self._clock()
            entry = self._get(key, now)
            if entry is None or entry.result is None:
                self._record(key, entry, owner, fingerprint, summary, now, result=result)

    def _record(
        self,
        key: str,
        entry: _Entry | None,
        owner: str,
        fingerprint: str,
        summary: str,
        now: float,
        *,
        result: str | None = None,
        unknown: bool = False,
    ) -> None:
        """Write ``key``'s result, or that its outcome is unknown.

        The reservation's fingerprint, summary and time are kept unless the writer gives new ones.
        """
        if entry is None:
            self._make_room(now)
            fingerprint, summary, ran_at = fingerprint, summary, now
        else:
            fingerprint, summary, ran_at = entry.kept(owner, fingerprint, summary, now)
        self._put(
            key,
            _Entry(
                # A result frees the key's owner; an unknown outcome keeps it as reserved.
                owner=None if result is not None else owner,
                result=result,
                since=now,
                unknown=unknown,
                fingerprint=fingerprint,
                summary=summary,
                ran_at=ran_at,
            ),
        )

    async def release(self, key: str, *, owner: str) -> None:
        """See :meth:`IdempotencyStore.release`."""
        with self._lock:
            entry = self._entries.get(key)
            if entry is not None and entry.result is None and entry.owner == owner:
                del self._entries[key]
            self._sweep(self._clock())

    async def mark_unknown(
        self, key: str, *, owner: str, fingerprint: str = "", summary: str = ""
    ) -> None:
        """See :meth:`IdempotencyStore.mark_unknown`."""
        with self._lock:
            now = self._clock()
            entry = self._get(key, now)
            if entry is not None and (entry.result is not None or entry.owner != owner):
                return  # a result, or another owner's entry: nothing of ours to mark
            self._record(key, entry, owner, fingerprint, summary, now, unknown=True)

    async def delete(self, key: str) -> None:
        """Forget ``key``: its result, reservation or unknown outcome (if it has any)."""
        with self._lock:
            self._entries.pop(key, None)

    def __len__(self) -> int:
        return len(self._entries)


# --- the interceptor ---------------------------------------------------------------------------


class _KeyLocks:
    """One lock per call in use, so identical calls of one event loop run one after the other.

    Locks belong to the loop that made them (blocking calls each run on a loop of their
    own); calls on different loops are kept apart by the store's reservations instead.
    """

    def __init__(self) -> None:
        self._locks: dict[tuple[int, str], tuple[asyncio.Lock, int]] = {}

    async def acquire(self, key: str) -> None:
        slot = (id(asyncio.get_running_loop()), key)
        lock, users = self._locks.get(slot, (asyncio.Lock(), 0))
        self._locks[slot] = (lock, users + 1)
        try:
            await lock.acquire()
        except BaseException:
            self._drop(slot)
            raise

    def release(self, key: str) -> None:
        slot = (id(asyncio.get_running_loop()), key)
        self._locks[slot][0].release()
        self._drop(slot)

    def _drop(self, slot: tuple[int, str]) -> None:
        lock, users = self._locks[slot]
        if users == 1:
            del self._locks[slot]  # keyed by arguments: keeping every lock would leak
        else:
            self._locks[slot] = (lock, users - 1)


class IdempotencyInterceptor:
    """Answers repeated calls with their recorded result (see the module docs).

    Args:
        store: Where results are recorded; an :class:`InMemoryIdempotencyStore` by default.
        lease: Seconds after which a reservation without a result counts as abandoned; keep
            it above the longest run of any idempotent tool.
        wait: Seconds to wait for an identical call running in another process; then the
            call is answered with an error asking the model to try again later.
        poll_interval: First pause between looks at such a reservation (doubling, at most
            one second).
    """

    def __init__(
        self,
        store: IdempotencyStore | None = None,
        *,
        lease: float = DEFAULT_LEASE,
        wait: float = DEFAULT_WAIT,
        poll_interval: float = 0.05,
    ) -> None:
        if not (math.isfinite(lease) and math.isfinite(wait) and math.isfinite(poll_interval)):
            raise ConfigurationError("lease, wait and poll_interval must be finite numbers")
        if lease <= 0 or wait < 0 or poll_interval <= 0:
            raise ConfigurationError("lease and poll_interval must be > 0, wait >= 0")
        self.store: IdempotencyStore = store if store is not None else InMemoryIdempotencyStore()
        self.lease = lease
        self.wait = wait
        self.poll_interval = poll_interval
        self._locks = _KeyLocks()
        self._settling: set[asyncio.Task[None]] = set()  # late results being recorded
        # Reservations the store may hold though its answer never came: released at the next
        # contact, so a retry of a call that never started is not kept waiting.
        self._unsettled: set[tuple[str, str]] = set()

    async def __call__(self, invocation: ToolInvocation, proceed: Proceed, /) -> ToolCallOutcome:
        """Replay the recorded result, or run the call and record a successful result."""
        key = _key_or_answer(invocation)
        if isinstance(key, ToolCallOutcome):
            return key
        if key is None:
            return await proceed(invocation)
        return await self._keyed(key, invocation, proceed)

    async def _keyed(
        self, key: str, invocation: ToolInvocation, proceed: Proceed
    ) -> ToolCallOutcome:
        values = invocation.arguments.values
        call = _Call(
            fingerprint=call_fingerprint(invocation.tool, values),
            summary=feedback.arguments_summary(values),
        )
        # Identical calls take turns; a call reusing the key with other arguments does not
        # queue behind them: the store refuses it at once.
        slot = f"{key}\x00{call.fingerprint}"
        await self._locks.acquire(slot)
        owner = uuid.uuid4().hex
        held, moved, ran = True, False, False
        outer_check = invocation.arguments_check

        async def check(changed: ToolInvocation, inner: Proceed) -> ToolCallOutcome:
            """Arguments changed inside the chain (an approval's edit): key them again."""
            nonlocal call, held, moved
            changed = replace(changed, arguments_check=outer_check)
            new_key = _key_or_answer(changed)
            if isinstance(new_key, ToolCallOutcome):
                return new_key
            if new_key != key:
                moved = True  # the run belongs to the new key; this one stays free
                await self.store.release(key, owner=owner)
                self._locks.release(slot)
                held = False
            if new_key is None or new_key == key:
                # The key records what runs under it: a repeat of the edited call replays.
                edited = changed.arguments.values
                call = _Call(
                    fingerprint=call_fingerprint(changed.tool, edited),
                    summary=feedback.arguments_summary(edited),
                )
                return await _continue(changed, inner)
            return await self._keyed(
                new_key,
                changed,
                lambda c: _continue(replace(c, arguments_check=outer_check), inner),
            )

        outcome: ToolCallOutcome | None = None
        reserving = True
        try:
            await self._settle_lost()
            reservation = await self._reserve(key, owner, call)
            reserving = False
            if call.conflicts_with(reservation):
                return _conflict(invocation, key, reservation)
            if reservation.status is ReservationStatus.COMPLETED:
                assert reservation.result is not None  # a completed reservation has its result
                return _replayed(invocation, key, reservation)
            if reservation.status is ReservationStatus.RUNNING:
                return _busy(invocation, key)
            if reservation.status is ReservationStatus.UNKNOWN:
                return _unknown(invocation, key, reservation)
            # Confirmed right before the tool starts (after approval): until then, a lost
            # owner leaves a reservation that provably never ran.
            invocation.progress.confirm = partial(self.store.confirm, key, owner=owner)
            outcome = await proceed(replace(invocation, arguments_check=check))
            if moved:
                return outcome
            if outcome.ok:
                ran = True  # it took effect: failing to record that must not free the key
                await self.store.complete(
                    key, owner=owner, result=outcome.result_text, **call.recorded()
                )
            elif outcome.result_unknown:
                await self.store.mark_unknown(key, owner=owner, **call.recorded())
                if outcome.late_result is not None:
                    self._record_late(key, owner, call, outcome.late_result)
                data = outcome.response.data + feedback.result_unknown()
                outcome = replace(outcome, response=replace(outcome.response, data=data))
            elif invocation.progress.returned:
                # The body did its work, but its result could not become text: no answer to
                # replay, and running it again would do the work twice.
                await self.store.mark_unknown(key, owner=owner, **call.recorded())
                data = outcome.response.data + feedback.not_run_again()
                outcome = replace(outcome, response=replace(outcome.response, data=data))
            else:
                await self.store.release(key, owner=owner)
            return replace(outcome, idempotency_key=key)
        except BaseException as error:
            if reserving:
                # The store may have applied a reservation whose answer was lost.
                self._unsettled.add((key, owner))
            if not moved:
                with contextlib.suppress(Exception):  # the original error matters more
                    # An Exception once it ran is the store failing to record the result.
                    store_failed = ran and isinstance(error, Exception)
                    await self._after_interruption(
                        key, owner, call, invocation, outcome, store_failed
                    )
                    self._unsettled.discard((key, owner))
            raise
        finally:
            if held:
                self._locks.release(slot)

    async def _after_interruption(
        self,
        key: str,
        owner: str,
        call: _Call,
        invocation: ToolInvocation,
        outcome: ToolCallOutcome | None,
        store_failed: bool,
    ) -> None:
        """Leave ``key`` as a call that raised or was cancelled left its operation.

        Released only when the operation certainly did not take effect: its body never began,
        or ended with an exception of its own. A body that returned has done its work even
        when the round is cancelled before its result is recorded; when the store itself
        failed to record it (``store_failed``), the key is marked unknown instead.
        """
        progress = invocation.progress
        if outcome is not None and outcome.ok and not store_failed:
            await self.store.complete(
                key, owner=owner, result=outcome.result_text, **call.recorded()
            )
        elif store_failed or progress.returned or progress.interrupted:  # it (may have) acted
            await self.store.mark_unknown(key, owner=owner, **call.recorded())
        else:
            await self.store.release(key, owner=owner)

    async def _settle_lost(self) -> None:
        """Release the reservations whose answers were lost (each once the store answers)."""
        for key, owner in list(self._unsettled):
            with contextlib.suppress(Exception):  # still unreachable: tried again next time
                await self.store.release(key, owner=owner)
                self._unsettled.discard((key, owner))

    def _record_late(
        self, key: str, owner: str, call: _Call, late: concurrent.futures.Future[str]
    ) -> None:
        """When the timed-out body ends, record its result (or release the key if it failed).

        The body ends in its worker thread; the store is written from this event loop when it
        still runs, else on a loop of the worker thread's own.
        """
        loop = asyncio.get_running_loop()

        def settle() -> Coroutine[Any, Any, None]:
            return self._settle(key, owner, call, late)

        def spawn() -> None:
            task = loop.create_task(settle())
            self._settling.add(task)
            task.add_done_callback(self._settling.discard)

        def ended(_: concurrent.futures.Future[str]) -> None:
            try:
                loop.call_soon_threadsafe(spawn)
            except RuntimeError:  # the loop is closed (a blocking call has returned)
                run_sync(settle())

        late.add_done_callback(ended)

    async def _settle(
        self, key: str, owner: str, call: _Call, late: concurrent.futures.Future[str]
    ) -> None:
        try:
            error = late.exception()
            if error is None:
                await self.store.complete(key, owner=owner, result=late.result(), **call.recorded())
                _log.info("the late result of %r is recorded", key)
            else:
                await self.store.release(key, owner=owner)
                _log.info("the timed-out run of %r failed later; the key is free", key)
        except Exception:
            _log.exception("could not record the late outcome of %r; it stays unknown", key)

    async def _reserve(self, key: str, owner: str, call: _Call) -> Reservation:
        """Reserve ``key``, waiting up to ``wait`` seconds while another process runs it.

        A reservation of the key by a call with other arguments is not waited for: whatever
        becomes of it, this call is refused.
        """
        deadline = time.monotonic() + self.wait
        pause = self.poll_interval
        while True:
            reservation = await self._reserve_once(key, owner, call)
            left = deadline - time.monotonic()
            if (
                reservation.status is not ReservationStatus.RUNNING
                or left <= 0
                or call.conflicts_with(reservation)
            ):
                return reservation
            await asyncio.sleep(min(pause, left))
            pause = min(pause * 2, 1.0)

    async def _reserve_once(self, key: str, owner: str, call: _Call) -> Reservation:
        """One ``store.reserve``; cancelled, it waits for the store and gives the key back.

        A store working in a thread or across a network may take the key after the caller
        was cancelled: released before that, the key would stay taken by nobody until its
        lease ends, and every identical call would wait for it.
        """
        asked = asyncio.ensure_future(
            self.store.reserve(key, owner=owner, lease=self.lease, **call.recorded())
        )
        try:
            return await asyncio.shield(asked)
        except asyncio.CancelledError:
            with contextlib.suppress(Exception):  # the cancellation matters more
                if (await asked).status is ReservationStatus.ACQUIRED:
                    await self.store.release(key, owner=owner)
            raise


@dataclass(frozen=True, kw_only=True)
class _Call:
    """What the store records of a keyed call besides its key."""

    fingerprint: str
    summary: str

    def recorded(self) -> dict[str, str]:
        return {"fingerprint": self.fingerprint, "summary": self.summary}

    def conflicts_with(self, reservation: Reservation) -> bool:
        """Whether the key is held by a call with other arguments (reserved with them)."""
        return (
            reservation.status is not ReservationStatus.ACQUIRED
            and bool(reservation.fingerprint)
            and reservation.fingerprint != self.fingerprint
        )


def _key_or_answer(invocation: ToolInvocation) -> str | ToolCallOutcome | None:
    """The call's key (``None``: its tool declares none), or the answer when it has none."""
    try:
        return idempotency_key(invocation.tool, invocation.arguments.values, invocation.context)
    except ConfigurationError:
        raise  # a broken key function is the developer's to fix, not the model's
    except Exception as exc:
        text = (
            f"Tool {invocation.tool_name!r} did not run: its idempotency key could not be "
            f"derived from the arguments ({type(exc).__name__}: {exc})."
        )
        return replace(_answer(invocation, None, text, ToolCallStatus.ERROR), exception=exc)


async def _continue(invocation: ToolInvocation, proceed: Proceed) -> ToolCallOutcome:
    """Go on through the next outer arguments check, if any, else to ``proceed``."""
    check: ArgumentsCheck | None = invocation.arguments_check
    if check is None:
        return await proceed(invocation)
    return await check(replace(invocation, arguments_check=None), proceed)


def _answer(
    invocation: ToolInvocation, key: str | None, text: str, status: ToolCallStatus, **extra: Any
) -> ToolCallOutcome:
    call, name = invocation.call, invocation.tool_name
    return ToolCallOutcome(
        call=call,
        tool_name=name,
        response=ToolResponse(
            id=call.id, name=name, data=text, is_error=status is not ToolCallStatus.OK
        ),
        status=status,
        idempotency_key=key,
        **extra,
    )


def _replayed(invocation: ToolInvocation, key: str, reservation: Reservation) -> ToolCallOutcome:
    _log.debug("call %r answered with the result recorded under %r", invocation.call.id, key)
    result = reservation.result or ""
    return _answer(
        invocation,
        key,
        feedback.replayed(reservation.ran_at) + result,
        ToolCallStatus.OK,
        replayed=True,
        recorded_result=result,
        recorded_at=reservation.ran_at,
    )


def _conflict(invocation: ToolInvocation, key: str, reservation: Reservation) -> ToolCallOutcome:
    _log.info(
        "call %r refused: its idempotency key %r is held by a call with other arguments",
        invocation.call.id,
        key,
    )
    state = {ReservationStatus.RUNNING: "running", ReservationStatus.UNKNOWN: "unknown"}
    text = feedback.idempotency_conflict(
        invocation.tool_name,
        ran_at=reservation.ran_at,
        summary=reservation.summary,
        state=state.get(reservation.status, "ran"),
        key_arguments=_key_names(invocation.tool.metadata.idempotency_key),
    )
    return _answer(
        invocation,
        key,
        text,
        ToolCallStatus.IDEMPOTENCY_CONFLICT,
        recorded_at=reservation.ran_at,
    )


def _unknown(invocation: ToolInvocation, key: str, reservation: Reservation) -> ToolCallOutcome:
    text = feedback.earlier_result_unknown(invocation.tool_name)
    return _answer(
        invocation,
        key,
        text,
        ToolCallStatus.ERROR,
        result_unknown=True,
        recorded_at=reservation.ran_at,
    )


def _busy(invocation: ToolInvocation, key: str) -> ToolCallOutcome:
    text = (
        f"An identical call of tool {invocation.tool_name!r} is still running elsewhere. "
        "Call it again later to get its result."
    )
    return _answer(invocation, key, text, ToolCallStatus.ERROR)


# Every manager without ``idempotency=`` shares it: a declared key runs once per process,
# whichever client, gateway, bridge or converted tool runs its tool.
_process = IdempotencyInterceptor(InMemoryIdempotencyStore())


def process_idempotency() -> IdempotencyInterceptor:
    """The idempotency step of every manager configured without a store of its own.

    Its :class:`InMemoryIdempotencyStore` is the process's: it lives as long as the process,
    shared by every client, gateway, bridge and converted tool, so a declared key never runs
    twice in one process. Several processes share a Redis or SQLite store instead
    (``idempotency=``). Tests that need a clean slate use
    :func:`toolrelay.testing.isolated_idempotency`.
    """
    return _process
