from __future__ import annotations

import json

import pytest

from tests.extras import needs_extra

pytest.importorskip("mcp_types", reason=needs_extra("mcp"))

from mcp_types import (
    CallToolResult,
    EmbeddedResource,
    ImageContent,
    TextContent,
    TextResourceContents,
)

from toolrelay.mcp._results import result_text, text_result


def test_text_blocks_are_joined() -> None:
    result = CallToolResult(content=[TextContent(text="one"), TextContent(text="two")])
    assert result_text(result) == "one\ntwo"


def test_structured_content_without_blocks_is_json() -> None:
    result = CallToolResult(content=[], structured_content={"total": 3, "città": "Roma"})
    assert result_text(result) == '{"total": 3, "città": "Roma"}'


def test_nothing_is_empty_text() -> None:
    assert result_text(CallToolResult(content=[])) == ""


def test_one_image_reads_like_a_binary_tool_result() -> None:
    result = CallToolResult(content=[ImageContent(data="iVBO", mime_type="image/png")])
    assert json.loads(result_text(result)) == {"mime_type": "image/png", "data": "iVBO"}


def test_mixed_blocks_are_a_json_list() -> None:
    resource = EmbeddedResource(
        resource=TextResourceContents(uri="file:///a.txt", text="hello", mime_type="text/plain")
    )
    result = CallToolResult(content=[TextContent(text="see attached"), resource])
    blocks = json.loads(result_text(result))
    assert blocks[0] == {"type": "text", "text": "see attached"}
    assert blocks[1]["type"] == "resource"
    assert blocks[1]["resource"]["text"] == "hello"


def test_text_result_flags_errors() -> None:
    assert text_result("ok").is_error is False
    failed = text_result("boom", is_error=True)
    assert failed.is_error is True
    assert result_text(failed) == "boom"
