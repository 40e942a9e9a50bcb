"""A clean idempotency slate for one test, without making the library forget."""

from __future__ import annotations

import contextlib
from collections.abc import Iterator

from toolrelay.execution import IdempotencyInterceptor, InMemoryIdempotencyStore, _idempotency

__all__ = ["isolated_idempotency"]


@contextlib.contextmanager
def isolated_idempotency() -> Iterator[InMemoryIdempotencyStore]:
    """Give the process's idempotency step a fresh in-memory store until the block ends.

    Every manager built without ``idempotency=`` records results in the process's store for
    the life of the process (a declared key never runs twice). A test that runs the same
    keyed call as another test, and expects it to run, wraps itself in this (or gives its
    manager ``idempotency=InMemoryIdempotencyStore()``)::

        @pytest.fixture(autouse=True)
        def clean_idempotency():
            with isolated_idempotency():
                yield

    Yields:
        The fresh store, to look into.
    """
    store = InMemoryIdempotencyStore()
    previous = _idempotency._process
    _idempotency._process = IdempotencyInterceptor(store)
    try:
        yield store
    finally:
        _idempotency._process = previous
