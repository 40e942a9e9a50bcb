"""What a run of requests costs under a provider's prompt cache.

A request is a sequence of :class:`Block` s in the order the provider reads it (tools, then
system, then messages), each holding its tokens and whether the request marks it as a cache
breakpoint. A cache object is fed a run's requests in order and answers, per request, how
many of its input tokens were read from the cache, written to it, and processed uncached
(:class:`Priced`). The rules, as published by the providers (cited in docs/benchmarks.md):

- :class:`AnthropicCache`: explicit breakpoints (``cache_control``). At each breakpoint the
  API looks for a cached prefix ending there, then at the earlier block boundaries, up to
  ``lookback`` (20) blocks back; the longest hit is read. The prefix up to the last
  breakpoint past what was read is written, when it is at least ``minimum`` tokens long
  (1,024 for Sonnet/Opus-class models). Entries are only made at breakpoints. Cost: uncached
  ×1, written ×1.25 (5-minute TTL), read ×0.1. The run is assumed to fit in the TTL.
- :class:`PrefixCache` (OpenAI, automatic): a prompt of at least ``minimum`` (1,024) tokens
  reads the longest prefix it shares with an earlier prompt of the run, in whole ``step``
  (128-token) increments, and only from ``minimum`` tokens on. No write surcharge.
- :class:`PrefixCache` (a vLLM-style server, automatic): the same with no minimum and 16-token
  blocks, and the last prompt token is always computed. Reported as tokens evaluated anew.
"""

from __future__ import annotations

import hashlib
from array import array
from collections.abc import Sequence
from dataclasses import dataclass


@dataclass(frozen=True, kw_only=True)
class Block:
    """One content block of a request: its tokens, and whether it carries ``cache_control``."""

    tokens: tuple[int, ...]
    breakpoint: bool = False


@dataclass(frozen=True, kw_only=True)
class Priced:
    """The input tokens of one request (or a sum of them), split by what the cache did."""

    uncached: int = 0
    written: int = 0
    read: int = 0

    @property
    def tokens(self) -> int:
        return self.uncached + self.written + self.read

    def cost(self, rates: Rates) -> float:
        """The cost in units of one uncached input token."""
        return self.uncached + rates.write * self.written + rates.read * self.read

    def __add__(self, other: Priced) -> Priced:
        return Priced(
            uncached=self.uncached + other.uncached,
            written=self.written + other.written,
            read=self.read + other.read,
        )


@dataclass(frozen=True, kw_only=True)
class Rates:
    """Prices of cache writes and reads, as multiples of the base input price."""

    write: float
    read: float


ANTHROPIC_RATES = Rates(write=1.25, read=0.1)
"""Anthropic: 5-minute cache writes at 1.25×, cache reads at 0.1× the base input price."""
OPENAI_RATES = Rates(write=1.0, read=0.1)
"""OpenAI, gpt-5 family: cached input at 0.1× (gpt-4.1: 0.25×, gpt-4o: 0.5×); no surcharge."""


class AnthropicCache:
    """Anthropic's prompt cache over one run: entries are the prefixes written at breakpoints."""

    def __init__(self, *, minimum: int = 1024, lookback: int = 20) -> None:
        self.minimum = minimum
        self.lookback = lookback
        self._entries: set[bytes] = set()

    def send(self, blocks: Sequence[Block]) -> Priced:
        ends: list[int] = []  # tokens up to and including block i
        for block in blocks:
            ends.append((ends[-1] if ends else 0) + len(block.tokens))
        total = ends[-1] if ends else 0
        keys = _prefix_keys(blocks)
        marks = [i for i, block in enumerate(blocks) if block.breakpoint]
        read_at = -1  # the last block of the prefix read from the cache
        for mark in marks:
            for position in range(mark, max(mark - self.lookback, 0) - 1, -1):
                if position > read_at and keys[position] in self._entries:
                    read_at = position
                    break
        read = ends[read_at] if read_at >= 0 else 0
        written_at = read_at
        for mark in marks:
            if mark > read_at and ends[mark] >= self.minimum:
                self._entries.add(keys[mark])
                written_at = mark
        written = ends[written_at] - read if written_at > read_at else 0
        return Priced(uncached=total - read - written, written=written, read=read)


class PrefixCache:
    """Automatic prefix caching: the longest prefix shared with an earlier prompt, in steps."""

    def __init__(self, *, minimum: int, step: int, keep_last: bool = False) -> None:
        self.minimum = minimum
        self.step = step
        self.keep_last = keep_last  # the last prompt token is always computed (vLLM)
        self._seen: list[Sequence[Block]] = []

    def send(self, blocks: Sequence[Block]) -> Priced:
        total = sum(len(b.tokens) for b in blocks)
        if total < self.minimum:
            return Priced(uncached=total)
        shared = max((_shared_prefix(blocks, earlier) for earlier in self._seen), default=0)
        self._seen.append(blocks)
        if self.keep_last:
            shared = min(shared, total - 1)
        read = shared // self.step * self.step
        if read < self.minimum:
            read = 0
        return Priced(uncached=total - read, read=read)


def _prefix_keys(blocks: Sequence[Block]) -> list[bytes]:
    """A digest per block of everything up to and including it (what a cache entry is)."""
    keys: list[bytes] = []
    previous = b""
    for block in blocks:
        digest = hashlib.sha256(previous)
        digest.update(array("q", block.tokens).tobytes())
        digest.update(b"|")  # a block boundary
        previous = digest.digest()
        keys.append(previous)
    return keys


def _shared_prefix(a: Sequence[Block], b: Sequence[Block]) -> int:
    """How many tokens the two requests share from their start."""
    shared = 0
    for left, right in zip(a, b, strict=False):
        if left.tokens == right.tokens:
            shared += len(left.tokens)
            continue
        for x, y in zip(left.tokens, right.tokens, strict=False):
            if x != y:
                break
            shared += 1
        break
    return shared
