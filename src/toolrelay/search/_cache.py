"""A disk cache of text embeddings, keyed by model and content hash.

Embedding a catalog of thousands of tools takes minutes on a CPU, and catalogs change
rarely, so every vector is stored once in a small SQLite file under the user's cache
directory. The key is a hash of the model id, the kind of text (query or document) and the
text itself: an unchanged tool is never embedded twice, by any process, and a changed
description simply misses.
"""

from __future__ import annotations

import hashlib
import sqlite3
from collections.abc import Iterator, Mapping, Sequence
from contextlib import closing, contextmanager
from pathlib import Path

import numpy as np
import numpy.typing as npt
import platformdirs

from toolrelay.exceptions import ConfigurationError

__all__ = ["EmbeddingCache", "default_cache_path", "embedding_key"]

_CHUNK = 500  # keys per SQL statement, well below SQLite's variable limit


def default_cache_path() -> Path:
    """``<user cache dir>/toolrelay/embeddings.sqlite3``."""
    return Path(platformdirs.user_cache_dir("toolrelay")) / "embeddings.sqlite3"


def embedding_key(model_id: str, kind: str, text: str) -> str:
    """The cache key of one text: a SHA-256 of model id, kind and text."""
    digest = hashlib.sha256()
    for part in (model_id, kind, text):
        data = part.encode("utf-8")
        digest.update(len(data).to_bytes(8, "big"))
        digest.update(data)
    return digest.hexdigest()


class EmbeddingCache:
    """Embedding vectors on disk, shared by every index and process that uses the same file.

    Args:
        path: The SQLite file; created on first write. Defaults to
            :func:`default_cache_path`.

    Raises:
        ConfigurationError: The file cannot be opened or written (see ``__cause__``).
    """

    def __init__(self, path: str | Path | None = None) -> None:
        self.path = Path(path) if path is not None else default_cache_path()

    def __repr__(self) -> str:
        return f"EmbeddingCache({str(self.path)!r})"

    def get_many(self, keys: Sequence[str]) -> dict[str, npt.NDArray[np.float32]]:
        """The cached vectors among ``keys`` (missing keys are absent from the result)."""
        if not keys or not self.path.exists():
            return {}
        found: dict[str, npt.NDArray[np.float32]] = {}
        with self._connect() as db:
            for start in range(0, len(keys), _CHUNK):
                chunk = list(keys[start : start + _CHUNK])
                marks = ",".join("?" * len(chunk))
                rows = db.execute(
                    f"SELECT key, vector FROM embeddings WHERE key IN ({marks})", chunk
                )
                for key, blob in rows:
                    found[key] = np.frombuffer(blob, dtype=np.float32)
        return found

    def put_many(self, model_id: str, vectors: Mapping[str, npt.NDArray[np.float32]]) -> None:
        """Store vectors by key (existing keys are overwritten)."""
        if not vectors:
            return
        rows = [
            (key, model_id, np.ascontiguousarray(v, dtype=np.float32).tobytes())
            for key, v in vectors.items()
        ]
        with self._connect() as db:
            db.executemany(
                "INSERT OR REPLACE INTO embeddings (key, model, vector) VALUES (?, ?, ?)", rows
            )
            db.commit()

    def count(self, model_id: str | None = None) -> int:
        """How many vectors are stored (for one model, or in all)."""
        if not self.path.exists():
            return 0
        with self._connect() as db:
            if model_id is None:
                row = db.execute("SELECT COUNT(*) FROM embeddings").fetchone()
            else:
                row = db.execute(
                    "SELECT COUNT(*) FROM embeddings WHERE model = ?", (model_id,)
                ).fetchone()
        return int(row[0])

    def clear(self, model_id: str | None = None) -> None:
        """Delete the vectors of one model, or all of them."""
        if not self.path.exists():
            return
        with self._connect() as db:
            if model_id is None:
                db.execute("DELETE FROM embeddings")
            else:
                db.execute("DELETE FROM embeddings WHERE model = ?", (model_id,))
            db.commit()

    @contextmanager
    def _connect(self) -> Iterator[sqlite3.Connection]:
        # A connection per operation: cheap next to embedding, and safe across threads.
        try:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            with closing(sqlite3.connect(self.path, timeout=30.0)) as db:
                db.execute(
                    "CREATE TABLE IF NOT EXISTS embeddings "
                    "(key TEXT PRIMARY KEY, model TEXT NOT NULL, vector BLOB NOT NULL)"
                )
                yield db
        except (sqlite3.Error, OSError) as exc:
            raise ConfigurationError(f"embedding cache {self.path} is unusable: {exc}") from exc
