"""A sentence-transformers model run by ONNX Runtime: exported once, int8 if asked.

PyTorch spends most of a short text's time outside the arithmetic, and its float32 kernels
leave a CPU's int8 instructions (VNNI, AMX) unused. ONNX Runtime runs the same network with
less overhead and, quantized to int8 weights, 2-3x faster per word piece. The network is
exported from the model directory the first time it is needed, with PyTorch (which the
``embeddings`` extra brings), and kept on disk under the user's cache directory
(``<user cache dir>/toolrelay/onnx/``), so later processes load it in a fraction of a second
without importing PyTorch at all. The int8 copy is made from that export by ONNX Runtime's
dynamic quantization (int8 weights per output channel, activations quantized per call).

Only models that mean-pool their word-piece vectors (``1_Pooling/config.json``), as
all-MiniLM-L6-v2 does, are exported; the pooling is part of the exported graph.
"""

from __future__ import annotations

import hashlib
import json
import os
import tempfile
import threading
import warnings
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import numpy as np
import numpy.typing as npt
import platformdirs

from toolrelay.exceptions import ConfigurationError

__all__ = ["OnnxEncoder", "default_onnx_dir", "onnx_available", "quiet_transformers"]

# Bump when the exported graph changes (inputs, pooling, opset), so old files are not reused.
_RECIPE = "mean-pooled-v1"
_OPSET = 17
_INSTALL_HINT = 'install the embeddings extra: pip install "toolrelay[embeddings]"'


def onnx_available() -> bool:
    """Whether ONNX Runtime and the ``onnx`` package (for quantizing) are installed."""
    from importlib.util import find_spec

    return all(find_spec(m) is not None for m in ("onnxruntime", "onnx"))


def default_onnx_dir() -> Path:
    """``<user cache dir>/toolrelay/onnx``: where exported models are kept."""
    return Path(platformdirs.user_cache_dir("toolrelay")) / "onnx"


class OnnxEncoder:
    """Mean-pooled sentence vectors of a local sentence-transformers model, by ONNX Runtime.

    Sessions (one per precision and thread count) and tokenizers (one per length limit)
    are made on first use and shared by every call; calls may come from several threads.

    Args:
        model_path: The sentence-transformers model directory (``tokenizer.json``, weights).
        directory: Where exported models are kept (default :func:`default_onnx_dir`).
        batch_size: Texts per forward pass. Texts are sorted by length first, so each batch
            pads to about its own length.

    Raises:
        ConfigurationError: ONNX Runtime is missing, or the model cannot be exported (not
            mean-pooled, no ``tokenizer.json``, PyTorch missing for the first export).
    """

    def __init__(
        self, model_path: Path, *, directory: Path | None = None, batch_size: int = 32
    ) -> None:
        self.model_path = model_path
        self.directory = directory or default_onnx_dir()
        self.batch_size = batch_size
        self._sessions: dict[tuple[bool, int | None], Any] = {}
        self._tokenizers: dict[int, Any] = {}
        self._lock = threading.Lock()
        self._max_length = _max_seq_length(model_path)

    def dimension(self) -> int:
        """The length of a vector (the model's ``hidden_size``)."""
        config = json.loads((self.model_path / "config.json").read_text(encoding="utf-8"))
        return int(config["hidden_size"])

    def model_file(self, *, quantized: bool) -> Path:
        """The exported model (float32 or int8), exporting it first if it is not on disk."""
        folder = self.directory / _model_digest(self.model_path)
        plain = folder / "model.onnx"
        if not plain.is_file():
            _export(self.model_path, plain)
        if not quantized:
            return plain
        int8 = folder / f"model-int8-ort{_onnxruntime_version()}.onnx"
        if not int8.is_file():
            _quantize(plain, int8)
        return int8

    def load(self, *, quantized: bool, threads: int | None) -> None:
        """Export (if needed) and open the session for this precision and thread count."""
        self._session(quantized, threads)

    def encode(
        self,
        texts: Sequence[str],
        *,
        max_length: int | None,
        quantized: bool,
        threads: int | None,
    ) -> npt.NDArray[np.float32]:
        """Mean-pooled vectors of ``texts`` (not normalised), one row per text.

        Args:
            texts: The texts, prefixes already added.
            max_length: Cut each text to this many word pieces (``None``: the model's limit).
            quantized: Run the int8 copy of the model.
            threads: Intra-op threads (``None``: ONNX Runtime's default, one per core).
        """
        session = self._session(quantized, threads)
        limit = min(max_length or self._max_length, self._max_length)
        encodings = self._tokenizer(limit).encode_batch(list(texts))
        lengths = np.array([len(e.ids) for e in encodings])
        order = np.argsort(lengths, kind="stable")
        out: npt.NDArray[np.float32] | None = None
        for start in range(0, len(order), self.batch_size):
            rows = order[start : start + self.batch_size]
            longest = int(lengths[rows].max())
            ids = np.zeros((len(rows), longest), dtype=np.int64)
            mask = np.zeros((len(rows), longest), dtype=np.int64)
            for row, i in enumerate(rows):
                pieces = encodings[i].ids
                ids[row, : len(pieces)] = pieces
                mask[row, : len(pieces)] = 1
            vectors = session.run(["embedding"], {"input_ids": ids, "attention_mask": mask})[0]
            if out is None:
                out = np.empty((len(texts), vectors.shape[1]), dtype=np.float32)
            out[rows] = vectors
        if out is None:
            raise ConfigurationError("OnnxEncoder.encode needs at least one text")
        return out

    def _session(self, quantized: bool, threads: int | None) -> Any:
        key = (quantized, threads)
        session = self._sessions.get(key)
        if session is not None:
            return session
        with self._lock:
            if key not in self._sessions:
                self._sessions[key] = _open(self.model_file(quantized=quantized), threads)
            return self._sessions[key]

    def _tokenizer(self, limit: int) -> Any:
        tokenizer = self._tokenizers.get(limit)
        if tokenizer is not None:
            return tokenizer
        with self._lock:
            if limit not in self._tokenizers:
                from tokenizers import Tokenizer

                path = self.model_path / "tokenizer.json"
                if not path.is_file():
                    raise ConfigurationError(f"no tokenizer.json in {self.model_path}")
                tokenizer = Tokenizer.from_file(str(path))
                tokenizer.no_padding()
                tokenizer.enable_truncation(limit)
                self._tokenizers[limit] = tokenizer
            return self._tokenizers[limit]


