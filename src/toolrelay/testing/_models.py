"""Chat models for tests: a scripted one and one driven by a function.

Both record every prompt they receive (and the tool definitions each prompt showed), fill in
missing tool-call ids (``call_1``, ``call_2``, ... across the model's life), refuse tools when
built with ``supports_tools=False``, declare the tool search channels they are given
(``tool_channels=("native", "proxy", "rewrite")`` to test the native channel; by default
those any model renders), and can stream: text is cut into small chunks and tool
calls are sent as fragments, so the chunk merging runs for real.

Example:
    >>> model = ScriptedModel([
    ...     tool_call_response(("weather", {"city": "Paris"})),
    ...     "It is sunny in Paris.",
    ... ])
"""

from __future__ import annotations

import inspect
from collections.abc import AsyncIterator, Awaitable, Callable, Iterable, Sequence
from typing import TypeAlias

from toolrelay.exceptions import ModelError
from toolrelay.messages import AssistantMessage, ChatResponse, Generation, ToolCall
from toolrelay.models._base import DEFAULT_TOOL_CHANNELS, ToolChannel, ensure_tools_supported
from toolrelay.prompt import Prompt
from toolrelay.testing._responses import split_response, text_response
from toolrelay.tools._base import ToolDefinition

__all__ = ["FunctionModel", "ModelReply", "ResponseFunction", "ScriptStep", "ScriptedModel"]

ModelReply: TypeAlias = ChatResponse | str
"""What a script step or function produces; a ``str`` becomes :func:`text_response`."""

ResponseFunction: TypeAlias = Callable[[Prompt], ModelReply | Awaitable[ModelReply]]
"""Decides the reply to a prompt; may be a coroutine function."""

ScriptStep: TypeAlias = ModelReply | ResponseFunction
"""One step of a :class:`ScriptedModel`: a fixed reply or a function of the prompt."""


class _RecordingModel:
    """Shared recording, id filling and streaming of the test models."""

    def __init__(
        self,
        *,
        supports_tools: bool,
        chunk_size: int,
        name: str,
        tool_channels: Sequence[ToolChannel] = DEFAULT_TOOL_CHANNELS,
        cache_shortfall: Callable[[Prompt], int] | None = None,
    ) -> None:
        self.supports_tools = supports_tools
        self.channels = tuple(tool_channels)
        self._cache_shortfall = cache_shortfall
        self.chunk_size = chunk_size
        self.name = name
        self.prompts: list[Prompt] = []
        self.tool_definitions: list[tuple[ToolDefinition, ...]] = []
        self._next_call_id = 1

    @property
    def call_count(self) -> int:
        """How many requests (calls and streams) the model received."""
        return len(self.prompts)

    @property
    def last_prompt(self) -> Prompt:
        """The most recent prompt.

        Raises:
            ModelError: The model has not been called yet.
        """
        if not self.prompts:
            raise ModelError(f"{self.name} has not been called")
        return self.prompts[-1]

    def tool_channels(self, model: str | None = None) -> tuple[ToolChannel, ...]:
        """The tool search channels it was given, whatever the model name."""
        return self.channels

    def cache_shortfall(self, prompt: Prompt) -> int:
        """Tokens ``prompt`` lacks before a prompt cache keeps it: the rule it was given, or 0."""
        return 0 if self._cache_shortfall is None else self._cache_shortfall(prompt)

    def tool_names_shown(self, request: int = -1) -> list[str]:
        """The names of the tools shown in request ``request`` (default: the latest)."""
        return [d.name for d in self.tool_definitions[request]]

    def _reply(self, prompt: Prompt) -> ModelReply | Awaitable[ModelReply]:
        raise NotImplementedError

    async def call(self, prompt: Prompt) -> ChatResponse:
        """Record ``prompt`` and return the next reply."""
        ensure_tools_supported(self, prompt)
        self.prompts.append(prompt)
        self.tool_definitions.append(tuple(t.definition for t in prompt.options.tools))
        reply = self._reply(prompt)
        if inspect.isawaitable(reply):
            reply = await reply
        response = text_response(reply) if isinstance(reply, str) else reply
        if not isinstance(response, ChatResponse):
            raise ModelError(f"{self.name} produced {response!r}, not a ChatResponse or str")
        return self._with_ids(response)

    async def stream(self, prompt: Prompt) -> AsyncIterator[ChatResponse]:
        """Record ``prompt`` and stream the next reply in small chunks."""
        response = await self.call(prompt)
        for chunk in split_response(response, self.chunk_size):
            yield chunk

    def _with_ids(self, response: ChatResponse) -> ChatResponse:
        if not any(not c.id for g in response.generations for c in g.message.tool_calls):
            return response
        generations = []
        for generation in response.generations:
            calls = []
            for call in generation.message.tool_calls:
                if not call.id:
                    call = ToolCall(
                        id=f"call_{self._next_call_id}", name=call.name, arguments=call.arguments
                    )
                    self._next_call_id += 1
                calls.append(call)
            message = AssistantMessage(text=generation.message.text, tool_calls=tuple(calls))
            generations.append(
                Generation(
                    message=message,
                    finish_reason=generation.finish_reason,
                    metadata=generation.metadata,
                )
            )
        return ChatResponse(
            generations=tuple(generations), usage=response.usage, metadata=response.metadata
        )


