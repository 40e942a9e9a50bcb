"""Turning tool text and queries into search terms.

One tokenizer serves every lexical index so that a tool and a query are cut the same way:
camelCase and ``snake_case`` identifiers are split into words, text is lower-cased, common
English words are dropped and the rest is reduced to its Snowball stem (``forecasts`` and
``forecast`` meet). Letters of any script count as word characters, so a query in another
language still yields terms, even if they are not stemmed.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass, field
from functools import lru_cache

import Stemmer

__all__ = ["ENGLISH_STOP_WORDS", "Tokenizer", "split_words"]

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

# A word is a run of letters or digits (any script); "_" and punctuation separate words.
_WORD = re.compile(r"[^\W_]+")
# Split camelCase and acronym boundaries: getHTTPResponse -> get HTTP Response.
_CAMEL = re.compile(r"(?<=[a-z0-9])(?=[A-Z])|(?<=[A-Z])(?=[A-Z][a-z])")


def split_words(text: str) -> list[str]:
    """Lower-case words of ``text``, with camelCase and ``snake_case`` identifiers split.

    >>> split_words("getHTTPResponse for user_id 42")
    ['get', 'http', 'response', 'for', 'user', 'id', '42']
    """
    # Two passes of compiled patterns over the whole text: far faster than word by word.
    return _WORD.findall(_CAMEL.sub(" ", text).lower())


@lru_cache(maxsize=4)
def _stemmer(language: str) -> Stemmer.Stemmer:
    return Stemmer.Stemmer(language)


@dataclass(frozen=True, kw_only=True)
class Tokenizer:
    """Cuts text into search terms.

    Attributes:
        stop_words: Lower-case words to drop (after splitting, before stemming).
        stem: Reduce words to their Snowball stem.
        language: Snowball language for stemming.
        min_length: Shorter words are dropped, except digits ("2", "v3" stay).
    """

    stop_words: frozenset[str] = ENGLISH_STOP_WORDS
    stem: bool = True
    language: str = "english"
    min_length: int = 2
    _cache: dict[str, str] = field(default_factory=dict, init=False, repr=False, compare=False)

    def words(self, text: str) -> list[str]:
        """Lower-case words of ``text``, identifiers split, stop words kept and unstemmed."""
        return split_words(text)

    def terms(self, text: str) -> list[str]:
        """The search terms of ``text``, in order, repeats kept."""
        return self.terms_of_words(self.words(text))

    def terms_of_words(self, words: Iterable[str]) -> list[str]:
        """Filter and stem words that were already split and lower-cased."""
        words = list(words)
        table = self._cache  # word -> its term, or "" when the word is dropped
        missing = [w for w in set(words) if w not in table]
        if missing:
            if len(table) > 200_000:
                table.clear()
                missing = list(set(words))
            self._learn(table, missing)
        return [term for term in map(table.__getitem__, words) if term]

    def _learn(self, table: dict[str, str], words: list[str]) -> None:
        kept = [
            w
            for w in words
            if w not in self.stop_words and (len(w) >= self.min_length or w.isdigit())
        ]
        for w in words:
            table[w] = ""
        # Stemming word by word in Python would dominate indexing time; batch it, remember it.
        stems = _stemmer(self.language).stemWords(kept) if self.stem else kept
        for word, stem in zip(kept, stems, strict=True):
            table[word] = stem
