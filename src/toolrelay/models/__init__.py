"""Chat models: the contract every provider adapter satisfies, and the streamed-chunk format.

See :class:`ChatModel` for the contract and :mod:`toolrelay.models.chunks` for how partial
tool calls travel in a stream and merge back.
"""

from toolrelay.models.base import ChatModel, ensure_tools_supported, model_name
from toolrelay.models.chunks import TOOL_CALL_INDEXES, ChunkMerger, merge_chunks

__all__ = [
    "TOOL_CALL_INDEXES",
    "ChatModel",
    "ChunkMerger",
    "ensure_tools_supported",
    "merge_chunks",
    "model_name",
]
