"""``OpenAIChatModel``: OpenAI's Chat Completions API, and every server that speaks it.

Needs the ``openai`` extra (``pip install -e '.[openai]'``). The same adapter talks to
vLLM, Ollama, llama.cpp's server, LM Studio and other OpenAI-compatible servers: give their
``base_url`` (or set ``OPENAI_BASE_URL``); an API key is then optional.

Example::

    model = OpenAIChatModel("gpt-4.1-mini")                       # OPENAI_API_KEY
    local = OpenAIChatModel("qwen2.5", base_url="http://localhost:11434/v1")
    client = ChatClient.builder(model).default_tools(get_weather).build()

The wire format is documented with its translation (``_openai_wire.py``); tool choice and the
parallel-calls switch with theirs (``_tool_choice.py``). Errors of the SDK become
:class:`~toolrelay.exceptions.ModelAPIError` (and subclasses) or
:class:`~toolrelay.exceptions.ModelConnectionError` after the SDK's own retries.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Literal

from toolrelay._storable import valid_unicode_data
from toolrelay.exceptions import ModelResponseError
from toolrelay.messages import ChatResponse
from toolrelay.models._billing import (
    OPENAI_CACHE_MINIMUM,
    cache_shortfall,
    openai_body,
    request_blocks,
)
from toolrelay.models._openai_wire import (
    DEFAULT_ERROR_PREFIX,
    OpenAIStreamParser,
    WireTools,
    completion_to_response,
    content_body,
    tool_choice_to_openai,
)
from toolrelay.models._sdk_model import LOCAL_API_KEY, SdkChatModel, connect, import_sdk
from toolrelay.prompt import Prompt

__all__ = ["LOCAL_API_KEY", "OpenAIChatModel", "openai_client"]

_OPENAI_HOST = "api.openai.com"


def openai_client(
    sdk: Any,
    *,
    api_key: str | None,
    base_url: str | None,
    organization: str | None,
    http_client: Any,
    max_retries: int,
    timeout: float | None,
) -> Any:
    """An ``openai.AsyncOpenAI`` for OpenAI's API or a compatible server (see ``connect``)."""
    return connect(
        sdk.AsyncOpenAI,
        sdk.OpenAIError,
        label="OpenAI",
        host=_OPENAI_HOST,
        api_key=api_key,
        base_url=base_url,
        timeout=timeout,
        organization=organization,
        max_retries=max_retries,
        http_client=http_client,
    )


MaxTokensParam = Literal["max_tokens", "max_completion_tokens"]


