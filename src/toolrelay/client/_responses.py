"""What a ``ChatClient`` request gives back: a called answer or a stream, and typed output.

``.entity(Model)`` validates the answer's text against a type with pydantic (a model class,
a dataclass, ``list[...]``, ...). A JSON answer wrapped in a Markdown code fence is accepted.
"""

from __future__ import annotations

import json
import re
from collections.abc import AsyncIterator, Callable
from typing import Any, TypeVar

import pydantic

from toolrelay.client._deferred_approval import ApprovalState, PendingApproval
from toolrelay.client._requests import ChatClientResponse
from toolrelay.client._streaming import StreamAggregator
from toolrelay.client._tool_loop import ToolLoopReport
from toolrelay.exceptions import ModelResponseError
from toolrelay.messages import ChatResponse
from toolrelay.toolsearch import ToolSearchReport

__all__ = ["CallResponse", "StreamResponse", "format_instructions", "parse_entity"]

T = TypeVar("T")

_FENCE = re.compile(r"^\s*```[a-zA-Z0-9_-]*\s*\n(?P<body>.*?)\n?\s*```\s*$", re.DOTALL)


def format_instructions(type_: Any) -> str:
    """The instructions that ask a model to answer with JSON matching ``type_``'s schema."""
    schema = pydantic.TypeAdapter(type_).json_schema()
    return (
        "Your response must be a JSON value that conforms to the JSON Schema below. "
        "Answer with the JSON only: no explanations and no Markdown code fences.\n"
        f"JSON Schema:\n{json.dumps(schema, ensure_ascii=False)}"
    )


def parse_entity(text: str | None, type_: type[T]) -> T:
    """Validate ``text`` (JSON, optionally in a code fence) as an instance of ``type_``.

    Raises:
        ModelResponseError: There is no text, or it is not valid JSON for ``type_``; the
            message lists every problem with its location.
    """
    name = getattr(type_, "__name__", repr(type_))
    if text is None or not text.strip():
        raise ModelResponseError(f"the model gave no text to read as {name}")
    fenced = _FENCE.match(text)
    body = fenced.group("body") if fenced else text
    try:
        return pydantic.TypeAdapter(type_).validate_json(body)
    except pydantic.ValidationError as exc:
        problems = []
        for error in exc.errors(include_url=False):
            location = ".".join(str(part) for part in error["loc"])
            problems.append(f"- {location}: {error['msg']}" if location else f"- {error['msg']}")
        listing = "\n".join(problems)
        raise ModelResponseError(
            f"the model's answer is not a valid {name} ({len(problems)} problem(s)):\n{listing}"
        ) from exc


class CallResponse:
    """The answer of a called request.

    Attributes:
        chat_client_response: The response as it left the advisor chain.
    """

    def __init__(self, chat_client_response: ChatClientResponse) -> None:
        self.chat_client_response = chat_client_response

    def chat_response(self) -> ChatResponse:
        """The model's answer (usage summed over the tool loop's rounds)."""
        return self.chat_client_response.chat_response

    def content(self) -> str | None:
        """The answer's text (of the first generation), or ``None``."""
        return self.chat_client_response.chat_response.text

    def entity(self, type_: type[T]) -> T:
        """The answer's text validated as ``type_`` (see :func:`parse_entity`).

        Raises:
            ModelResponseError: The text is missing or does not validate.
        """
        return parse_entity(self.content(), type_)

    @property
    def context(self) -> Any:
        """The response context (advisor parameters and what advisors added)."""
        return self.chat_client_response.context

    @property
    def tool_loop(self) -> ToolLoopReport | None:
        """What the tool loop did (history, rounds, usage), or ``None`` when none ran."""
        return self.chat_client_response.tool_loop

    @property
    def tool_search(self) -> ToolSearchReport | None:
        """What tool search did (searches, tools shown per call), or ``None`` without it."""
        return self.chat_client_response.tool_search

    @property
    def approval(self) -> ApprovalState | None:
        """When the turn stopped for approval, what resuming it needs; else ``None``."""
        return self.chat_client_response.approval

    @property
    def pending_approvals(self) -> tuple[PendingApproval, ...]:
        """The calls waiting for a person's decision (empty unless the turn stopped for it)."""
        state = self.approval
        return state.pending if state is not None else ()

    def __repr__(self) -> str:
        return f"CallResponse({self.content()!r})"


class StreamResponse:
    """A streamed request; each method starts the request and consumes its stream once.

    Example:
        >>> async for text in client.prompt("Hi").stream().content():  # doctest: +SKIP
        ...     print(text, end="")
    """

    def __init__(self, start: Callable[[], AsyncIterator[ChatClientResponse]]) -> None:
        self._start = start

    def chat_client_responses(self) -> AsyncIterator[ChatClientResponse]:
        """The chunks as they leave the advisor chain."""
        return self._start()

    async def chat_responses(self) -> AsyncIterator[ChatResponse]:
        """The chunks as model responses (text deltas; usage on the last chunk)."""
        async for chunk in self._start():
            yield chunk.chat_response

    async def content(self) -> AsyncIterator[str]:
        """The answer's text, piece by piece as it arrives (empty pieces skipped)."""
        async for chunk in self._start():
            text = chunk.chat_response.text
            if text:
                yield text

    async def collect(self) -> CallResponse:
        """Consume the whole stream and return the complete answer, as a call would."""
        aggregator = StreamAggregator()
        async for chunk in self._start():
            aggregator.add(chunk)
        return CallResponse(aggregator.response())
