"""Chat models: the contract every provider adapter satisfies, and the streamed-chunk format.

See :class:`ChatModel` for the contract and :mod:`toolrelay.models.chunks` for how partial
tool calls travel in a stream and merge back.

Provider adapters (each needs its extra; importing this package imports no provider SDK):

- :class:`OpenAIChatModel` (``openai``): OpenAI Chat Completions and compatible servers.
- :class:`AnthropicChatModel` (``anthropic``): the Anthropic Messages API.
- :class:`LlamaCppChatModel` (``local``): a GGUF model in process, tool calls constrained to
  the tools' schemas.
- :class:`OpenAIEmbedder` (``openai``): embeddings for the vector tool indexes.

:func:`messages_to_openai` writes messages in the Chat Completions wire format (no SDK
needed), the form request sizes are counted in.
"""

from typing import TYPE_CHECKING, Any

from toolrelay.models.base import ChatModel, ensure_tools_supported, model_name
from toolrelay.models.chunks import TOOL_CALL_INDEXES, ChunkMerger, merge_chunks
from toolrelay.models.openai_wire import messages_to_openai

if TYPE_CHECKING:
    from toolrelay.models.anthropic import AnthropicChatModel
    from toolrelay.models.embeddings import OpenAIEmbedder
    from toolrelay.models.llama_cpp import LlamaCppChatModel
    from toolrelay.models.openai import OpenAIChatModel

# The adapters load on first access, so a missing SDK only matters to the code that uses it.
_ADAPTERS = {
    "AnthropicChatModel": "toolrelay.models.anthropic",
    "LlamaCppChatModel": "toolrelay.models.llama_cpp",
    "OpenAIChatModel": "toolrelay.models.openai",
    "OpenAIEmbedder": "toolrelay.models.embeddings",
}

__all__ = [
    "TOOL_CALL_INDEXES",
    "AnthropicChatModel",
    "ChatModel",
    "ChunkMerger",
    "LlamaCppChatModel",
    "OpenAIChatModel",
    "OpenAIEmbedder",
    "ensure_tools_supported",
    "merge_chunks",
    "messages_to_openai",
    "model_name",
]


def __getattr__(name: str) -> Any:
    module = _ADAPTERS.get(name)
    if module is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    from importlib import import_module

    value = getattr(import_module(module), name)
    globals()[name] = value
    return value
