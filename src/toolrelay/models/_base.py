"""The chat model contract: one request in, one response (or a stream of chunks) out.

A chat model only answers; it never runs tools. The tool loop lives in the client's
``ToolCallingAdvisor``, which sends the tools the model may call in ``prompt.options.tools``
(adapters send each tool's :class:`~toolrelay.tools.ToolDefinition` in the provider's
format) and runs whatever calls come back.

A model that cannot take tools says so with ``supports_tools = False``; handing it tools is an
error (:class:`~toolrelay.exceptions.ToolsNotSupportedError`), never a silent skip. Adapters
call :func:`ensure_tools_supported` first thing, and the client checks again before it calls
any model.

Streaming yields :class:`~toolrelay.messages.ChatResponse` chunks in the representation
that :class:`~toolrelay.models.ChunkMerger` documents and merges.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from typing import Protocol, runtime_checkable

from toolrelay.exceptions import ToolsNotSupportedError
from toolrelay.messages import ChatResponse
from toolrelay.prompt import Prompt

__all__ = ["ChatModel", "ensure_tools_supported", "model_name"]


@runtime_checkable
class ChatModel(Protocol):
    """What the client needs from a chat model.

    Attributes:
        supports_tools: Whether the model can be offered tools. When false, a prompt whose
            options carry tools (or tool names) must be refused with
            :class:`~toolrelay.exceptions.ToolsNotSupportedError`.
    """

    supports_tools: bool

    async def call(self, prompt: Prompt) -> ChatResponse:
        """Answer ``prompt`` with one complete response.

        Args:
            prompt: The messages and options; ``prompt.options.tools`` are the tools the model
                may call in this request.

        Returns:
            The model's answer: text and/or tool calls, with the request's token usage.

        Raises:
            ToolsNotSupportedError: The prompt carries tools and the model cannot take them.
            ModelError: The provider failed or answered something unusable.
        """
        ...

    def stream(self, prompt: Prompt) -> AsyncIterator[ChatResponse]:
        """Answer ``prompt`` as a stream of chunks.

        Each chunk is a :class:`~toolrelay.messages.ChatResponse` holding a piece of the
        answer; :class:`~toolrelay.models.ChunkMerger` says how partial tool calls are carried
        and rebuilds the complete response.

        Raises:
            ToolsNotSupportedError: The prompt carries tools and the model cannot take them.
            ModelError: The provider failed or answered something unusable.
        """
        ...


def ensure_tools_supported(model: object, prompt: Prompt) -> None:
    """Refuse a prompt with tools when ``model`` cannot take tools.

    Models without a ``supports_tools`` attribute are assumed to support tools.

    Raises:
        ToolsNotSupportedError: ``prompt.options`` names tools and the model cannot call them.
    """
    options = prompt.options
    if not (options.tools or options.tool_names):
        return
    if getattr(model, "supports_tools", True):
        return
    names = [t.definition.name for t in options.tools] + list(options.tool_names)
    raise ToolsNotSupportedError(
        f"model {model_name(model)} cannot call tools, but the request offers "
        f"{len(names)} tool(s): {', '.join(names)}; remove the tools or use a model that "
        "supports tool calling"
    )


def model_name(model: object) -> str:
    """A readable name for ``model`` in error messages (its ``name`` attribute or class)."""
    name = getattr(model, "name", None)
    return repr(name) if isinstance(name, str) and name else type(model).__name__
