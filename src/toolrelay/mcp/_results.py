"""MCP tool results ↔ the text toolrelay tools return.

Reading a ``CallToolResult`` (:func:`result_text`):

==========================================  ==================================================
Content                                     Text
==========================================  ==================================================
text blocks only                            the texts, joined by newlines
nothing, with ``structuredContent``         that value as JSON
one image or audio block                    ``{"mime_type": ..., "data": <base64>}`` (as the
                                            tools layer writes binary results)
anything else (mixed, resources, links)     a JSON list of the blocks
==========================================  ==================================================

Writing one (:func:`text_result`): the text as one text block, and ``isError`` when the tool
failed. A result whose ``isError`` is set makes the wrapped tool raise (see
:class:`~toolrelay.mcp.McpTool`), which the execution layer answers with an error response.
"""

from __future__ import annotations

import json

from mcp_types import AudioContent, CallToolResult, ContentBlock, ImageContent, TextContent

__all__ = ["result_text", "text_result"]


def result_text(result: CallToolResult) -> str:
    """The text a model reads for an MCP tool's result (see the module table)."""
    blocks = result.content
    if not blocks:
        if result.structured_content is None:
            return ""
        return json.dumps(result.structured_content, ensure_ascii=False)
    texts = [block.text for block in blocks if isinstance(block, TextContent)]
    if len(texts) == len(blocks):
        return "\n".join(texts)
    if len(blocks) == 1 and isinstance(blocks[0], ImageContent | AudioContent):
        return json.dumps({"mime_type": blocks[0].mime_type, "data": blocks[0].data})
    return json.dumps([_block_json(block) for block in blocks], ensure_ascii=False)


def text_result(text: str, *, is_error: bool = False) -> CallToolResult:
    """A result of one text block, flagged as an error when ``is_error``."""
    return CallToolResult(content=[TextContent(text=text)], is_error=is_error)


def _block_json(block: ContentBlock) -> object:
    return block.model_dump(mode="json", by_alias=True, exclude_none=True)
