"""Chat models: the contract every provider adapter satisfies, and the streamed-chunk format.

See :class:`ChatModel` for the contract, :class:`ChunkMerger` for how partial tool calls
travel in a stream and merge back, and :data:`ToolChannel` for the tool search channels an
adapter declares (``tool_channels(model)``).

Provider adapters (each needs its extra; importing this package imports no provider SDK):

- :class:`OpenAIChatModel` (``openai``): OpenAI Chat Completions and compatible servers.
- :class:`OpenAIResponsesModel` (``openai``): the OpenAI Responses API.
- :class:`AnthropicChatModel` (``anthropic``): the Anthropic Messages API.
- :class:`LlamaCppChatModel` (``local``): a GGUF model in process, tool calls constrained to
  the tools' schemas.
- :class:`OpenAIEmbedder` (``openai``): embeddings for the vector tool indexes.
"""

from typing import TYPE_CHECKING, Any

from toolrelay.models._base import ChatModel, ToolChannel
from toolrelay.models._chunks import ChunkMerger

if TYPE_CHECKING:
    from toolrelay.models._anthropic import AnthropicChatModel
    from toolrelay.models._embeddings import OpenAIEmbedder
    from toolrelay.models._llama_cpp import LlamaCppChatModel
    from toolrelay.models._openai import OpenAIChatModel
    from toolrelay.models._openai_responses import OpenAIResponsesModel

# The adapters load on first access, so a missing SDK only matters to the code that uses it.
_ADAPTERS = {
    "AnthropicChatModel": "toolrelay.models._anthropic",
    "LlamaCppChatModel": "toolrelay.models._llama_cpp",
    "OpenAIChatModel": "toolrelay.models._openai",
    "OpenAIEmbedder": "toolrelay.models._embeddings",
    "OpenAIResponsesModel": "toolrelay.models._openai_responses",
}

__all__ = [
    "AnthropicChatModel",
    "ChatModel",
    "ChunkMerger",
    "LlamaCppChatModel",
    "OpenAIChatModel",
    "OpenAIEmbedder",
    "OpenAIResponsesModel",
    "ToolChannel",
]


def __getattr__(name: str) -> Any:
    module = _ADAPTERS.get(name)
    if module is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    from importlib import import_module

    value = getattr(import_module(module), name)
    globals()[name] = value
    return value