def _open(path: Path, threads: int | None) -> Any:
    try:
        import onnxruntime
    except ImportError as exc:
        raise ConfigurationError(f"onnxruntime is not installed; {_INSTALL_HINT}") from exc
    options = onnxruntime.SessionOptions()
    if threads is not None:
        options.intra_op_num_threads = threads
    options.inter_op_num_threads = 1
    # Idle threads spinning for work take cores from everything else on a busy machine.
    options.add_session_config_entry("session.intra_op.allow_spinning", "0")
    return onnxruntime.InferenceSession(str(path), options, providers=["CPUExecutionProvider"])


def _onnxruntime_version() -> str:
    try:
        import onnxruntime
    except ImportError as exc:
        raise ConfigurationError(f"onnxruntime is not installed; {_INSTALL_HINT}") from exc
    return str(onnxruntime.__version__)


def _max_seq_length(model_path: Path) -> int:
    config = model_path / "sentence_bert_config.json"
    if config.is_file():
        limit = json.loads(config.read_text(encoding="utf-8")).get("max_seq_length")
        if isinstance(limit, int) and limit > 0:
            return limit
    return 512


def _model_digest(model_path: Path) -> str:
    """Names the export of this model: its files' names, sizes and modification times."""
    if not model_path.is_dir():
        raise ConfigurationError(f"no model directory at {model_path}")
    digest = hashlib.sha256(_RECIPE.encode())
    for path in sorted(model_path.rglob("*")):
        if path.is_file():
            stat = path.stat()
            digest.update(f"{path.relative_to(model_path)}\0{stat.st_size}\0".encode())
            digest.update(str(stat.st_mtime_ns).encode())
    return f"{model_path.name}-{digest.hexdigest()[:16]}"


def _pooling_is_mean(model_path: Path) -> bool:
    pooling = model_path / "1_Pooling" / "config.json"
    if not pooling.is_file():
        return False
    config = json.loads(pooling.read_text(encoding="utf-8"))
    modes = [key for key, value in config.items() if key.startswith("pooling_mode") and value]
    return modes == ["pooling_mode_mean_tokens"]


