"""``tool_search``'s and ``call_tool``'s parameters as clients send them.

``arguments`` arrives as an object, as a JSON text of one, or not at all, and is read as the
named tool's arguments exactly as a direct call's are; anything else is an error result
naming the fix. Search words arrive as text, or decoded by the client into a number or a list.
"""

from __future__ import annotations

import json
from typing import Any

import pytest
from mcp import Client

from toolrelay.gateway import ToolGateway
from toolrelay.tools import ToolCatalog, as_tools, tool

from ._helpers import served, text_of


@tool(name="billing.get_invoice", read_only=True)
def get_invoice(number: str) -> str:
    """Read-only lookup of one invoice by its number."""
    return f"invoice {number}: paid"


@tool(name="ops.server_time", read_only=True)
def server_time() -> str:
    """The server's clock."""
    return "2026-11-30T12:00:00Z"


def catalog(*functions: Any) -> ToolCatalog:
    return ToolCatalog(as_tools(*functions))


@pytest.mark.parametrize(
    "arguments",
    [{"number": "I-7"}, '{"number": "I-7"}', ' {"number": "I-7"} '],
    ids=["object", "json text", "json text with spaces"],
)
async def test_arguments_may_be_an_object_or_a_json_text_of_one(arguments: object) -> None:
    gateway = ToolGateway(catalog(get_invoice, server_time))
    async with Client(served(gateway)) as client:
        result = await client.call_tool(
            "call_tool", {"name": "billing.get_invoice", "arguments": arguments}
        )
    assert (result.is_error, text_of(result)) == (False, "invoice I-7: paid")


@pytest.mark.parametrize("call", [{}, {"arguments": None}, {"arguments": ""}, {"arguments": {}}])
async def test_a_tool_without_parameters_needs_no_arguments(call: dict[str, Any]) -> None:
    gateway = ToolGateway(catalog(get_invoice, server_time))
    async with Client(served(gateway)) as client:
        result = await client.call_tool("call_tool", {"name": "ops.server_time", **call})
    assert (result.is_error, text_of(result)) == (False, "2026-11-30T12:00:00Z")


@pytest.mark.parametrize(
    ("arguments", "problem"),
    [
        ("number=I-7", "Arguments are not valid JSON: Expecting value at line 1, column 1."),
        ('{"number": "I-7"', "Arguments are not valid JSON:"),
        ('["I-7"]', "Arguments must be a JSON object, not an array."),
        ('"I-7"', "Arguments must be a JSON object, not a string."),
        (["I-7"], "Arguments must be a JSON object, not an array."),
        (7, "Arguments must be a JSON object, not a number."),
        ("[" * 100_000, "Arguments are nested too deeply"),
    ],
    ids=["text", "broken json", "array text", "string text", "array", "number", "deep"],
)
async def test_arguments_that_are_no_object_are_an_error_result_naming_the_fix(
    arguments: object, problem: str
) -> None:
    gateway = ToolGateway(catalog(get_invoice))
    async with Client(served(gateway)) as client:
        result = await client.call_tool(
            "call_tool", {"name": "billing.get_invoice", "arguments": arguments}
        )
    assert result.is_error
    text = text_of(result)
    # The named tool's arguments are wrong, not call_tool's: what came, and the fix.
    assert text.startswith("Invalid arguments for tool 'billing.get_invoice':\n- ")
    assert problem in text
    assert text.endswith("\nFix the arguments and call the tool again.")


async def test_the_decoded_arguments_are_checked_like_any_others() -> None:
    gateway = ToolGateway(catalog(get_invoice))
    async with Client(served(gateway)) as client:
        # The tool's own validation still applies once the text is decoded.
        result = await client.call_tool(
            "call_tool", {"name": "billing.get_invoice", "arguments": '{"numbr": 1}'}
        )
    assert result.is_error
    assert text_of(result).splitlines()[1:3] == [
        "- number: Field required",
        "- numbr: Extra inputs are not permitted",
    ]


@tool(name="http.explain_status", read_only=True)
def explain_status(code: int) -> str:
    """What an HTTP status such as 404 or 503 means, and what usually causes it."""
    return f"{code}: not found"


@pytest.mark.parametrize(
    "arguments",
    [
        {"queries": ["404"]},
        {"queries": "404"},  # one query, sent bare
        {"queries": '["404"]'},  # the Inspector sends `--tool-arg queries=["404"]` as text
        {"queries": 404},  # and decodes `--tool-arg queries=404` into a number
        {"queries": [["http", 404]]},  # models send lists of keywords
        {"queries": ["404"], "category": "http"},
    ],
    ids=["text", "bare", "json", "number", "words", "category"],
)
async def test_search_takes_words_the_way_clients_decode_them(arguments: dict[str, Any]) -> None:
    search = ToolGateway(catalog(get_invoice, explain_status)).tools()[0]
    answer = await search.call(json.dumps(arguments))
    assert [hit["name"] for hit in json.loads(answer)] == ["http.explain_status"]


async def test_a_query_that_is_no_text_is_an_argument_error() -> None:
    search = ToolGateway(catalog(get_invoice)).tools()[0]
    with pytest.raises(Exception, match=r"queries\.0: Input should be a valid string"):
        await search.call('{"queries": [{"words": "invoice"}]}')
