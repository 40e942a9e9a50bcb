"""Translating a provider SDK's errors into toolrelay's exception tree.

The ``openai`` and ``anthropic`` SDKs share one error layout: ``APIStatusError`` (with
``status_code``) for error answers, ``APIConnectionError`` (and its ``APITimeoutError``) when
no answer came, ``APIError`` for an error reported inside a stream. :func:`translate_sdk_error`
maps them, by that layout, onto :class:`~toolrelay.exceptions.ModelAPIError` and its
subclasses and :class:`~toolrelay.exceptions.ModelConnectionError` (naming the URL that could
not be reached); adapters raise the result
``from`` the SDK's exception so the original stays reachable as ``__cause__``.

The SDKs retry connection errors, 408, 409, 429 and 5xx answers themselves (``max_retries``
on the adapter); what reaches the translation has already used up those retries.
"""

from __future__ import annotations

from types import ModuleType

from toolrelay.exceptions import (
    AuthenticationError,
    ModelAPIError,
    ModelConnectionError,
    ModelError,
    RateLimitError,
)

__all__ = ["status_error", "translate_sdk_error"]


def status_error(provider: str, status_code: int | None, message: str) -> ModelAPIError:
    """The :class:`ModelAPIError` subclass for an error answer with ``status_code``."""
    text = f"{provider} request failed"
    if status_code is not None:
        text += f" with HTTP {status_code}"
    text += f": {message}" if message else ""
    if status_code in (401, 403):
        return AuthenticationError(provider, status_code, text)
    if status_code == 429:
        return RateLimitError(provider, status_code, text)
    return ModelAPIError(provider, status_code, text)


def translate_sdk_error(provider: str, sdk: ModuleType, exc: Exception) -> ModelError | None:
    """The toolrelay error for an exception raised by ``sdk``, or ``None`` if it is not one.

    Args:
        provider: Named in the error (``"openai"``, ``"anthropic"``).
        sdk: The SDK module (``openai`` or ``anthropic``), whose error classes are matched.
        exc: The exception the SDK raised.
    """
    status_type = getattr(sdk, "APIStatusError", None)
    connection_type = getattr(sdk, "APIConnectionError", None)
    api_type = getattr(sdk, "APIError", None)
    message = str(getattr(exc, "message", "") or exc)
    if status_type is not None and isinstance(exc, status_type):
        return status_error(provider, getattr(exc, "status_code", None), message)
    if connection_type is not None and isinstance(exc, connection_type):
        timeout_type = getattr(sdk, "APITimeoutError", None)
        what = "timed out" if timeout_type and isinstance(exc, timeout_type) else "failed"
        url = getattr(getattr(exc, "request", None), "url", None)
        where = f"{provider} at {url}" if url is not None else provider
        return ModelConnectionError(provider, f"connection to {where} {what}: {message}")
    if api_type is not None and isinstance(exc, api_type):
        return status_error(provider, None, message)
    return None
