"""A server adds a tool and says so: the next turn's tool search finds it."""

from __future__ import annotations

import asyncio
import json

import pytest

from tests.extras import needs_extra

pytest.importorskip("mcp_types", reason=needs_extra("mcp"))

from tests.mcp.mcp_helpers import demo_stdio
from toolrelay.client import ChatClient, ToolSearchAdvisor
from toolrelay.mcp import McpToolset
from toolrelay.messages import ToolResponseMessage
from toolrelay.search._bm25 import BM25ToolIndex
from toolrelay.testing import ScriptedModel, tool_call_response
from toolrelay.toolsearch import TOOL_SEARCH_NAME, ToolSearchReport

QUERY = {"queries": ["multiply two whole numbers product"], "max_results": 3}


def report_of(response: object) -> ToolSearchReport:
    report = response.tool_search  # type: ignore[arg-type]
    assert report is not None
    return report


async def test_the_next_turn_finds_a_tool_the_server_added() -> None:
    async with McpToolset(demo_stdio("calc")) as toolset:
        advisor = ToolSearchAdvisor(toolset.catalog, index=BM25ToolIndex(), channel="rewrite")
        model = ScriptedModel(
            [
                tool_call_response((TOOL_SEARCH_NAME, QUERY)),
                "no multiplying tool yet",
                tool_call_response((TOOL_SEARCH_NAME, QUERY)),
                tool_call_response(("calc__multiply", {"a": 6, "b": 7})),
                "6 times 7 is 42",
            ]
        )
        client = ChatClient.builder(model).default_advisors(advisor).build()

        first = await client.prompt("multiply 6 by 7").conversation("c1").acall()
        assert "calc.multiply" not in report_of(first).searches[0].names

        version = toolset.version
        grow = toolset.catalog.get("calc.grow")
        assert grow is not None
        await grow.call('{"tool_name": "multiply"}')
        async with asyncio.timeout(10):
            await toolset.wait_for_version(version + 1)

        second = await client.prompt("multiply 6 by 7").conversation("c1").acall()
        report = report_of(second)
        assert report.reindexed is True
        assert report.catalog_fingerprint != report_of(first).catalog_fingerprint
        assert report.searches[0].names[0] == "calc.multiply"
        answer = second.tool_loop.rounds[0].responses[0].data  # type: ignore[union-attr]
        assert json.loads(answer)[0]["name"] == "calc__multiply"
        # Found, shown, called on the server.
        assert "calc.multiply" in report.rounds[1].exposed
        responses = [
            r
            for m in model.prompts[-1].messages
            if isinstance(m, ToolResponseMessage)
            for r in m.responses
        ]
        assert (responses[-1].name, responses[-1].data, responses[-1].is_error) == (
            "calc.multiply",
            "42",
            False,
        )
        assert second.content() == "6 times 7 is 42"