def _export(model_path: Path, target: Path) -> None:
    """Export the model with mean pooling to ``target`` (written whole or not at all)."""
    if not _pooling_is_mean(model_path):
        raise ConfigurationError(
            f"{model_path} does not mean-pool its word pieces; use backend='torch' for it"
        )
    try:
        import torch
        from transformers import AutoModel
    except ImportError as exc:
        raise ConfigurationError(
            f"exporting a model to ONNX needs PyTorch and transformers; {_INSTALL_HINT}"
        ) from exc
    with quiet_transformers():
        model = AutoModel.from_pretrained(str(model_path)).eval()

    class MeanPooled(torch.nn.Module):
        def __init__(self, encoder: Any) -> None:
            super().__init__()
            self.encoder = encoder

        def forward(self, input_ids: Any, attention_mask: Any) -> Any:
            hidden = self.encoder(input_ids=input_ids, attention_mask=attention_mask)[0]
            weights = attention_mask.unsqueeze(-1).to(hidden.dtype)
            return (hidden * weights).sum(1) / weights.sum(1).clamp(min=1e-9)

    sample = torch.ones((2, 8), dtype=torch.long)
    axes = {"input_ids": {0: "batch", 1: "pieces"}, "attention_mask": {0: "batch", 1: "pieces"}}
    with _replacing(target) as partial, warnings.catch_warnings(), torch.no_grad():
        # The TorchScript exporter needs nothing beyond PyTorch; it warns that it is legacy.
        warnings.simplefilter("ignore")
        torch.onnx.export(
            MeanPooled(model),
            (sample, sample),
            str(partial),
            dynamo=False,
            input_names=["input_ids", "attention_mask"],
            output_names=["embedding"],
            dynamic_axes={**axes, "embedding": {0: "batch"}},
            opset_version=_OPSET,
        )


@contextmanager
def quiet_transformers() -> Iterator[None]:
    """Transformers without progress bars ("Loading weights") or warnings, for the block.

    Its settings are process-wide: they are put back as they were afterwards.
    """
    import importlib

    # Both untyped to mypy (the hub does not re-export these names); Any keeps them usable.
    hub: Any = importlib.import_module("huggingface_hub.utils")
    transformers_logging: Any = importlib.import_module("transformers.utils.logging")

    bars = transformers_logging.is_progress_bar_enabled()
    hub_bars = not hub.are_progress_bars_disabled()
    verbosity = transformers_logging.get_verbosity()
    transformers_logging.disable_progress_bar()  # the hub's bars too
    transformers_logging.set_verbosity_error()
    try:
        yield
    finally:
        transformers_logging.set_verbosity(verbosity)
        if bars:
            transformers_logging.enable_progress_bar()  # turns the hub's on as well
        if hub_bars and hub.are_progress_bars_disabled():
            hub.enable_progress_bars()
        elif not hub_bars and not hub.are_progress_bars_disabled():
            hub.disable_progress_bars()


def _quantize(source: Path, target: Path) -> None:
    """An int8 copy of ``source``: weights per output channel, activations per call."""
    try:
        from onnxruntime.quantization import QuantType, quantize_dynamic
    except ImportError as exc:
        raise ConfigurationError(f"quantizing needs onnxruntime and onnx; {_INSTALL_HINT}") from exc
    import logging

    quantizer_log = logging.getLogger()  # it advises pre-processing on the root logger
    level = quantizer_log.level
    quantizer_log.setLevel(logging.ERROR)
    try:
        with _replacing(target) as partial:
            quantize_dynamic(
                str(source), str(partial), weight_type=QuantType.QInt8, per_channel=True
            )
    finally:
        quantizer_log.setLevel(level)


@contextmanager
def _replacing(target: Path) -> Iterator[Path]:
    """A temporary path beside ``target``, moved onto it only if the block succeeds.

    Two processes exporting at once each write their own file; the last rename wins, and a
    reader never sees half a model.
    """
    try:
        target.parent.mkdir(parents=True, exist_ok=True)
        handle, name = tempfile.mkstemp(dir=target.parent, prefix=target.stem, suffix=".partial")
    except OSError as exc:
        raise ConfigurationError(f"cannot write {target}: {exc}") from exc
    os.close(handle)
    partial = Path(name)
    try:
        yield partial
    except BaseException:
        partial.unlink(missing_ok=True)
        raise
    os.replace(partial, target)
