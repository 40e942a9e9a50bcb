"""The peer tool-search adapters of the retrieval benchmark.

The peers run only where their packages are installed (``.venv-peers``, see
``benchmarks/requirements-peers.txt``; ``.ci/run`` runs this module there); elsewhere their
ranking tests skip. A missing peer is reported clearly wherever the tests run.
"""

from __future__ import annotations

from types import ModuleType, SimpleNamespace
from typing import Any

import pytest

from toolrelay.exceptions import ConfigurationError

from ._scripts import RETRIEVAL, load_script

peers = load_script(RETRIEVAL / "peers.py", "benchmark_retrieval_peers")
AVAILABLE: dict[str, str | None] = peers.available_peers()

# Each description shares no word with the others or with the query, except the one tool the
# query is about, so every peer (keyword overlap, BM25, embeddings) must rank it first.
CATALOG: list[dict[str, Any]] = [
    {
        "name": "send_email",
        "description": "Send an email message to someone.",
        "parameters": {"type": "object", "properties": {"to": {"type": "string"}}},
    },
    {
        "name": "get_weather",
        "description": "Weather forecast of one city.",
        "parameters": {
            "type": "object",
            "properties": {"city": {"type": "string", "description": "City name."}},
            "required": ["city"],
        },
    },
    {
        "name": "convert_currency",
        "description": "Convert money amounts between currencies.",
        "parameters": {"type": "object", "properties": {"amount": {"type": "number"}}},
    },
    {
        "name": "search_flights",
        "description": "Find flights between two airports on one date.",
        "parameters": {"type": "object", "properties": {"origin": {"type": "string"}}},
    },
    {
        "name": "stock.price",
        "description": "Latest stock price of one ticker symbol.",
        "parameters": {"type": "object", "properties": {"ticker": {"type": "string"}}},
    },
]
NAMES = {tool["name"] for tool in CATALOG}


def test_every_peer_is_reported_with_a_reason_or_none() -> None:
    assert set(AVAILABLE) == set(peers.PEERS)
    assert len(peers.PEERS) == 4
    for name, reason in AVAILABLE.items():
        assert reason is None or (name in reason and "requirements-peers.txt" in reason)


@pytest.mark.parametrize("name", sorted(peers.PEERS))
def test_unavailable_peer_fails_with_configuration_error(
    name: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    def missing(module: str) -> ModuleType:
        raise ModuleNotFoundError(f"No module named {module!r}", name=module)

    # As where the peer's packages are not installed, whether or not they are here.
    monkeypatch.setattr(peers, "importlib", SimpleNamespace(import_module=missing))

    with pytest.raises(ConfigurationError, match="unavailable") as failure:
        peers.PEERS[name](CATALOG)
    assert "requirements-peers.txt" in str(failure.value)
    reason = peers.available_peers()[name]
    assert reason is not None
    assert name in reason


_RANKERS: dict[str, Any] = {}


def _ranker(name: str) -> Any:
    """The peer's ranker over CATALOG, built once (loading a model takes seconds)."""
    if AVAILABLE[name] is not None:
        pytest.skip(f"{name} is not installed: {AVAILABLE[name]}")
    if name not in _RANKERS:
        _RANKERS[name] = peers.PEERS[name](CATALOG)
    return _RANKERS[name]


@pytest.mark.parametrize("name", sorted(peers.PEERS))
def test_peer_ranks_the_matching_tool_first(name: str) -> None:
    rank = _ranker(name)

    ranked = rank("weather forecast tomorrow", 3)

    assert ranked[0] == "get_weather"
    assert len(ranked) <= 3
    assert len(set(ranked)) == len(ranked)
    assert set(ranked) <= NAMES


@pytest.mark.parametrize("name", sorted(peers.PEERS))
def test_peer_keeps_dotted_names_and_honours_k(name: str) -> None:
    rank = _ranker(name)

    assert rank("latest stock price ticker symbol", 1) == ["stock.price"]
