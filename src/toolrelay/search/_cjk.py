"""Search terms for Chinese, Japanese and Korean text, which does not separate words by spaces.

A run of CJK characters (Han ideographs, kana, hangul) is cut three ways at once, so that a
tool and a query meet however either is phrased:

- **overlapping bigrams** (``退款失败`` → ``退款 款失 失败``), the standard for CJK search
  (Lucene's ``CJKBigramFilter``): they need no dictionary and match any two-character word;
- **single Han characters**, since one ideograph is often a word of its own (``查``, ``车``,
  ``票``) in short, colloquial requests;
- **dictionary words** of the Han parts from `jieba <https://github.com/fxsjy/jieba>`_ (its Rust
  port, ``rjieba``): words of three or more characters (``目的地``, ``信噪比``) are matched
  whole, and a real two-character word counts once more than a bigram that straddles two.

A run of one character is that character. Kana and hangul give bigrams only: a kana is a
sound, not a word, and Korean separates its words by spaces already. Terms that are
:data:`CHINESE_STOP_WORDS` are dropped. Nothing is stemmed.

Measured with BM25 on two Chinese tool-retrieval benchmarks (dev NDCG@10, tools indexed with
their parameters; ACEBench-zh / HammerBench-zh): bigrams alone 90.1 / 74.3, jieba words alone
86.3 / 68.4, bigrams and characters 90.7 / 80.3, all three 90.9 / 80.1, and all three with the
stop words dropped 91.8 / 81.6 (80.9 on HammerBench-zh without the dictionary words). jieba
in pure Python cuts the same words as ``rjieba``, about eight times as slowly.
"""

from __future__ import annotations

import importlib
import logging
import re
from collections.abc import Callable
from functools import lru_cache
from typing import cast

from toolrelay.tools._language import HAN, HANGUL, KANA

__all__ = [
    "CHINESE_STOP_WORDS",
    "CJK_RUN",
    "cjk_keywords",
    "cjk_terms",
    "has_cjk",
    "segmenter_available",
]

_log = logging.getLogger(__name__)

CJK_RUN = re.compile(f"[{HAN}{KANA}{HANGUL}]+")
"""A run of CJK characters: one unit of analysis, as a word is in spaced languages."""
_HAN_RUN = re.compile(f"[{HAN}]+")

# Words that say nothing about which tool is meant: particles, pronouns and the frames of a
# request (请 / 帮我 / 我想 / 一下 / 可以: "please", "help me", "I want", "a bit", "can").
# Dropped as whole terms only, so 的 goes but 目的 stays. Kept short on purpose: a shorter
# list (no 想 要 能 给 把 在 和 下) or a longer one (adding 有 就 也 都 需要 根据 通过 ...)
# measured no better on the Chinese benchmarks.
# fmt: off
CHINESE_STOP_WORDS: frozenset[str] = frozenset(
    {
        "的", "了", "是", "我", "你", "吗", "呢", "吧", "啊", "请", "帮", "帮我", "一下", "下",
        "我要", "我想", "想", "要", "能", "可以", "给", "把", "在", "和", "与", "及", "或",
        "一个", "这个", "那个", "什么", "怎么",
    }
)
# fmt: on


def has_cjk(text: str) -> bool:
    """Whether ``text`` has any CJK character."""
    return not text.isascii() and CJK_RUN.search(text) is not None


def cjk_terms(
    run: str, *, stop_words: frozenset[str] = CHINESE_STOP_WORDS, segment: bool = True
) -> list[str]:
    """The search terms of one run of CJK characters (see the module docstring).

    Args:
        run: CJK characters only, as :data:`CJK_RUN` finds them.
        stop_words: Terms to drop.
        segment: Add the dictionary words of the Han parts (when ``rjieba`` is installed).

    Returns:
        Bigrams, then single Han characters, then dictionary words; repeats kept.

    >>> cjk_terms("退款失败的订单", segment=False)
    ['退款', '款失', '失败', '败的', '的订', '订单', '退', '款', '失', '败', '订', '单']
    """
    if len(run) == 1:
        terms = [run]
    else:
        terms = [run[i : i + 2] for i in range(len(run) - 1)]
        for part in _HAN_RUN.findall(run):
            terms.extend(part)
    if segment:
        cut = _segmenter()
        if cut is not None:
            for part in _HAN_RUN.findall(run):
                terms.extend(cut(part))
    return [t for t in terms if t not in stop_words]


def cjk_keywords(run: str, *, stop_words: frozenset[str] = CHINESE_STOP_WORDS) -> list[str]:
    """The keywords of one CJK run for pattern search: its bigrams (a lone character alone).

    Single characters of a longer run are left out: almost every text would match one.

    >>> cjk_keywords("帮我查退款失败")
    ['我查', '查退', '退款', '款失', '失败']
    """
    if len(run) == 1:
        return [] if run in stop_words else [run]
    bigrams = [run[i : i + 2] for i in range(len(run) - 1)]
    return [b for b in bigrams if b not in stop_words]


def segmenter_available() -> bool:
    """Whether Han text is also cut into dictionary words (``rjieba`` can be imported)."""
    return _segmenter() is not None


@lru_cache(maxsize=1)
def _segmenter() -> Callable[[str], list[str]] | None:
    # Imported on the first CJK text: English-only catalogs never load the dictionary.
    try:
        module = importlib.import_module("rjieba")
    except ImportError:
        _log.warning("rjieba is not installed: Chinese text is searched by characters only")
        return None
    return cast("Callable[[str], list[str]]", module.cut)
