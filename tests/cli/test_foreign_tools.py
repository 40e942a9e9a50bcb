"""Module specs of `toolrelay tools`, `lint` and `search` holding other frameworks' tools."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.extras import needs_extra
from toolrelay.cli._catalog_modules import load_module_tools

LANGCHAIN = '''
from langchain_core.tools import tool


@tool
def get_weather(city: str) -> str:
    """Current weather conditions for a city."""
    return "sunny in " + city


TOOLS = [get_weather]
'''

PYDANTIC_AI = '''
from pydantic_ai import FunctionToolset


def refund_order(order_id: str) -> str:
    """Refund an order by its id."""
    return "refunded " + order_id


toolset = FunctionToolset([refund_order])
'''

OPENAI_AGENTS = '''
from agents import function_tool


@function_tool
def stock_quote(symbol: str) -> str:
    """The latest stock price quote for a ticker symbol."""
    return symbol + ": 42"
'''


def module(tmp_path: Path, name: str, source: str) -> str:
    path = tmp_path / f"{name}.py"
    path.write_text(source, encoding="utf-8")
    return str(path)


async def test_langchain_tools_of_a_module_and_of_an_attribute(tmp_path: Path) -> None:
    pytest.importorskip("langchain_core", reason=needs_extra("langgraph"))
    spec = module(tmp_path, "lc_tools", LANGCHAIN)
    [(tool, origin)] = load_module_tools(spec)
    assert tool.definition.name == "get_weather"
    assert tool.definition.description == "Current weather conditions for a city."
    assert origin == "lc_tools.get_weather"
    assert await tool.call('{"city": "Oslo"}') == "sunny in Oslo"
    [(listed, _)] = load_module_tools(f"{spec}:TOOLS")
    assert listed.definition == tool.definition


async def test_a_pydantic_ai_toolset(tmp_path: Path) -> None:
    pytest.importorskip("pydantic_ai", reason=needs_extra("pydantic-ai"))
    [(tool, _)] = load_module_tools(module(tmp_path, "pai_tools", PYDANTIC_AI))
    assert tool.definition.name == "refund_order"
    assert set(tool.definition.input_schema["properties"]) == {"order_id"}
    assert await tool.call('{"order_id": "7"}') == "refunded 7"


async def test_openai_agents_function_tools(tmp_path: Path) -> None:
    pytest.importorskip("agents", reason=needs_extra("openai-agents"))
    [(tool, _)] = load_module_tools(module(tmp_path, "sdk_tools", OPENAI_AGENTS))
    assert tool.definition.name == "stock_quote"
    assert await tool.call('{"symbol": "ACME"}') == "ACME: 42"
