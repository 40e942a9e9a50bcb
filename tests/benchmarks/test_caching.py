"""The prompt-cache rules the token benchmark prices its requests with, on hand-made requests."""

from __future__ import annotations

from ._scripts import BENCHMARKS, load_script

_caching = load_script(BENCHMARKS / "_caching.py", "_caching")
ANTHROPIC_RATES = _caching.ANTHROPIC_RATES
OPENAI_RATES = _caching.OPENAI_RATES
AnthropicCache = _caching.AnthropicCache
Block = _caching.Block
PrefixCache = _caching.PrefixCache
Priced = _caching.Priced

_next = iter(range(10**9))


def block(size: int, *, breakpoint: bool = False) -> Block:
    """A block of ``size`` tokens no other block shares."""
    return Block(tokens=tuple(next(_next) for _ in range(size)), breakpoint=breakpoint)


def marked(blocks: list[Block], position: int) -> list[Block]:
    """``blocks`` with the breakpoint on the block at ``position`` only."""
    return [Block(tokens=b.tokens, breakpoint=i == position) for i, b in enumerate(blocks)]


# --- Anthropic ------------------------------------------------------------------------------


def test_a_breakpoint_written_once_is_read_by_the_next_request() -> None:
    cache = AnthropicCache()
    tools = [block(600), block(500, breakpoint=True)]
    system = block(100, breakpoint=True)
    first = cache.send([*tools, system, block(50)])
    assert first == Priced(uncached=50, written=1200, read=0)
    second = cache.send([*tools, system, block(50), block(30), block(20)])
    assert second == Priced(uncached=100, written=0, read=1200)
    assert second.cost(ANTHROPIC_RATES) == 100 + 0.1 * 1200
    assert first.cost(ANTHROPIC_RATES) == 50 + 1.25 * 1200


def test_a_changed_tool_list_misses_and_writes_again() -> None:
    cache = AnthropicCache()
    search = block(200)
    system = block(900, breakpoint=True)
    cache.send([search, block(300, breakpoint=True), system, block(40)])
    # The next step shows another tool: the tools come first, so nothing after them matches.
    changed = cache.send([search, block(300, breakpoint=True), system, block(40)])
    assert changed == Priced(uncached=40, written=1400, read=0)


def test_history_without_a_breakpoint_is_never_cached() -> None:
    cache = AnthropicCache()
    prefix = [block(1000), block(100, breakpoint=True)]
    history = [block(2000), block(2000)]
    cache.send([*prefix, *history])
    again = cache.send([*prefix, *history, block(10)])
    assert again == Priced(uncached=4010, written=0, read=1100)


def test_the_lookback_finds_an_entry_up_to_twenty_blocks_before_a_breakpoint() -> None:
    head = block(1100)
    tail = [block(5) for _ in range(25)]
    cache = AnthropicCache()
    cache.send(marked([head, *tail], 0))  # writes the prefix ending at the head
    near = cache.send(marked([head, *tail[:20]], 20))  # 20 blocks after the entry
    assert near.read == 1100
    assert near.written == 100  # the breakpoint's own prefix is written past what was read
    cache = AnthropicCache()
    cache.send(marked([head, *tail], 0))
    far = cache.send(marked([head, *tail[:21]], 21))  # 21 blocks after: out of reach
    assert far.read == 0
    assert far.written == 1205


def test_a_prefix_under_the_minimum_is_neither_written_nor_read() -> None:
    cache = AnthropicCache(minimum=1024)
    short = [block(1000, breakpoint=True), block(100)]
    assert cache.send(short) == Priced(uncached=1100)
    assert cache.send(short) == Priced(uncached=1100)
    haiku = AnthropicCache(minimum=2048)
    long = [block(1500, breakpoint=True)]
    assert haiku.send(long) == Priced(uncached=1500)


# --- OpenAI and a prefix-caching server -----------------------------------------------------


def test_openai_reads_the_shared_prefix_in_128_token_steps() -> None:
    cache = PrefixCache(minimum=1024, step=128)
    shared = [block(1000), block(300)]
    assert cache.send([*shared, block(10)]) == Priced(uncached=1310)
    # 1,300 tokens shared: 10 whole steps of 128 are read.
    assert cache.send([*shared, block(10)]) == Priced(uncached=30, read=1280)
    # Tokens shared within a block count too.
    partly = Block(tokens=shared[1].tokens[:200] + (-1,) * 100)
    assert cache.send([shared[0], partly]).read == 1152


def test_openai_caches_nothing_under_1024_tokens() -> None:
    cache = PrefixCache(minimum=1024, step=128)
    small = [block(900)]
    assert cache.send(small) == Priced(uncached=900)
    assert cache.send(small) == Priced(uncached=900)
    # A long prompt sharing only 1,000 tokens with an earlier one reads nothing.
    first = [block(1000), block(500)]
    cache.send(first)
    assert cache.send([first[0], block(500)]) == Priced(uncached=1500)
    assert OPENAI_RATES.write == 1.0  # no write surcharge


def test_a_server_reuses_whole_blocks_and_computes_the_last_token() -> None:
    server = PrefixCache(minimum=0, step=16, keep_last=True)
    prompt = [block(40), block(10)]
    assert server.send(prompt) == Priced(uncached=50)
    assert server.send([*prompt, block(7)]) == Priced(uncached=9, read=48)
    # The same prompt again: every whole block but the one holding the last token.
    assert server.send(prompt) == Priced(uncached=2, read=48)
    same = [block(32)]
    server.send(same)
    assert server.send(same) == Priced(uncached=16, read=16)
