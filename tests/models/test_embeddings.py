"""OpenAIEmbedder: the search layer's Embedder protocol over an OpenAI-compatible endpoint."""

from __future__ import annotations

import inspect
import json
from typing import Any

import pytest

from tests.extras import needs_extra
from toolrelay.exceptions import ModelResponseError, RateLimitError

from ._wire import MockServer, error_reply, httpx

pytest.importorskip("openai", reason=needs_extra("openai"))
np = pytest.importorskip("numpy", reason=needs_extra("openai"))

from toolrelay.models._embeddings import OpenAIEmbedder  # noqa: E402  (needs numpy)


def embedding_reply(request: httpx.Request) -> httpx.Response:
    """Vectors of length 3 derived from each input, returned in scrambled order."""
    body = json.loads(request.content)
    data = [
        {"object": "embedding", "index": i, "embedding": [float(len(text)), 1.0, 0.0]}
        for i, text in enumerate(body["input"])
    ]
    return httpx.Response(
        200,
        json={
            "object": "list",
            "model": body["model"],
            "data": list(reversed(data)),
            "usage": {"prompt_tokens": 1, "total_tokens": 1},
        },
    )


def make_embedder(server: MockServer, **kwargs: Any) -> OpenAIEmbedder:
    kwargs.setdefault("max_retries", 0)
    return OpenAIEmbedder(
        "text-embedding-3-small", api_key="sk-test", http_client=server.sync_http_client(), **kwargs
    )


def test_it_satisfies_the_search_layers_embedder_protocol() -> None:
    from toolrelay.search import _embedders as embedders

    embedder = make_embedder(MockServer(embedding_reply))
    assert isinstance(embedder, embedders.Embedder)
    ours = inspect.signature(OpenAIEmbedder.embed)
    theirs = inspect.signature(embedders.Embedder.embed)
    assert [(p.name, p.kind) for p in ours.parameters.values()] == [
        (p.name, p.kind) for p in theirs.parameters.values()
    ]
    assert embedder.model_id == "openai:text-embedding-3-small"


def test_rows_are_unit_float32_in_input_order_and_batched() -> None:
    server = MockServer(embedding_reply)
    embedder = make_embedder(server, batch_size=2, dimensions=3, document_prefix="doc: ")
    vectors = embedder.embed(["a", "bbb", ""], kind="document")

    assert vectors.dtype == np.float32
    assert vectors.shape == (3, 3)
    assert np.allclose(np.linalg.norm(vectors, axis=1), 1.0)
    expected = np.array([[6, 1, 0], [8, 1, 0], [5, 1, 0]], dtype=np.float32)
    expected /= np.linalg.norm(expected, axis=1, keepdims=True)
    assert np.allclose(vectors, expected)
    assert [b["input"] for b in server.bodies] == [["doc: a", "doc: bbb"], ["doc: "]]
    assert all(b["dimensions"] == 3 and b["encoding_format"] == "float" for b in server.bodies)
    assert embedder.model_id == "openai:text-embedding-3-small:3"


def test_queries_use_the_query_prefix_and_empty_input_sends_nothing() -> None:
    server = MockServer(embedding_reply)
    embedder = make_embedder(server, query_prefix="query: ")
    embedder.embed(["x"], kind="query")
    assert server.body["input"] == ["query: x"]
    assert make_embedder(server).embed([], kind="query").shape == (0, 0)
    assert server.attempts == 1


def test_errors_are_translated() -> None:
    server = MockServer(error_reply(429))
    with pytest.raises(RateLimitError):
        make_embedder(server, max_retries=1).embed(["x"], kind="query")
    assert server.attempts == 2

    short = MockServer(
        httpx.Response(
            200,
            json={
                "object": "list",
                "model": "m",
                "data": [],
                "usage": {"prompt_tokens": 0, "total_tokens": 0},
            },
        )
    )
    with pytest.raises(ModelResponseError, match="0 vectors for 1 texts"):
        make_embedder(short).embed(["x"], kind="query")
