"""``OpenAIResponsesModel``: OpenAI's Responses API (``client.responses.create``).

Needs the ``openai`` extra (``pip install -e '.[openai]'``). Servers that speak the
Responses API (vLLM, Ollama, LM Studio...) are reached with their ``base_url``.

Example::

    model = OpenAIResponsesModel("gpt-5")                         # OPENAI_API_KEY
    client = ChatClient.builder(model).default_tools(get_weather).build()

The wire format is documented with its translation (``_responses_wire.py``); tool choice and
the parallel-calls switch with theirs (``_tool_choice.py``).

Tool search's channels: ``"native"`` (a :class:`~toolrelay.messages.ToolChangeMessage` as an
``additional_tools`` input item, the request's ``tools`` never changing), then ``"proxy"`` and
``"rewrite"``. Errors of the SDK, and error
events of a stream, become :class:`~toolrelay.exceptions.ModelAPIError` (and subclasses) or
:class:`~toolrelay.exceptions.ModelConnectionError` after the SDK's own retries.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from toolrelay._storable import valid_unicode_data
from toolrelay.exceptions import ModelResponseError
from toolrelay.messages import ChatResponse
from toolrelay.models._base import DEFAULT_TOOL_CHANNELS, ToolChannel
from toolrelay.models._billing import (
    OPENAI_CACHE_MINIMUM,
    cache_shortfall,
    request_blocks,
    responses_body,
)
from toolrelay.models._openai import _OPENAI_HOST, openai_client
from toolrelay.models._openai_wire import DEFAULT_ERROR_PREFIX, WireTools
from toolrelay.models._responses_wire import (
    ResponsesStreamParser,
    messages_to_input,
    response_to_chat,
    tool_choice_to_responses,
    tools_to_responses,
)
from toolrelay.models._sdk_model import SdkChatModel, import_sdk
from toolrelay.models._tool_changes import available_definitions
from toolrelay.models._tool_names import ToolNameMap
from toolrelay.prompt import Prompt

__all__ = ["OpenAIResponsesModel"]


class OpenAIResponsesModel(SdkChatModel[WireTools]):
    """A chat model behind the OpenAI Responses API.

    Each request carries the whole conversation (system text, messages, tool calls and their
    outputs as input items), as with every other adapter; no state is kept at OpenAI between
    requests (see ``store``).

    Args:
        model: The model name (``ChatOptions.model`` overrides it per request).
        api_key: The API key; defaults to ``OPENAI_API_KEY``. With a custom ``base_url`` and
            no key, :data:`~toolrelay.models._sdk_model.LOCAL_API_KEY` is sent.
        base_url: The API's base URL; defaults to ``OPENAI_BASE_URL``, then OpenAI's.
        organization: OpenAI organization id (defaults to ``OPENAI_ORG_ID``).
        client: A ready ``openai.AsyncOpenAI``; the connection arguments above are then
            ignored.
        http_client: An ``httpx`` async client for the SDK (proxies, tests).
        max_retries: Retries of the SDK for connection errors, 408, 409, 429 and 5xx.
        timeout: Seconds per request (the SDK's default when ``None``).
        strict_tools: Send tools in strict mode (OpenAI's strict subset of JSON Schema);
            ``False`` sends ``"strict": false``, since the API's default is strict.
        tool_choice: Default tool choice (``"auto"``, ``"required"``, ``"none"``, a tool name
            or the API's own mapping); a request's ``extras["tool_choice"]`` wins.
        parallel_tool_calls: Default of the parallel-calls switch; ``None`` leaves the API's
            default.
        error_prefix: Put before a failed tool call's output, which the API cannot flag.
        store: Whether OpenAI stores each response (``store`` of the request).
        supports_tools: Whether the served model takes tools.
        name: Shown in error messages (default ``"openai:<model>"``; tracing reads the
            provider from the part before the colon).

    ``ChatOptions.max_tokens`` is sent as ``max_output_tokens``; ``ChatOptions.extras`` other
    than the tool-choice keys are merged into the request body as they are (``reasoning``,
    ``top_p``, ``text``, ``include``...).

    Raises:
        ConfigurationError: The ``openai`` package is missing, or no API key is configured
            for OpenAI's own API.
    """

    provider = "openai"
    sdk_error = "OpenAIError"

    def __init__(
        self,
        model: str,
        *,
        api_key: str | None = None,
        base_url: str | None = None,
        organization: str | None = None,
        client: Any = None,
        http_client: Any = None,
        max_retries: int = 2,
        timeout: float | None = None,
        strict_tools: bool = False,
        tool_choice: str | Mapping[str, Any] | None = None,
        parallel_tool_calls: bool | None = None,
        error_prefix: str = DEFAULT_ERROR_PREFIX,
        store: bool = False,
        supports_tools: bool = True,
        name: str | None = None,
    ) -> None:
        self._sdk = import_sdk("openai", extra="openai")
        self.model = model
        self.strict_tools = strict_tools
        self.tool_choice = tool_choice
        self.parallel_tool_calls = parallel_tool_calls
        self.error_prefix = error_prefix
        self.store = store
        self.supports_tools = supports_tools
        self.name = name or f"openai:{model}"
        if client is None:
            client = openai_client(
                self._sdk,
                api_key=api_key,
                base_url=base_url,
                organization=organization,
                http_client=http_client,
                max_retries=max_retries,
                timeout=timeout,
            )
        self._client = client

    def __repr__(self) -> str:
        return f"OpenAIResponsesModel(model={self.model!r}, base_url={self.base_url!r})"

    @property
    def base_url(self) -> str:
        """The base URL requests go to."""
        return str(getattr(self._client, "base_url", ""))

    def cache_shortfall(self, prompt: Prompt) -> int:
        """Tokens ``prompt`` lacks before OpenAI's prompt cache keeps it (0: it does, or cannot).

        As ``OpenAIChatModel.cache_shortfall``: 1,024 less the prompt on OpenAI's API, 0 on
        any other server.
        """
        if _OPENAI_HOST not in self.base_url:
            return 0
        blocks = request_blocks("responses", responses_body(prompt))
        return cache_shortfall(blocks, minimum=OPENAI_CACHE_MINIMUM, breakpoints=False)

    def tool_channels(self, model: str | None = None) -> tuple[ToolChannel, ...]:
        """The tool search channels, best first: ``"native"``, ``"proxy"``, ``"rewrite"``.

        Every model behind the Responses API takes ``additional_tools`` items, so ``model``
        (the request's model name) changes nothing.
        """
        return ("native", *DEFAULT_TOOL_CHANNELS)

    def _request(self, prompt: Prompt, *, stream: bool) -> tuple[dict[str, Any], WireTools]:
        options = prompt.options
        settings, names = self._tool_settings(options)
        added = available_definitions(prompt.messages)
        strict = self.strict_tools and bool(names.definitions or added)
        # Calls of tools a tool change added are read back like calls of the request's own.
        everything = ToolNameMap((*names.definitions, *added)) if added else names
        tools = WireTools(names=everything, strict=strict)
        body: dict[str, Any] = {
            "model": options.model or self.model,
            "input": messages_to_input(
                prompt.messages, error_prefix=self.error_prefix, strict=strict
            ),
            # Stateless by default: every request sends the whole history (toolrelay's memory
            # keeps the conversation), so no later request would read a stored response, and
            # storing would only keep each conversation at OpenAI (30 days by default).
            "store": self.store,
        }
        if options.temperature is not None:
            body["temperature"] = options.temperature
        if options.max_tokens is not None:
            body["max_output_tokens"] = options.max_tokens
        # As in Chat Completions, tool_choice and parallel_tool_calls go only with tools.
        if names.definitions:
            body["tools"] = tools_to_responses(names.definitions, strict=strict)
            choice = tool_choice_to_responses(settings)
            if choice is not None:
                body["tool_choice"] = choice
            if settings.parallel is not None:
                body["parallel_tool_calls"] = settings.parallel
        if stream:
            body["stream"] = True
        if settings.extras:
            body["extra_body"] = dict(settings.extras)
        # A lone surrogate (half an emoji a model escaped) cannot be sent as UTF-8.
        wire: dict[str, Any] = valid_unicode_data(body)
        return wire, tools

    async def _send(self, body: dict[str, Any]) -> Any:
        return await self._client.responses.create(**body)

    def _response(self, data: Mapping[str, Any], wire: WireTools) -> ChatResponse:
        if not isinstance(data.get("output"), list):
            raise ModelResponseError(f"{self.name} answered without any output")
        return response_to_chat(data, wire)

    def _parser(self, wire: WireTools) -> ResponsesStreamParser:
        return ResponsesStreamParser(wire)
