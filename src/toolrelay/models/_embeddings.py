"""Embedding adapters for remote embedding APIs.

:class:`OpenAIEmbedder` satisfies the tool indexes' ``Embedder`` protocol
(``embed(texts, *, kind) -> float32 array``, one row per text) structurally: it has the same
method and a ``model_id`` for the embedding cache, without this package importing the search
layer. It works with OpenAI's embeddings endpoint and every server that implements it (vLLM,
Ollama, LM Studio, llama.cpp's server with ``--embedding``).

The ``Embedder`` protocol is synchronous (indexes embed while they build), so this adapter
uses the SDK's synchronous client. Needs the ``openai`` extra.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, Literal

import numpy as np
import numpy.typing as npt

from toolrelay.exceptions import ConfigurationError, ModelError, ModelResponseError
from toolrelay.models._provider_errors import translate_sdk_error
from toolrelay.models._sdk_model import connect, import_sdk

__all__ = ["DEFAULT_OPENAI_EMBEDDING_MODEL", "OpenAIEmbedder"]

DEFAULT_OPENAI_EMBEDDING_MODEL = "text-embedding-3-small"

_OPENAI_HOST = "api.openai.com"
# OpenAI accepts up to 2048 inputs per request; smaller batches keep each request well below
# the per-request token limit for long tool descriptions.
_DEFAULT_BATCH = 256


class OpenAIEmbedder:
    """Embeds texts with an OpenAI-compatible ``/embeddings`` endpoint.

    Args:
        model: The embedding model.
        dimensions: Shorter vectors (text-embedding-3 models only); ``None`` for the model's.
        api_key: The API key; defaults to ``OPENAI_API_KEY``; a custom ``base_url`` without a
            key sends a placeholder.
        base_url: The API's base URL; defaults to ``OPENAI_BASE_URL``, then OpenAI's.
        client: A ready ``openai.OpenAI`` (synchronous) client.
        http_client: An ``httpx`` client for the SDK (proxies, tests).
        max_retries: Retries of the SDK for connection errors, 429 and 5xx.
        batch_size: Texts per request.
        query_prefix: Prepended to queries (for models trained with prefixes).
        document_prefix: Prepended to documents.
        model_id: Identifies the model in the embedding cache; defaults to
            ``"openai:<model>"`` (plus ``":<dimensions>"``).

    Rows are L2-normalised float32, so dot products are cosine similarities whatever the
    server returns.

    Raises:
        ConfigurationError: The ``openai`` package is missing or no key is configured for
            OpenAI's own API.
    """

    def __init__(
        self,
        model: str = DEFAULT_OPENAI_EMBEDDING_MODEL,
        *,
        dimensions: int | None = None,
        api_key: str | None = None,
        base_url: str | None = None,
        client: Any = None,
        http_client: Any = None,
        max_retries: int = 2,
        batch_size: int = _DEFAULT_BATCH,
        query_prefix: str = "",
        document_prefix: str = "",
        model_id: str | None = None,
    ) -> None:
        self._sdk = import_sdk("openai", extra="openai")
        if batch_size < 1:
            raise ConfigurationError(f"batch_size must be >= 1, not {batch_size}")
        self.model = model
        self.dimensions = dimensions
        self.batch_size = batch_size
        self.query_prefix = query_prefix
        self.document_prefix = document_prefix
        suffix = f":{dimensions}" if dimensions else ""
        self.model_id = model_id or f"openai:{model}{suffix}"
        if client is None:
            client = connect(
                self._sdk.OpenAI,
                self._sdk.OpenAIError,
                label="OpenAI",
                host=_OPENAI_HOST,
                api_key=api_key,
                base_url=base_url,
                max_retries=max_retries,
                http_client=http_client,
            )
        self._client: Any = client

    def __repr__(self) -> str:
        return f"OpenAIEmbedder(model_id={self.model_id!r})"

    def embed(
        self, texts: Sequence[str], *, kind: Literal["query", "document"]
    ) -> npt.NDArray[np.float32]:
        """Embed ``texts``; returns a ``(len(texts), dim)`` float32 array of unit rows.

        Raises:
            ModelAPIError: The server answered with an error (after the SDK's retries).
            ModelConnectionError: The server could not be reached.
            ModelResponseError: The answer has the wrong number of vectors.
        """
        prefix = self.query_prefix if kind == "query" else self.document_prefix
        # The API rejects empty strings; a space embeds as "nothing" just as well.
        batch = [f"{prefix}{text}" or " " for text in texts]
        if not batch:
            return np.zeros((0, self.dimensions or 0), dtype=np.float32)
        rows: list[list[float]] = []
        for start in range(0, len(batch), self.batch_size):
            rows.extend(self._request(batch[start : start + self.batch_size]))
        vectors = np.asarray(rows, dtype=np.float32)
        norms = np.linalg.norm(vectors, axis=1, keepdims=True)
        return np.asarray(vectors / np.maximum(norms, 1e-12), dtype=np.float32)

    def _request(self, texts: list[str]) -> list[list[float]]:
        # Plain floats: not every compatible server implements the SDK's base64 default.
        arguments: dict[str, Any] = {
            "model": self.model,
            "input": texts,
            "encoding_format": "float",
        }
        if self.dimensions is not None:
            arguments["dimensions"] = self.dimensions
        try:
            answer = self._client.embeddings.create(**arguments)
        except self._sdk.OpenAIError as exc:
            translated = translate_sdk_error("openai", self._sdk, exc)
            raise (translated or ModelError(f"embedding request failed: {exc}")) from exc
        items = sorted(answer.data, key=lambda item: item.index)
        if len(items) != len(texts):
            raise ModelResponseError(
                f"{self.model_id} returned {len(items)} vectors for {len(texts)} texts"
            )
        return [list(item.embedding) for item in items]
