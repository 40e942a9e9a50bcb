"""What the adapters over a provider's SDK share (``openai``, ``anthropic``).

Importing the SDK (:func:`import_sdk`), connecting to the API (:func:`connect`) and, for the
chat models, :class:`SdkChatModel`: a request's tool-choice settings, sending, streaming and
the SDK's errors as toolrelay's. Each adapter builds its request body and reads the answer
with its wire module.
"""

from __future__ import annotations

import importlib
import os
from collections.abc import AsyncIterator, Callable, Mapping
from typing import Any, ClassVar, Generic, Protocol, TypeVar

from toolrelay.exceptions import ConfigurationError, ModelError
from toolrelay.messages import ChatResponse
from toolrelay.models._base import ensure_tools_supported, model_name
from toolrelay.models._provider_errors import translate_sdk_error
from toolrelay.models._sdk_data import as_dict
from toolrelay.models._tool_choice import ToolChoiceSettings, tool_choice_settings
from toolrelay.models._tool_names import ToolNameMap
from toolrelay.prompt import ChatOptions, Prompt

__all__ = ["LOCAL_API_KEY", "SdkChatModel", "StreamParser", "connect", "import_sdk"]

LOCAL_API_KEY = "not-needed"
"""Sent as the API key to a custom ``base_url`` when no key is configured."""

_Wire = TypeVar("_Wire")


def import_sdk(package: str, *, extra: str) -> Any:
    """The SDK module ``package``.

    Raises:
        ConfigurationError: It is not installed (naming the extra that installs it).
    """
    try:
        return importlib.import_module(package)
    except ImportError as exc:
        raise ConfigurationError(
            f"the {package} package is not installed; install the {extra} extra: "
            f"pip install -e '.[{extra}]'"
        ) from exc


def connect(
    client_class: Callable[..., Any],
    error: type[Exception],
    *,
    label: str,
    host: str,
    api_key: str | None,
    base_url: str | None,
    timeout: float | None = None,
    keyless: bool = False,
    **arguments: Any,
) -> Any:
    """A client of the SDK (``client_class``) for ``label``'s API, or a compatible server's.

    The key and the URL default to ``<LABEL>_API_KEY`` and ``<LABEL>_BASE_URL``. Without a
    key, a custom ``base_url`` (a compatible server or proxy that needs none) is sent
    :data:`LOCAL_API_KEY`; ``keyless``: the SDK has credentials of another kind. ``error`` is
    the SDK's root exception; ``timeout`` ``None`` keeps the SDK's.

    Raises:
        ConfigurationError: No key for the provider's own API (at ``host``), or the SDK
            refused the arguments.
    """
    variable = label.upper()
    base_url = base_url or os.environ.get(f"{variable}_BASE_URL") or None
    api_key = api_key or os.environ.get(f"{variable}_API_KEY") or None
    if api_key is None and not keyless:
        if base_url is None or host in base_url:
            raise ConfigurationError(
                f"no {label} API key: pass api_key=... or set {variable}_API_KEY (or give the "
                f"base_url of a {label}-compatible server that needs no key)"
            )
        api_key = LOCAL_API_KEY
    if timeout is not None:
        arguments["timeout"] = timeout
    try:
        return client_class(api_key=api_key, base_url=base_url, **arguments)
    except error as exc:
        raise ConfigurationError(f"cannot create the {label} client: {exc}") from exc


class StreamParser(Protocol):
    """Turns a provider's stream events (as JSON data) into toolrelay chunks."""

    def parse(self, event: Mapping[str, Any]) -> ChatResponse | None:
        """The chunk of one event, or ``None`` when it carries nothing."""
        ...

    def finish(self) -> ChatResponse | None:
        """The chunk held back to the end of the stream, if any."""
        ...


