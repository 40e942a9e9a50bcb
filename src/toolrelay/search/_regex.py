r"""Pattern search over tool names and descriptions, with no model and no index to build.

The semantics follow Spring AI's regex tool searcher: the query is either a regular
expression (when it contains regex syntax such as ``|``, ``*``, ``^`` or ``\b``) or plain
keywords, which become a case-insensitive alternation of the words (stop words and
one-letter words dropped). Matching is always case-insensitive, and ``^`` and ``$`` match at
the start and end of every line. Names are matched both as written and as words
(``getWeatherForecast`` is also "get weather forecast"), so ``\bweather\b`` finds camelCase and
``snake_case`` names alike.

Chinese, Japanese and Korean have no spaces to find words by: a run of such characters gives
its overlapping bigrams as keywords (``退款失败`` gives ``退款|款失|失败``; Chinese stop
words such as ``帮我`` are dropped), so that it finds a description saying
``退款失败的订单``. A lone character is a keyword of its own.

A tool scores 2 per distinct matched text in its name and 1 per distinct matched text in its
description, plus a small bonus for an early first match. Tools with no match are not
returned.

**Bounded, whatever the query.** Patterns run on RE2 (``google-re2``), whose matching time is
linear in the text for any pattern, and which releases the GIL while it matches: a model
cannot write a pattern that backtracks for ever. RE2 has no lookaround and no
backreferences; a query using them, a pattern that compiles to more than
:data:`MAX_PROGRAM_SIZE` instructions, or any pattern at all when RE2 is not installed, is read
as keywords (escaped words, which the standard ``re`` module matches without backtracking too;
without RE2, non-ASCII letters are matched case-sensitively). Texts are matched a few
kilobytes at a time, and a query's own pattern still unfinished after ``time_limit`` seconds of
CPU time is given up for its keywords (escaped words always finish: they are linear and cheap).

**Permitted tools only.** A search matches the texts of the tools it may return
(``SearchRequest.allowed``) and nothing else, one line at a time (RE2 never matches a line
break, and each tool's texts are lines of their own), so no match can reach from one tool's
text into another's and a tool outside the permitted subset changes no answer.
"""

from __future__ import annotations

import re
import time
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from functools import lru_cache
from typing import Any, ClassVar, Protocol

import numpy as np
import numpy.typing as npt

from toolrelay.exceptions import ConfigurationError
from toolrelay.search._bm25 import QueryTerms, history_keyword_similarity
from toolrelay.search._cjk import CJK_RUN, cjk_keywords
from toolrelay.search._documents import ToolText
from toolrelay.search._history import DEFAULT_HISTORY_WEIGHT, HistoryEvidence
from toolrelay.search._masks import Mask
from toolrelay.search._scoring import Scores, ScoringToolIndex
from toolrelay.search._text import Tokenizer
from toolrelay.tools._base import ToolDefinition

try:
    import re2
except ImportError:  # no wheel for this platform: patterns are read as keywords
    re2 = None

__all__ = [
    "DEFAULT_TIME_LIMIT",
    "MAX_PROGRAM_SIZE",
    "RegexToolIndex",
    "keyword_pattern",
    "linear_patterns",
    "query_pattern",
]

DEFAULT_TIME_LIMIT = 0.5
"""Seconds of CPU time a search spends matching a query's own pattern before giving it up."""

MAX_PROGRAM_SIZE = 1000
"""The largest compiled RE2 program a query may be; larger patterns are read as keywords.

Matching time grows with the program: the most costly patterns of this size took about 50 ms
per 16 KB of tool text on a busy 2-core machine, one of 7,500 instructions eight times that.
"""

_REGEX_SYNTAX = re.compile(r"[\\^$*+|()\[\]{}]")
_MAX_KEYWORDS = 32
# Bigrams are shorter and less specific than words: a CJK query keeps more of them (64
# measured 2 NDCG points better than 32 on ACEBench-zh, and no worse elsewhere).
_MAX_CJK_KEYWORDS = 64
# Texts are matched in pieces of about this many bytes, so a search can stop between them.
_CHUNK = 16_384
_NAME_WEIGHT = 2.0
_DESCRIPTION_WEIGHT = 1.0
_WORDS = Tokenizer(stem=False)


class _Match(Protocol):
    def start(self) -> int: ...

    def end(self) -> int: ...

    def group(self) -> bytes: ...


class _Matcher(Protocol):
    def finditer(self, text: bytes) -> Iterator[_Match]: ...


def linear_patterns() -> bool:
    """Whether RE2 is installed, so that queries may be regular expressions."""
    return re2 is not None


