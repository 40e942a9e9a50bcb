"""A scripted HTTP server for the provider SDKs: queued replies in, recorded requests out.

The SDKs accept an injected HTTP client; one built on a mock transport answers every request
from a queue, so the tests see exactly what crossed the wire and decide exactly what comes
back (including error statuses the SDK retries).
"""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

import pytest

from tests.extras import needs_extra

try:  # the SDKs moved from httpx to httpx2; use whichever they are built on
    import httpx2 as httpx
except ImportError:  # pragma: no cover - older SDKs
    try:
        import httpx  # type: ignore[no-redef]
    except ImportError:
        pytest.skip(needs_extra("openai"), allow_module_level=True)  # its SDK brings httpx

Reply = httpx.Response | Callable[[httpx.Request], httpx.Response] | Exception

# The SDKs honour this header, so retries in tests do not sleep for the default backoff.
FAST_RETRY = {"retry-after-ms": "1"}


class MockServer:
    """Answers requests with ``replies`` in order; the last reply repeats when they run out."""

    def __init__(self, *replies: Reply) -> None:
        self.replies = list(replies)
        self.requests: list[httpx.Request] = []

    def handler(self, request: httpx.Request) -> httpx.Response:
        self.requests.append(request)
        index = min(len(self.requests), len(self.replies)) - 1
        reply = self.replies[index]
        if isinstance(reply, Exception):
            raise reply
        if isinstance(reply, httpx.Response):
            return reply
        return reply(request)

    def http_client(self) -> httpx.AsyncClient:
        return httpx.AsyncClient(transport=httpx.MockTransport(self.handler))

    def sync_http_client(self) -> httpx.Client:
        return httpx.Client(transport=httpx.MockTransport(self.handler))

    @property
    def attempts(self) -> int:
        return len(self.requests)

    @property
    def bodies(self) -> list[dict[str, Any]]:
        return [json.loads(r.content) for r in self.requests]

    @property
    def body(self) -> dict[str, Any]:
        return self.bodies[-1]


def json_reply(
    data: Any, status: int = 200, headers: dict[str, str] | None = None
) -> httpx.Response:
    return httpx.Response(status, json=data, headers=headers)


def error_reply(status: int, message: str = "boom", kind: str = "error") -> httpx.Response:
    body = {"error": {"message": message, "type": kind, "code": None}}
    return httpx.Response(status, json=body, headers=FAST_RETRY)


def openai_sse(*chunks: dict[str, Any] | str, done: bool = True) -> httpx.Response:
    """An OpenAI-style event stream: ``data: <json>`` lines, then ``data: [DONE]``."""
    lines = [f"data: {c if isinstance(c, str) else json.dumps(c)}\n\n" for c in chunks]
    if done:
        lines.append("data: [DONE]\n\n")
    return httpx.Response(
        200, headers={"content-type": "text/event-stream"}, content="".join(lines).encode()
    )


def anthropic_sse(*events: dict[str, Any]) -> httpx.Response:
    """An Anthropic-style event stream: ``event: <type>`` and ``data: <json>`` per event."""
    text = "".join(f"event: {e['type']}\ndata: {json.dumps(e)}\n\n" for e in events)
    return httpx.Response(200, headers={"content-type": "text/event-stream"}, content=text.encode())


def responses_sse(*events: dict[str, Any]) -> httpx.Response:
    """An OpenAI Responses event stream, framed as Anthropic's (``event:`` and ``data:``)."""
    return anthropic_sse(*events)
