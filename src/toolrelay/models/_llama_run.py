"""Generation steps on a llama.cpp model, streamed token by token, with usage summed.

One request to :class:`~toolrelay.models.LlamaCppChatModel` runs one or two
constrained steps on the same prompt; :class:`GenerationRun` runs them, passes text on as it
is generated, and builds the response with the usage of all steps.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Mapping
from typing import Any

from toolrelay.exceptions import ModelError
from toolrelay.messages import AssistantMessage, ChatResponse, Generation, ToolCall, Usage

__all__ = ["GenerationRun", "TextSink"]

TextSink = Callable[[str], None]
"""Receives text deltas as they are generated."""


class GenerationRun:
    """The generation steps of one request, with their usage summed.

    Args:
        llm: The ``llama_cpp.Llama``.
        sampling: Keyword arguments for ``create_completion`` (temperature, ...).
        cancelled: Set when the consumer of a stream went away; generation stops.
    """

    def __init__(self, *, llm: Any, sampling: Mapping[str, Any], cancelled: threading.Event | None):
        self.llm = llm
        self.sampling = sampling
        self.cancelled = cancelled
        self.prompt_tokens = 0
        self.completion_tokens = 0
        self.steps = 0
        self.streamed = False

    def complete(
        self,
        tokens: list[int],
        grammar: Any,
        max_tokens: int,
        on_text: TextSink | None,
        *,
        hold_calls: bool = False,
    ) -> tuple[str, str | None]:
        """Generate from ``tokens``; returns the text and llama.cpp's finish reason.

        Text goes to ``on_text`` as it comes, unless ``hold_calls`` and it opens a call
        (starts with ``{``, which the choice grammar keeps answers from doing).
        """
        if self.steps == 0:
            self.prompt_tokens += len(tokens)
        self.steps += 1
        parts: list[str] = []
        finish: str | None = None
        try:
            chunks = self.llm.create_completion(
                prompt=tokens, grammar=grammar, max_tokens=max_tokens, stream=True, **self.sampling
            )
            for chunk in chunks:
                choice = chunk["choices"][0]
                delta = choice.get("text") or ""
                if delta:
                    self.completion_tokens += 1
                    parts.append(delta)
                    if on_text is not None and not (hold_calls and parts[0].startswith("{")):
                        on_text(delta)
                        self.streamed = True
                finish = choice.get("finish_reason") or finish
                if self.cancelled is not None and self.cancelled.is_set():
                    chunks.close()
                    break
        except ValueError as exc:  # e.g. "Requested tokens exceed context window"
            raise ModelError(f"llama.cpp could not generate: {exc}") from exc
        return "".join(parts), finish

    def response(
        self, text: str | None, finish_reason: str | None, call: ToolCall | None = None
    ) -> ChatResponse:
        """The answer: ``text`` or ``call``, with the usage of every step so far."""
        usage = Usage(
            prompt_tokens=self.prompt_tokens,
            completion_tokens=self.completion_tokens,
            total_tokens=self.prompt_tokens + self.completion_tokens,
        )
        message = AssistantMessage(text=text, tool_calls=(call,) if call else ())
        return ChatResponse(
            generations=(Generation(message=message, finish_reason=finish_reason),),
            usage=usage,
            metadata={"decode_steps": self.steps},
        )