class SdkChatModel(Generic[_Wire]):
    """A chat model that sends through a provider's SDK (``call``, ``stream``, the client).

    A subclass sets :attr:`provider`, :attr:`sdk_error`, ``_sdk`` (the SDK module),
    ``_client``, ``name``, ``supports_tools``, ``tool_choice`` and ``parallel_tool_calls``,
    and gives the provider's parts: :meth:`_request` (the body, and what reading the answer
    needs), :meth:`_send`, :meth:`_response` and :meth:`_parser`.
    """

    provider: ClassVar[str]
    """The SDK's package, named in errors (``"openai"``, ``"anthropic"``)."""

    sdk_error: ClassVar[str]
    """The name of the SDK's root exception (``"OpenAIError"``)."""

    _sdk: Any
    _client: Any
    name: str
    supports_tools: bool
    tool_choice: str | Mapping[str, Any] | None
    parallel_tool_calls: bool | None

    @property
    def client(self) -> Any:
        """The underlying SDK client."""
        return self._client

    async def aclose(self) -> None:
        """Close the HTTP connections of the underlying client."""
        await self._client.close()

    async def call(self, prompt: Prompt) -> ChatResponse:
        """Send ``prompt`` and return the complete answer.

        Raises:
            ToolsNotSupportedError: Tools were offered and ``supports_tools`` is false.
            ModelAPIError: The server answered with an error (``AuthenticationError`` for
                401/403, ``RateLimitError`` for 429), after the SDK's retries.
            ModelConnectionError: The server could not be reached or timed out.
            ModelResponseError: The answer holds nothing to read (no choices).
        """
        ensure_tools_supported(self, prompt)
        body, wire = self._request(prompt, stream=False)
        try:
            answer = await self._send(body)
        except getattr(self._sdk, self.sdk_error) as exc:
            raise self._translate(exc) from exc
        return self._response(as_dict(answer), wire)

    async def stream(self, prompt: Prompt) -> AsyncIterator[ChatResponse]:
        """Send ``prompt`` and yield the answer in chunks (usage on the last one).

        Raises:
            Same as :meth:`call`, while iterating (an error event of the stream becomes a
            :class:`~toolrelay.exceptions.ModelAPIError`).
        """
        ensure_tools_supported(self, prompt)
        body, wire = self._request(prompt, stream=True)
        parser = self._parser(wire)
        try:
            sdk_stream = await self._send(body)
            try:
                async for event in sdk_stream:
                    chunk = parser.parse(as_dict(event))
                    if chunk is not None:
                        yield chunk
            finally:
                await sdk_stream.close()
        except getattr(self._sdk, self.sdk_error) as exc:
            raise self._translate(exc) from exc
        last = parser.finish()
        if last is not None:
            yield last

    def request_body(self, prompt: Prompt, *, stream: bool = False) -> dict[str, Any]:
        """The arguments this model passes to the SDK's ``create`` for ``prompt``.

        Built without contacting anything: the fields of the request's JSON body, and its
        ``ChatOptions.extras`` under ``extra_body``, which the SDK merges into the body. An
        Anthropic body holding tool changes names their beta in ``betas`` and goes to the
        SDK's ``beta.messages.create``.

        Raises:
            ConfigurationError: The tool choice names a tool the prompt does not offer, or
                asks for a call in a prompt without tools.
        """
        return self._request(prompt, stream=stream)[0]

    def _tool_settings(self, options: ChatOptions) -> tuple[ToolChoiceSettings, ToolNameMap]:
        """The request's tool choice (checked against its tools) and tools."""
        settings = tool_choice_settings(
            options.extras,
            default_choice=self.tool_choice,
            default_parallel=self.parallel_tool_calls,
        )
        names = ToolNameMap.of_tools(options.tools)
        settings.check(names, model=model_name(self))
        return settings, names

    def _translate(self, exc: Exception) -> ModelError:
        translated = translate_sdk_error(self.provider, self._sdk, exc)
        return translated or ModelError(f"{self.name} failed: {exc}")

    def _request(self, prompt: Prompt, *, stream: bool) -> tuple[dict[str, Any], _Wire]:
        raise NotImplementedError

    async def _send(self, body: dict[str, Any]) -> Any:
        raise NotImplementedError

    def _response(self, data: Mapping[str, Any], wire: _Wire) -> ChatResponse:
        raise NotImplementedError

    def _parser(self, wire: _Wire) -> StreamParser:
        raise NotImplementedError
