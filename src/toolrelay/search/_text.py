"""Turning tool text and queries into search terms.

One tokenizer serves every lexical index so that a tool and a query are cut the same way, in
one pass over text in any mix of languages:

- **Latin and other spaced scripts**: camelCase and ``snake_case`` identifiers are split into
  words, text is lower-cased, common English words are dropped and the rest is reduced to its
  Snowball stem (``forecasts`` and ``forecast`` meet). Letters of any script are word
  characters, so Cyrillic, Greek or Arabic words are terms too (unstemmed).
- **Chinese, Japanese, Korean**: a run of CJK characters is a word of its own, even inside an
  identifier (``查询refund失败的orderId`` is ``查询 refund 失败的 order id``), and becomes
  bigrams, single Han characters and dictionary words (``_cjk.py``).
- Full-width letters and digits (``ＩＤ１２``) read as their ASCII forms.

Text without CJK characters is cut exactly as it was before CJK analysis existed.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass, field
from functools import lru_cache
from typing import cast

import Stemmer

from toolrelay.search._cjk import CHINESE_STOP_WORDS, CJK_RUN, cjk_terms

__all__ = ["DEFAULT_STOP_WORDS", "ENGLISH_STOP_WORDS", "Tokenizer", "split_words"]

# Function words that say nothing about which tool is meant. Deliberately short: words such as
# "get", "list", "search" or "all" name what a tool does and stay searchable.
# fmt: off
ENGLISH_STOP_WORDS: frozenset[str] = frozenset(
    {
        "a", "an", "and", "are", "as", "at", "be", "been", "being", "but", "by", "can", "could",
        "did", "do", "does", "doing", "for", "from", "had", "has", "have", "having", "he", "her",
        "here", "hers", "him", "his", "how", "i", "if", "in", "into", "is", "it", "its", "itself",
        "just", "me", "my", "myself", "of", "on", "or", "our", "ours", "please", "she", "should",
        "so", "some", "such", "than", "that", "the", "their", "theirs", "them", "then", "there",
        "these", "they", "this", "those", "to", "too", "very", "was", "we", "were", "what", "when",
        "where", "which", "while", "who", "whom", "why", "will", "with", "would", "you", "your",
        "yours",
    }
)
# fmt: on

DEFAULT_STOP_WORDS: frozenset[str] = ENGLISH_STOP_WORDS | CHINESE_STOP_WORDS
"""English and Chinese stop words: what :class:`Tokenizer` drops by default."""

# A word is a run of letters or digits (any script); "_" and punctuation separate words.
_WORD = re.compile(r"[^\W_]+")
# Split camelCase and acronym boundaries: getHTTPResponse -> get HTTP Response.
_CAMEL = re.compile(r"(?<=[a-z0-9])(?=[A-Z])|(?<=[A-Z])(?=[A-Z][a-z])")
# Full-width ASCII (U+FF01-FF5E), common in CJK input, to ASCII.
_FULL_WIDTH = str.maketrans({c: c - 0xFEE0 for c in range(0xFF01, 0xFF5F)})

_Table = dict[str, str | tuple[str, ...]]
"""Learned words: a word's term ("" when it is dropped), or the terms of a CJK word."""


def split_words(text: str) -> list[str]:
    """Lower-case words of ``text``, with camelCase and ``snake_case`` identifiers split.

    A run of CJK characters is a word of its own, apart from any letters it touches.

    >>> split_words("getHTTPResponse for user_id 42")
    ['get', 'http', 'response', 'for', 'user', 'id', '42']
    >>> split_words("查询refund失败的orderId")
    ['查询', 'refund', '失败的', 'order', 'id']
    """
    if not text.isascii():
        text = CJK_RUN.sub(r" \g<0> ", text.translate(_FULL_WIDTH))
    # Two passes of compiled patterns over the whole text: far faster than word by word.
    return _WORD.findall(_CAMEL.sub(" ", text).lower())


@lru_cache(maxsize=4)
def _stemmer(language: str) -> Stemmer.Stemmer:
    return Stemmer.Stemmer(language)


@dataclass(frozen=True, kw_only=True)
class Tokenizer:
    """Cuts text into search terms.

    Attributes:
        stop_words: Lower-case words to drop: Latin words after splitting and before
            stemming, CJK terms (bigrams, characters, dictionary words) as they are.
        stem: Reduce words to their Snowball stem (CJK terms are never stemmed).
        language: Snowball language for stemming.
        min_length: Shorter words are dropped, except digits ("2", "v3" stay). CJK terms
            are kept at any length: one ideograph can be a word.
        segment: Also cut Han text into dictionary words (needs ``rjieba``, a dependency
            of toolrelay; without it, CJK text gives bigrams and characters only).
    """

    stop_words: frozenset[str] = DEFAULT_STOP_WORDS
    stem: bool = True
    language: str = "english"
    min_length: int = 2
    segment: bool = True
    _cache: _Table = field(default_factory=dict, init=False, repr=False, compare=False)

    def words(self, text: str) -> list[str]:
        """Lower-case words of ``text``, identifiers split, stop words kept and unstemmed.

        A run of CJK characters is one word here; :meth:`terms` cuts it further.
        """
        return split_words(text)

    def terms(self, text: str) -> list[str]:
        """The search terms of ``text``, in order, repeats kept."""
        return self.terms_of_words(self.words(text))

    def terms_of_words(self, words: Iterable[str]) -> list[str]:
        """Filter and stem words that were already split and lower-cased.

        A word with CJK characters becomes all its CJK terms, in place.
        """
        words = list(words)
        table = self._cache
        missing = [w for w in set(words) if w not in table]
        if missing:
            if len(table) > 200_000:
                table.clear()
                missing = list(set(words))
            self._learn(table, missing)
        return _look_up(table, words)

    def _learn(self, table: _Table, words: list[str]) -> None:
        spaced = []
        for w in words:
            if w.isascii() or not CJK_RUN.search(w):
                spaced.append(w)
            else:
                table[w] = tuple(self._cjk_word_terms(table, w))
        kept = [
            w
            for w in spaced
            if w not in self.stop_words and (len(w) >= self.min_length or w.isdigit())
        ]
        for w in spaced:
            table[w] = ""
        # Stemming word by word in Python would dominate indexing time; batch it, remember it.
        stems = _stemmer(self.language).stemWords(kept) if self.stem else kept
        for word, stem in zip(kept, stems, strict=True):
            table[word] = stem

    def _cjk_word_terms(self, table: _Table, word: str) -> list[str]:
        if CJK_RUN.fullmatch(word):
            return cjk_terms(word, stop_words=self.stop_words, segment=self.segment)
        # A word given as it is, not from split_words ("查询refund"): its pieces are plain
        # Latin words or CJK runs, so this recursion goes one level deep.
        pieces = split_words(word)
        self._learn(table, [p for p in set(pieces) if p not in table])
        return _look_up(table, pieces)


def _look_up(table: _Table, words: list[str]) -> list[str]:
    found = map(table.__getitem__, words)
    if all(map(str.isascii, words)):
        return cast("list[str]", [term for term in found if term])
    terms: list[str] = []
    for term in found:
        if isinstance(term, tuple):
            terms.extend(term)
        elif term:
            terms.append(term)
    return terms
