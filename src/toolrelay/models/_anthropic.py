"""``AnthropicChatModel``: Anthropic's Messages API.

Needs the ``anthropic`` extra (``pip install -e '.[anthropic]'``).

Example::

    model = AnthropicChatModel("claude-sonnet-4-5", cache_prompt=True)  # ANTHROPIC_API_KEY
    client = ChatClient.builder(model).default_tools(RefundTools()).build()

The wire format (``tool_use`` / ``tool_result`` blocks, ``is_error``, prompt caching, cache
token metadata, tool changes) is documented with its translation (``_anthropic_wire.py``); tool
choice and the parallel-calls switch with theirs (``_tool_choice.py``).

Tool search's channels: the models of :data:`TOOL_CHANGE_MODELS` accept mid-conversation tool
changes, so they render ``"native"`` (a :class:`~toolrelay.messages.ToolChangeMessage` as a
system message of ``tool_addition`` / ``tool_removal`` blocks, the request's ``tools`` never
changing) besides ``"proxy"`` and ``"rewrite"``; the others render ``"proxy"`` and
``"rewrite"`` and leave tool changes out. Errors of the SDK become
:class:`~toolrelay.exceptions.ModelAPIError` (and subclasses) or
:class:`~toolrelay.exceptions.ModelConnectionError` after the SDK's own retries.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from typing import Any

from toolrelay._storable import valid_unicode_data
from toolrelay.messages import ChatResponse
from toolrelay.models._anthropic_wire import (
    TOOL_CHANGE_MODELS,
    AnthropicStreamParser,
    accepts_tool_changes,
    content_body,
    message_to_response,
    tool_choice_to_anthropic,
)
from toolrelay.models._base import DEFAULT_TOOL_CHANNELS, ToolChannel
from toolrelay.models._billing import (
    ANTHROPIC_TOOL_USE_PROMPT,
    anthropic_cache_minimum,
    cache_shortfall,
    request_blocks,
)
from toolrelay.models._sdk_model import LOCAL_API_KEY, SdkChatModel, connect, import_sdk
from toolrelay.models._tool_names import ToolNameMap
from toolrelay.prompt import Prompt

__all__ = [
    "DEFAULT_MAX_TOKENS",
    "LOCAL_API_KEY",
    "TOOL_CHANGE_MODELS",
    "AnthropicChatModel",
    "accepts_tool_changes",
]


DEFAULT_MAX_TOKENS = 4096
"""``max_tokens`` of a request whose options set none (the API requires a value)."""

_ANTHROPIC_HOST = "api.anthropic.com"


class AnthropicChatModel(SdkChatModel[ToolNameMap]):
    """A Claude model behind the Anthropic Messages API.

    Args:
        model: The model name (``ChatOptions.model`` overrides it per request).
        api_key: The API key; defaults to ``ANTHROPIC_API_KEY`` (or the SDK's
            ``ANTHROPIC_AUTH_TOKEN``). With a custom ``base_url`` and no key,
            :data:`LOCAL_API_KEY` is sent.
        base_url: The API's base URL; defaults to ``ANTHROPIC_BASE_URL``, then Anthropic's.
        client: A ready ``anthropic.AsyncAnthropic``; the connection arguments are then
            ignored.
        http_client: An ``httpx`` async client for the SDK (proxies, tests).
        max_retries: Retries of the SDK for connection errors, 408, 409, 429 and 5xx.
        timeout: Seconds per request (the SDK's default when ``None``).
        max_tokens: ``max_tokens`` when the request's options set none.
        cache_prompt: Mark the tools and the system text as a cached prefix (two
            breakpoints), shared by every conversation with the same tools and system text.
        cache_history: Keep rolling breakpoints on the newest turns (the last message, and
            the user turn before the last assistant turn), so each call of a tool loop, and
            each turn of a conversation, reads the previous call's prefix from the cache.
            With ``cache_prompt``, the request holds the API's limit of four breakpoints.
        tool_choice: Default tool choice (``"auto"``, ``"required"``, ``"none"``, a tool name
            or the API's own mapping); a request's ``extras["tool_choice"]`` wins.
        parallel_tool_calls: ``False`` sets ``disable_parallel_tool_use``.
        supports_tools: Whether the model takes tools.
        name: Shown in error messages (default ``"anthropic:<model>"``).

    ``ChatOptions.extras`` other than the tool-choice keys are merged into the request body
    as they are (``top_k``, ``stop_sequences``, ``thinking``, ``metadata``...).

    Raises:
        ConfigurationError: The ``anthropic`` package is missing, or no credentials are
            configured for Anthropic's own API.
    """

    provider = "anthropic"
    sdk_error = "AnthropicError"

    def __init__(
        self,
        model: str,
        *,
        api_key: str | None = None,
        base_url: str | None = None,
        client: Any = None,
        http_client: Any = None,
        max_retries: int = 2,
        timeout: float | None = None,
        max_tokens: int = DEFAULT_MAX_TOKENS,
        cache_prompt: bool = False,
        cache_history: bool = True,
        tool_choice: str | Mapping[str, Any] | None = None,
        parallel_tool_calls: bool | None = None,
        supports_tools: bool = True,
        name: str | None = None,
    ) -> None:
        self._sdk = import_sdk("anthropic", extra="anthropic")
        self.model = model
        self.max_tokens = max_tokens
        self.cache_prompt = cache_prompt
        self.cache_history = cache_history
        self.tool_choice = tool_choice
        self.parallel_tool_calls = parallel_tool_calls
        self.supports_tools = supports_tools
        self.name = name or f"anthropic:{model}"
        if client is None:
            client = connect(
                self._sdk.AsyncAnthropic,
                self._sdk.AnthropicError,
                label="Anthropic",
                host=_ANTHROPIC_HOST,
                api_key=api_key,
                base_url=base_url,
                timeout=timeout,
                keyless=bool(os.environ.get("ANTHROPIC_AUTH_TOKEN")),
                max_retries=max_retries,
                http_client=http_client,
            )
        self._client = client

    def __repr__(self) -> str:
        return f"AnthropicChatModel(model={self.model!r})"

    def tool_channels(self, model: str | None = None) -> tuple[ToolChannel, ...]:
        """The tool search channels requests to ``model`` render, best first.

        ``"native"`` first for the models of :data:`TOOL_CHANGE_MODELS`, then ``"proxy"``
        and ``"rewrite"``. ``model`` is the request's model name; ``None``, this adapter's.
        """
        if accepts_tool_changes(model or self.model):
            return ("native", *DEFAULT_TOOL_CHANNELS)
        return DEFAULT_TOOL_CHANNELS

    def cache_shortfall(self, prompt: Prompt) -> int:
        """Tokens ``prompt`` lacks before the prompt cache keeps it (0: it does, or cannot).

        The request's model's minimum (:data:`~toolrelay.models._billing.ANTHROPIC_CACHE_MINIMUMS`;
        0 for a model not listed there) less the prompt up to its last breakpoint, the
        provider's tool-use prompt included, counted with cl100k_base; 0 when neither
        ``cache_prompt`` nor ``cache_history`` marks one. Tool search reveals further hits
        before the first model call while it is above 0
        (``ToolSearchAdvisor(fill_cache_minimum=True)``, the default).
        """
        model = prompt.options.model or self.model
        body = content_body(
            prompt.messages,
            ToolNameMap.of_tools(prompt.options.tools).definitions,
            tool_changes=accepts_tool_changes(model),
            cache_prompt=self.cache_prompt,
            cache_history=self.cache_history,
        )
        blocks = request_blocks("anthropic", body, tool_use_prompt=ANTHROPIC_TOOL_USE_PROMPT)
        return cache_shortfall(blocks, minimum=anthropic_cache_minimum(model), breakpoints=True)

    def _request(self, prompt: Prompt, *, stream: bool) -> tuple[dict[str, Any], ToolNameMap]:
        options = prompt.options
        settings, names = self._tool_settings(options)
        model = options.model or self.model
        body: dict[str, Any] = {
            "model": model,
            "max_tokens": options.max_tokens or self.max_tokens,
            **content_body(
                prompt.messages,
                names.definitions,
                tool_changes=accepts_tool_changes(model),
                cache_prompt=self.cache_prompt,
                cache_history=self.cache_history,
            ),
        }
        extra = dict(settings.extras)
        if options.temperature is not None:
            # A body field rather than an argument: recent SDKs dropped the parameter, while
            # the API (and compatible servers) still read it for the models that support it.
            extra.setdefault("temperature", options.temperature)
        if names.definitions:
            choice = tool_choice_to_anthropic(settings)
            if choice is not None:
                body["tool_choice"] = choice
        if stream:
            body["stream"] = True
        if extra:
            body["extra_body"] = extra
        # A lone surrogate (half an emoji a model escaped) cannot be sent as UTF-8.
        wire: dict[str, Any] = valid_unicode_data(body)
        return wire, names

    async def _send(self, body: dict[str, Any]) -> Any:
        if "betas" in body:  # tool changes: only the beta endpoint takes system messages
            return await self._client.beta.messages.create(**body)
        return await self._client.messages.create(**body)

    def _response(self, data: Mapping[str, Any], wire: ToolNameMap) -> ChatResponse:
        return message_to_response(data, wire)

    def _parser(self, wire: ToolNameMap) -> AnthropicStreamParser:
        return AnthropicStreamParser(wire)
