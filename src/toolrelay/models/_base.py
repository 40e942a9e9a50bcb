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

Tool search reaches the model through a channel (:data:`ToolChannel`); an adapter declares
the ones it renders, best first, with a ``tool_channels(model)`` method (the request's model
name, ``None`` for the adapter's own), and one that declares nothing renders
:data:`DEFAULT_TOOL_CHANNELS`. ``"native"`` means the adapter renders a
:class:`~toolrelay.messages.ToolChangeMessage` through the provider's own channel; every
adapter leaves one it cannot render out of the request.

An adapter whose provider caches prompts only from a minimum length says, with a
``cache_shortfall(prompt)`` method, how many tokens a prompt lacks before it is cached (0 once
it is, or when nothing would be); tool search reveals further hits before the first model
call to reach it. One that declares nothing is taken as 0.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from typing import Final, Literal, Protocol, runtime_checkable

from toolrelay.exceptions import ToolsNotSupportedError
from toolrelay.messages import ChatResponse
from toolrelay.prompt import Prompt

__all__ = [
    "DEFAULT_TOOL_CHANNELS",
    "ChatModel",
    "ToolChannel",
    "cache_shortfall",
    "ensure_tools_supported",
    "model_name",
    "tool_channels",
]

ToolChannel = Literal["native", "proxy", "rewrite"]
"""How tools that tool search found reach the model.

- ``"native"``: a :class:`~toolrelay.messages.ToolChangeMessage` in the history, rendered
  through the provider's own channel (Anthropic's ``tool_addition`` blocks); the request's
  tool list never changes.
- ``"proxy"``: ``tool_search``'s answers carry the definitions and ``call_tool`` runs them;
  the tool list never changes. Any model that takes tools renders it.
- ``"rewrite"``: each request's tool list shows the tools found so far. Any model that takes
  tools renders it.
"""

DEFAULT_TOOL_CHANNELS: Final[tuple[ToolChannel, ...]] = ("proxy", "rewrite")
"""The channels of an adapter that declares none: those any model taking tools renders."""


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


def tool_channels(model: object, model_name: str | None = None) -> tuple[ToolChannel, ...]:
    """The channels ``model`` renders for requests to ``model_name``, best first.

    ``model.tool_channels(model_name)`` when the adapter declares it, else
    :data:`DEFAULT_TOOL_CHANNELS`.
    """
    declared = getattr(model, "tool_channels", None)
    if declared is None:
        return DEFAULT_TOOL_CHANNELS
    return tuple(declared(model_name))


def cache_shortfall(model: object, prompt: Prompt) -> int:
    """Tokens ``prompt`` lacks before ``model``'s provider caches it.

    ``model.cache_shortfall(prompt)`` when the adapter declares it, else 0.
    """
    declared = getattr(model, "cache_shortfall", None)
    return 0 if declared is None else max(0, int(declared(prompt)))