def query_pattern(query: str) -> str | None:
    """The pattern a search for ``query`` runs first, or ``None`` when it has no usable words.

    The query itself when it has regex syntax and RE2 accepts it (no lookaround or
    backreferences, at most :data:`MAX_PROGRAM_SIZE` instructions); else its keywords
    (:func:`keyword_pattern`).
    """
    if _REGEX_SYNTAX.search(query) and _user_matcher(query) is not None:
        return query
    return keyword_pattern(query)


def keyword_pattern(query: str) -> str | None:
    """An alternation of the query's words (stop words and one-letter words dropped).

    CJK text gives its bigrams instead of words. When every keyword is a stop word, the stop
    words are kept.
    """
    words: dict[str, bool] = {}  # keyword -> is CJK, in query order
    for word in _WORDS.words(query):
        if not word.isascii() and CJK_RUN.match(word):
            words.update(dict.fromkeys(cjk_keywords(word, stop_words=frozenset()), True))
        elif len(word) >= 2:
            words.setdefault(word, False)
    kept = [w for w in words if w not in _WORDS.stop_words] or list(words)
    if not kept:
        return None
    spaced = [w for w in kept if not words[w]][:_MAX_KEYWORDS]
    cjk = [w for w in kept if words[w]][:_MAX_CJK_KEYWORDS]
    return "(?:" + "|".join(re.escape(w) for w in (*spaced, *cjk)) + ")"


@lru_cache(maxsize=256)
def _user_matcher(pattern: str) -> _Matcher | None:
    """The query as an RE2 pattern; ``None`` when RE2 is missing or refuses it."""
    if re2 is None or "\\C" in pattern:  # \C matches any byte, line breaks included
        return None
    try:
        compiled: _Matcher = re2.compile(f"(?m){pattern}", _re2_options())
    except re2.error:
        return None
    if compiled.programsize > MAX_PROGRAM_SIZE:  # type: ignore[attr-defined]
        return None
    return compiled


@lru_cache(maxsize=256)
def _keyword_matcher(pattern: str) -> _Matcher:
    """A pattern of escaped words, on RE2 when installed (faster), else on ``re``."""
    if re2 is not None:
        compiled: _Matcher = re2.compile(pattern, _re2_options())
        return compiled
    return re.compile(pattern.encode(), re.IGNORECASE)


@lru_cache(maxsize=1)
def _re2_options() -> Any:
    assert re2 is not None  # only asked for when RE2 is installed
    options = re2.Options()
    options.case_sensitive = False
    options.never_nl = True  # a match never spans a line, so never two tools' texts
    options.log_errors = False  # a refused pattern is read as keywords; nothing to log
    return options


@dataclass(frozen=True)
class _Chunk:
    text: bytes
    starts: npt.NDArray[np.int64]  # where each tool's text starts in ``text``
    tools: npt.NDArray[np.intp]  # which tool each of those texts belongs to


@dataclass(frozen=True)
class _Field:
    texts: tuple[bytes, ...]  # one per tool: UTF-8, lines joined by line breaks
    sizes: npt.NDArray[np.int64]  # their lengths plus a separator
    ascii: npt.NDArray[np.bool_]  # byte offsets are character offsets
    weight: float
    whole: tuple[_Chunk, ...]  # every tool, in chunks (the search with nothing withheld)

    @classmethod
    def of(cls, texts: Sequence[str], weight: float) -> _Field:
        encoded = tuple(t.encode("utf-8") for t in texts)
        sizes = np.fromiter((len(t) + 1 for t in encoded), dtype=np.int64, count=len(encoded))
        ascii_ = np.fromiter((t.isascii() for t in texts), dtype=np.bool_, count=len(texts))
        field = cls(encoded, sizes, ascii_, weight, ())
        whole = tuple(field.chunks(np.arange(len(encoded))))
        return cls(encoded, sizes, ascii_, weight, whole)

    def chunks(self, tools: npt.NDArray[np.intp]) -> Iterator[_Chunk]:
        """The texts of ``tools``, joined by line breaks into pieces of about ``_CHUNK``."""
        if tools.size == 0:
            return
        ends = np.cumsum(self.sizes[tools])
        piece = (ends - 1) // _CHUNK
        cuts = np.flatnonzero(np.diff(piece)) + 1
        for group in np.split(tools, cuts):
            offsets = np.zeros(group.size, dtype=np.int64)
            np.cumsum(self.sizes[group[:-1]], out=offsets[1:])
            text = b"\n".join([self.texts[i] for i in group])
            yield _Chunk(text=text, starts=offsets, tools=group)


@dataclass(frozen=True)
class _Texts:
    names: _Field
    descriptions: _Field
    size: int


_HISTORY_TERMS = QueryTerms(Tokenizer())


