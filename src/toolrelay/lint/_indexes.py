"""The index the retrieval rules rank a catalog with: the one that would serve it.

``auto`` is what :func:`toolrelay.search.default_index` recommends: BM25 plus MiniLM
embeddings when the ``embeddings`` extra is installed, BM25 alone otherwise. For the
embedding side, queries are embedded ahead in batches (see
``BatchedQueryEmbedder``), and both query and document
vectors go to the disk cache, so linting an unchanged catalog again embeds nothing.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass

from toolrelay.lint._config import IndexChoice
from toolrelay.lint._query_vectors import BatchedQueryEmbedder
from toolrelay.search._cache import EmbeddingCache
from toolrelay.search._embedders import Embedder, embeddings_available, minilm_embedder
from toolrelay.search._factory import default_index, lexical_index
from toolrelay.search._scoring import ScoringToolIndex

__all__ = ["LintIndex", "lint_index"]


@dataclass(frozen=True, kw_only=True)
class LintIndex:
    """An empty index for the retrieval rules, and how to prepare it for many queries.

    Attributes:
        index: The index; the rules index the catalog into it.
        prime: Called with every query before the searches (batches the embedding), or
            ``None`` when there is nothing to prepare.
    """

    index: ScoringToolIndex
    prime: Callable[[Sequence[str]], None] | None = None


def lint_index(
    choice: IndexChoice | ScoringToolIndex,
    *,
    embedder: Embedder | None = None,
    cache: EmbeddingCache | bool = True,
) -> LintIndex:
    """The index named by ``choice`` (or ``choice`` itself, used as it is).

    Args:
        choice: ``"bm25"``, ``"hybrid"``, ``"auto"`` or an index of your own.
        embedder: The embedder of the hybrid index (the bundled MiniLM by default); giving
            one makes ``auto`` hybrid.
        cache: The embedding cache, ``True`` for the default file or ``False`` for none.

    Raises:
        ConfigurationError: ``hybrid`` was asked for without an embedder and the embeddings
            extra is not installed.
    """
    if isinstance(choice, ScoringToolIndex):
        return LintIndex(index=choice)
    if choice == "bm25" or (choice == "auto" and embedder is None and not embeddings_available()):
        return LintIndex(index=lexical_index())
    disk = EmbeddingCache() if cache is True else cache or None
    batched = BatchedQueryEmbedder(embedder or minilm_embedder(), cache=disk)
    index = default_index(embedder=batched, cache=disk or False)
    # A vector index may embed a query as several pieces (its sentences); prime those.
    pieces = getattr(getattr(index, "semantic", index), "query_pieces", None)

    def prime(queries: Sequence[str]) -> None:
        if callable(pieces):
            batched.prime([p for q in queries for p in pieces(q)])
        else:
            batched.prime(queries)

    return LintIndex(index=index, prime=prime)