class OpenAIChatModel(SdkChatModel[WireTools]):
    """A chat model behind the OpenAI Chat Completions API.

    Args:
        model: The model name (``ChatOptions.model`` overrides it per request).
        api_key: The API key; defaults to ``OPENAI_API_KEY``. With a custom ``base_url`` and
            no key, :data:`LOCAL_API_KEY` is sent (local servers ignore it).
        base_url: The API's base URL; defaults to ``OPENAI_BASE_URL``, then OpenAI's.
        organization: OpenAI organization id (defaults to ``OPENAI_ORG_ID``).
        client: A ready ``openai.AsyncOpenAI``; the connection arguments above are then
            ignored.
        http_client: An ``httpx`` async client for the SDK (proxies, tests).
        max_retries: Retries of the SDK for connection errors, 408, 409, 429 and 5xx.
        timeout: Seconds per request (the SDK's default when ``None``).
        strict_tools: Send tools in strict mode (OpenAI's strict subset of JSON Schema).
        tool_choice: Default tool choice (``"auto"``, ``"required"``, ``"none"``, a tool name
            or the provider's own mapping); a request's ``extras["tool_choice"]`` wins.
        parallel_tool_calls: Default of the parallel-calls switch; ``None`` leaves the
            server's default.
        error_prefix: Put before a failed tool call's content, which OpenAI cannot flag.
        stream_usage: Ask for usage in streams (``stream_options.include_usage``).
        max_tokens_param: The body field of ``ChatOptions.max_tokens``. ``None`` picks
            ``max_completion_tokens`` for OpenAI's own API (its reasoning models reject
            ``max_tokens``) and ``max_tokens`` for other servers, which all understand it.
        supports_tools: Whether the served model takes tools.
        name: Shown in error messages (default ``"openai:<model>"``).

    ``ChatOptions.extras`` other than the tool-choice keys are merged into the request body
    as they are (``seed``, ``top_p``, ``response_format``, server-specific fields...).

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
        stream_usage: bool = True,
        max_tokens_param: MaxTokensParam | None = None,
        supports_tools: bool = True,
        name: str | None = None,
    ) -> None:
        self._sdk = import_sdk("openai", extra="openai")
        self.model = model
        self.strict_tools = strict_tools
        self.tool_choice = tool_choice
        self.parallel_tool_calls = parallel_tool_calls
        self.error_prefix = error_prefix
        self.stream_usage = stream_usage
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
        if max_tokens_param is None:
            own_api = _OPENAI_HOST in str(getattr(client, "base_url", _OPENAI_HOST))
            max_tokens_param = "max_completion_tokens" if own_api else "max_tokens"
        self.max_tokens_param: MaxTokensParam = max_tokens_param

    def __repr__(self) -> str:
        return f"OpenAIChatModel(model={self.model!r}, base_url={str(self.base_url)!r})"

    @property
    def base_url(self) -> str:
        """The base URL requests go to."""
        return str(getattr(self._client, "base_url", ""))

    def cache_shortfall(self, prompt: Prompt) -> int:
        """Tokens ``prompt`` lacks before OpenAI's prompt cache keeps it (0: it does, or cannot).

        1,024 (:data:`~toolrelay.models._billing.OPENAI_CACHE_MINIMUM`) less the prompt,
        counted with cl100k_base, on OpenAI's API; 0 on any other server (a prefix-caching
        server keeps any prefix). Tool search reveals further hits before the first model
        call while it is above 0 (``ToolSearchAdvisor(fill_cache_minimum=True)``, the default).
        """
        if _OPENAI_HOST not in self.base_url:
            return 0
        blocks = request_blocks("openai", openai_body(prompt))
        return cache_shortfall(blocks, minimum=OPENAI_CACHE_MINIMUM, breakpoints=False)

    # --- requests -------------------------------------------------------------------------

    def _request(self, prompt: Prompt, *, stream: bool) -> tuple[dict[str, Any], WireTools]:
        options = prompt.options
        settings, names = self._tool_settings(options)
        tools = WireTools(names=names, strict=self.strict_tools and bool(names.definitions))
        body: dict[str, Any] = {
            "model": options.model or self.model,
            **content_body(
                prompt.messages,
                names.definitions,
                strict=tools.strict,
                error_prefix=self.error_prefix,
            ),
        }
        if options.temperature is not None:
            body["temperature"] = options.temperature
        if options.max_tokens is not None:
            body[self.max_tokens_param] = options.max_tokens
        # OpenAI rejects tool_choice and parallel_tool_calls in a request without tools.
        if names.definitions:
            choice = tool_choice_to_openai(settings)
            if choice is not None:
                body["tool_choice"] = choice
            if settings.parallel is not None:
                body["parallel_tool_calls"] = settings.parallel
        if stream:
            body["stream"] = True
            if self.stream_usage:
                body["stream_options"] = {"include_usage": True}
        if settings.extras:
            body["extra_body"] = dict(settings.extras)
        # A lone surrogate (half an emoji a model escaped) cannot be sent as UTF-8.
        wire: dict[str, Any] = valid_unicode_data(body)
        return wire, tools

    async def _send(self, body: dict[str, Any]) -> Any:
        return await self._client.chat.completions.create(**body)

    def _response(self, data: Mapping[str, Any], wire: WireTools) -> ChatResponse:
        response = completion_to_response(data, wire)
        if not response.generations:
            raise ModelResponseError(f"{self.name} answered without any choice")
        return response

    def _parser(self, wire: WireTools) -> OpenAIStreamParser:
        return OpenAIStreamParser(wire)