class RegexToolIndex(ScoringToolIndex):
    """Finds tools whose name or description matches a pattern or keywords.

    Scores are small positive numbers (2 per matched name text, 1 per matched description
    text, plus under 1.5 for early matches).

    Args:
        time_limit: Seconds of CPU time a search may spend matching a query's own pattern;
            one still unfinished by then is given up for the query's keywords.
        prerequisite_lift: See :class:`~toolrelay.search.ScoringToolIndex`.
        history_weight: See :class:`~toolrelay.search.ScoringToolIndex`; past queries are
            compared by keywords, as the BM25 index compares them.

    Raises:
        ConfigurationError: ``time_limit`` is not positive.
    """

    search_type: ClassVar[str] = "regex"

    def __init__(
        self,
        *,
        time_limit: float = DEFAULT_TIME_LIMIT,
        prerequisite_lift: float | None = None,
        history_weight: float = DEFAULT_HISTORY_WEIGHT,
    ) -> None:
        super().__init__(prerequisite_lift=prerequisite_lift, history_weight=history_weight)
        if not time_limit > 0:
            raise ConfigurationError(
                f"time_limit must be a positive number of seconds, not {time_limit}"
            )
        self.time_limit = time_limit

    def history_similarity(
        self, evidence: HistoryEvidence, query: str, permitted: Mask | None
    ) -> npt.NDArray[np.float32]:
        """Keyword similarity of each past query (as :class:`~toolrelay.search.BM25ToolIndex`)."""
        return history_keyword_similarity(evidence, _HISTORY_TERMS, query, permitted)

    def _build(self, definitions: Sequence[ToolDefinition], texts: Sequence[ToolText]) -> Any:
        return _Texts(
            names=_Field.of([f"{t.name}\n{t.name_words}" for t in texts], _NAME_WEIGHT),
            descriptions=_Field.of([t.description for t in texts], _DESCRIPTION_WEIGHT),
            size=len(texts),
        )

    def _score(self, payload: Any, query: str, permitted: Mask | None) -> Scores:
        texts: _Texts = payload
        tools = None if permitted is None else np.flatnonzero(permitted)
        scores = np.zeros(texts.size, dtype=np.float32)
        if _REGEX_SYNTAX.search(query):
            matcher = _user_matcher(query)
            if matcher is not None:
                budget = time.thread_time() + self.time_limit
                if _add_matches(scores, matcher, texts, tools, budget) and scores.any():
                    return scores
                # Unfinished in time, or no match: natural language often looks like a
                # pattern ("(in Paris)", "$100"); either way, the keywords answer instead.
                scores[:] = 0.0
        keywords = keyword_pattern(query)
        if keywords is not None:
            # Escaped words: linear and cheap on either engine, so they always finish.
            _add_matches(scores, _keyword_matcher(keywords), texts, tools, None)
        return scores


def _add_matches(
    scores: Scores,
    matcher: _Matcher,
    texts: _Texts,
    tools: npt.NDArray[np.intp] | None,
    budget: float | None,
) -> bool:
    """Add the matches in names and descriptions; ``False`` if the budget ran out first.

    ``budget`` is a ``time.thread_time()`` to stop at (CPU time, so that a busy machine does
    not cut searches short); ``None`` matches everything.
    """
    begun = False  # the first piece is always matched, however small the budget
    for field in (texts.names, texts.descriptions):
        chunks = field.whole if tools is None else field.chunks(tools)
        distinct: set[tuple[int, bytes]] = set()
        first: dict[int, int] = {}
        for chunk in chunks:
            if begun and budget is not None and time.thread_time() > budget:
                return False
            begun = True
            _match_chunk(matcher, chunk, field, distinct, first)
        _add_field(scores, field, distinct, first)
    return True


def _match_chunk(
    matcher: _Matcher,
    chunk: _Chunk,
    field: _Field,
    distinct: set[tuple[int, bytes]],
    first: dict[int, int],
) -> None:
    spans = [(m.start(), m.group()) for m in matcher.finditer(chunk.text) if m.end() > m.start()]
    if not spans:
        return
    at = np.fromiter((start for start, _ in spans), dtype=np.int64, count=len(spans))
    owners = np.searchsorted(chunk.starts, at, side="right") - 1
    for (start, text), owner in zip(spans, owners.tolist(), strict=True):
        tool = int(chunk.tools[owner])
        key = text.lower() if text.isascii() else text.decode("utf-8").lower().encode("utf-8")
        distinct.add((tool, key))
        if tool not in first:
            offset = start - int(chunk.starts[owner])
            if not field.ascii[tool]:  # the bonus counts characters, not bytes
                offset = len(field.texts[tool][:offset].decode("utf-8"))
            first[tool] = offset


def _add_field(
    scores: Scores, field: _Field, distinct: set[tuple[int, bytes]], first: dict[int, int]
) -> None:
    for tool, _ in distinct:
        scores[tool] += field.weight
    for tool, position in first.items():
        # An early match (the name's first word, a description's opening) counts a bit more.
        scores[tool] += 0.75 * field.weight / (1.0 + 0.1 * position)
