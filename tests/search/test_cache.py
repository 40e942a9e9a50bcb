from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from toolrelay.exceptions import ConfigurationError
from toolrelay.search._cache import EmbeddingCache, default_cache_path, embedding_key


def test_round_trip_count_and_clear(cache: EmbeddingCache) -> None:
    assert cache.get_many(["k"]) == {}
    assert cache.count() == 0
    vectors = {f"k{i}": np.full(3, i, dtype=np.float32) for i in range(1200)}
    cache.put_many("m1", vectors)
    cache.put_many("m2", {"other": np.ones(2, dtype=np.float32)})
    found = cache.get_many([*sorted(vectors), "missing"])
    assert len(found) == 1200
    assert np.array_equal(found["k7"], np.full(3, 7, dtype=np.float32))
    assert cache.count() == 1201
    assert cache.count("m1") == 1200
    cache.clear("m1")
    assert cache.count() == 1
    cache.clear()
    assert cache.count() == 0


def test_keys_depend_on_model_kind_and_text() -> None:
    base = embedding_key("m", "document", "text")
    assert embedding_key("m", "document", "text") == base
    assert (
        len(
            {
                base,
                embedding_key("m2", "document", "text"),
                embedding_key("m", "query", "text"),
                embedding_key("m", "document", "text2"),
            }
        )
        == 4
    )
    assert embedding_key("ab", "c", "d") != embedding_key("a", "bc", "d")


def test_default_location_is_the_user_cache_dir() -> None:
    assert default_cache_path().name == "embeddings.sqlite3"
    assert "toolrelay" in default_cache_path().parts


def test_an_unwritable_location_raises_configuration_error(tmp_path: Path) -> None:
    blocker = tmp_path / "file"
    blocker.write_text("x")
    cache = EmbeddingCache(blocker / "cache.sqlite3")
    with pytest.raises(ConfigurationError, match="unusable"):
        cache.put_many("m", {"k": np.ones(2, dtype=np.float32)})