class ScriptedModel(_RecordingModel):
    """Replies with the next step of a script, in order.

    Args:
        script: Replies in order. Each is a :class:`ChatResponse`, a ``str`` (a plain text
            answer) or a function of the :class:`Prompt` returning either (sync or async).
        supports_tools: When false, prompts offering tools raise
            :class:`~toolrelay.exceptions.ToolsNotSupportedError`.
        chunk_size: Characters per chunk when streaming.
        name: Shown in error messages.
        tool_channels: The tool search channels it declares, best first.
        cache_shortfall: The prompt cache rule it declares (``prompt -> tokens`` the prompt
            lacks before it is cached, as an adapter's ``cache_shortfall``); none: 0.

    Attributes:
        prompts: Every prompt received, in order.
        tool_definitions: For each prompt, the definitions of the tools it offered.

    Raises:
        ModelError: (from ``call``/``stream``) the script has no step left.
    """

    def __init__(
        self,
        script: Iterable[ScriptStep],
        *,
        supports_tools: bool = True,
        chunk_size: int = 4,
        name: str = "ScriptedModel",
        tool_channels: Sequence[ToolChannel] = DEFAULT_TOOL_CHANNELS,
        cache_shortfall: Callable[[Prompt], int] | None = None,
    ) -> None:
        super().__init__(
            supports_tools=supports_tools,
            chunk_size=chunk_size,
            name=name,
            tool_channels=tool_channels,
            cache_shortfall=cache_shortfall,
        )
        self._script = list(script)
        self._position = 0

    @property
    def remaining(self) -> int:
        """How many script steps have not been used yet."""
        return len(self._script) - self._position

    def _reply(self, prompt: Prompt) -> ModelReply | Awaitable[ModelReply]:
        if self._position >= len(self._script):
            raise ModelError(
                f"{self.name} ran out of script: request #{self._position + 1} arrived after "
                f"all {len(self._script)} step(s) were used"
            )
        step = self._script[self._position]
        self._position += 1
        if isinstance(step, ChatResponse | str):
            return step
        return step(prompt)


class FunctionModel(_RecordingModel):
    """Replies with whatever ``function(prompt)`` returns (a response or text, sync or async).

    Args:
        function: Decides each reply from the prompt.
        supports_tools: When false, prompts offering tools raise
            :class:`~toolrelay.exceptions.ToolsNotSupportedError`.
        chunk_size: Characters per chunk when streaming.
        name: Shown in error messages.
        tool_channels: The tool search channels it declares, best first.
        cache_shortfall: The prompt cache rule it declares (``prompt -> tokens`` the prompt
            lacks before it is cached, as an adapter's ``cache_shortfall``); none: 0.
    """

    def __init__(
        self,
        function: ResponseFunction,
        *,
        supports_tools: bool = True,
        chunk_size: int = 4,
        name: str = "FunctionModel",
        tool_channels: Sequence[ToolChannel] = DEFAULT_TOOL_CHANNELS,
        cache_shortfall: Callable[[Prompt], int] | None = None,
    ) -> None:
        super().__init__(
            supports_tools=supports_tools,
            chunk_size=chunk_size,
            name=name,
            tool_channels=tool_channels,
            cache_shortfall=cache_shortfall,
        )
        self._function = function

    def _reply(self, prompt: Prompt) -> ModelReply | Awaitable[ModelReply]:
        return self._function(prompt)
