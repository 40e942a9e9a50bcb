from __future__ import annotations

from pathlib import Path

import pytest

from toolrelay.search._cache import EmbeddingCache
from toolrelay.tools._base import ToolDefinition

from ._catalog import CATALOG


@pytest.fixture
def catalog() -> list[ToolDefinition]:
    return list(CATALOG)


@pytest.fixture
def cache(tmp_path: Path) -> EmbeddingCache:
    return EmbeddingCache(tmp_path / "embeddings.sqlite3")
