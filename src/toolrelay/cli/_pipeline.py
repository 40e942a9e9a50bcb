"""The pipeline behind ``toolrelay demo`` and ``toolrelay chat``, and what it records per round.

A :class:`~toolrelay.client.ChatClient` with a :class:`~toolrelay.client.ToolSearchAdvisor`
over the catalog (searching the given index; the execution layer runs the calls) and a
:class:`~toolrelay.client.MessageChatMemoryAdvisor` over an in-memory window. Three thin
wrappers watch it without changing what it does, so each round can be shown as it happens:

- :class:`MeteredModel` sees every request the model gets and counts its tokens twice: as
  sent (messages + the tools shown), and as it would be with every catalog tool instead;
- :class:`RecordingIndex` keeps each search's response, scores included;
- :class:`ObservedToolSearchAdvisor` reports each tool round's outcomes as it ends.

Nobody at the terminal approves calls: a call of a tool that requires approval (the demo
catalog's ``db.delete_row``, ``order.cancel``...) is denied by :func:`no_approver`, and the
model reads why (the refund triage itself calls none of them).

Requests are measured in the OpenAI Chat Completions wire format (``messages`` as the OpenAI
adapter writes them, ``tools`` as ``toolrelay eval tokens`` does) with cl100k_base. What a
request shows is read on any channel (``toolrelay.client._shown``): its tool list, the tools
its tool changes add (native; counted with the tools, which those changes are) and the
definitions search answers gave (proxy; counted with the messages, which hold them).
"""

from __future__ import annotations

import dataclasses
import json
import logging
import threading
from collections.abc import AsyncIterator, Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any, Protocol

from toolrelay.cli._indexes import IndexWrapper
from toolrelay.cli._output import progress
from toolrelay.client import (
    ChatClient,
    ChatClientRequest,
    ChatClientResponse,
    MessageChatMemoryAdvisor,
    ToolLoopState,
    ToolSearchAdvisor,
)
from toolrelay.client._shown import carried_definitions, shown_tools
from toolrelay.client._tool_search import Channel
from toolrelay.exceptions import InvalidJsonError
from toolrelay.execution import (
    ApprovalHandler,
    ApprovalInterceptor,
    Deny,
    ToolCallOutcome,
    ToolExecutionResult,
    ToolInvocation,
)
from toolrelay.memory import InMemoryChatMemoryRepository, MessageWindowChatMemory
from toolrelay.messages import ChatResponse, ToolCall, Usage
from toolrelay.models._base import (
    ChatModel,
    ToolChannel,
    cache_shortfall,
    model_name,
    tool_channels,
)
from toolrelay.models._chunks import ChunkMerger
from toolrelay.models._openai_wire import messages_to_openai
from toolrelay.prompt import Prompt
from toolrelay.search._base import SearchRequest, SearchResponse, ToolIndex
from toolrelay.search._usage import UsageLog
from toolrelay.tools import ToolCatalog
from toolrelay.tools._arguments import decode_arguments
from toolrelay.tools._base import ToolDefinition
from toolrelay.tools._tokens import count_tokens, tool_payload
from toolrelay.toolsearch import TOOL_SEARCH_NAME, SearchOptions
from toolrelay.toolsearch._texts import SearchLanguage

__all__ = [
    "MeteredModel",
    "ObservedToolSearchAdvisor",
    "Pipeline",
    "RecordingIndex",
    "RequestTokens",
    "RoundListener",
    "RoundRecord",
    "TurnRecorder",
    "build_pipeline",
    "no_approver",
    "quiet_library_logs",
    "search_queries",
    "tools_tokens",
]


def tools_tokens(definitions: Sequence[ToolDefinition]) -> int:
    """Tokens of the ``tools`` array of a request carrying these definitions (0 for none)."""
    if not definitions:
        return 0
    return count_tokens(json.dumps([tool_payload(d) for d in definitions], ensure_ascii=False))


@dataclass(frozen=True, kw_only=True)
class RequestTokens:
    """The cl100k_base tokens of one model request.

    Attributes:
        messages: The ``messages`` array.
        tools: The tool definitions as sent: the ``tools`` array, and the tools the
            history's tool changes add (the native channel).
        every_tool: The ``tools`` array had every catalog tool been sent instead.
    """

    messages: int
    tools: int
    every_tool: int

    @property
    def sent(self) -> int:
        return self.messages + self.tools

    @property
    def without_search(self) -> int:
        return self.messages + self.every_tool

    @property
    def saved(self) -> int:
        return self.every_tool - self.tools

    @property
    def saved_percent(self) -> float:
        return 100.0 * self.saved / self.without_search if self.without_search else 0.0

    @classmethod
    def total(cls, rounds: Sequence[RoundRecord]) -> RequestTokens:
        """The sums over the requests of ``rounds``."""
        return cls(
            messages=sum(r.tokens.messages for r in rounds),
            tools=sum(r.tokens.tools for r in rounds),
            every_tool=sum(r.tokens.every_tool for r in rounds),
        )


@dataclass(frozen=True, kw_only=True)
class RoundRecord:
    """One model call of a turn and the tool round that followed it.

    Attributes:
        model_call: The call's number in the turn, from 1.
        shown: Canonical names of the tools the request showed, in the order sent, on any
            channel (see the module docs).
        tokens: The request's size.
        text: The model's text, if any.
        calls: The tool calls it asked for.
        usage: The usage the model reported (zero for models that report none).
        outcomes: The outcome of each call, in call order (after the round ran).
        searches: The responses of each ``tool_search`` call, in call order: one per query.
        prompt: The request as the model got it (to bill it).
        response: The model's answer (to bill its output).
    """

    model_call: int
    shown: tuple[str, ...]
    tokens: RequestTokens
    text: str | None = None
    calls: tuple[ToolCall, ...] = ()
    usage: Usage = dataclasses.field(default_factory=Usage)
    outcomes: tuple[ToolCallOutcome, ...] = ()
    searches: tuple[tuple[SearchResponse | None, ...], ...] = ()
    prompt: Prompt | None = None
    response: ChatResponse | None = None


class RoundListener(Protocol):
    """Told about each round as it happens (the live view)."""

    def on_response(self, record: RoundRecord) -> None:
        """The model answered: text and the calls it asks for."""
        ...

    def on_results(self, record: RoundRecord) -> None:
        """The round's calls ran: outcomes and search responses are filled in."""
        ...


class TurnRecorder:
    """Collects the :class:`RoundRecord` s of the current turn and tells a listener.

    Args:
        every_tool: The definitions of every catalog tool (the comparison request's tools).
        listener: Told about each round; ``None`` for none.
    """

    def __init__(
        self, every_tool: Sequence[ToolDefinition], listener: RoundListener | None = None
    ) -> None:
        self.listener = listener
        self.rounds: list[RoundRecord] = []
        self._every_tool = tools_tokens(every_tool)

    def start_turn(self) -> None:
        self.rounds = []

    def request(self, prompt: Prompt) -> None:
        """A request is about to be sent to the model."""
        messages = json.dumps(messages_to_openai(prompt.messages), ensure_ascii=False)
        tokens = RequestTokens(
            messages=count_tokens(messages),
            tools=tools_tokens(carried_definitions(prompt)),
            every_tool=self._every_tool,
        )
        shown = shown_tools(prompt)
        self.rounds.append(
            RoundRecord(model_call=len(self.rounds) + 1, shown=shown, tokens=tokens, prompt=prompt)
        )

    def response(self, response: ChatResponse) -> None:
        """The model answered the latest request."""
        generation = response.result
        message = generation.message if generation is not None else None
        record = self._update(
            text=message.text if message is not None else None,
            calls=message.tool_calls if message is not None else (),
            usage=response.usage,
            response=response,
        )
        if self.listener is not None:
            self.listener.on_response(record)

    def results(
        self, outcomes: Sequence[ToolCallOutcome], searches: Sequence[SearchResponse]
    ) -> None:
        """The latest round's calls ran; ``searches`` are the index's answers, in any order."""
        pending = list(searches)
        matched: list[tuple[SearchResponse | None, ...]] = []
        for outcome in outcomes:
            if outcome.tool_name != TOOL_SEARCH_NAME:
                continue
            responses: list[SearchResponse | None] = []
            for query in search_queries(outcome.call):
                found = next((s for s in pending if s.query == query), None)
                if found is not None:
                    pending.remove(found)
                responses.append(found)
            matched.append(tuple(responses))
        record = self._update(outcomes=tuple(outcomes), searches=tuple(matched))
        if self.listener is not None:
            self.listener.on_results(record)

    def _update(self, **changes: Any) -> RoundRecord:
        self.rounds[-1] = dataclasses.replace(self.rounds[-1], **changes)
        return self.rounds[-1]


class MeteredModel:
    """A chat model that tells a :class:`TurnRecorder` about every request and answer.

    While the model works, a spinner shows on stderr (on a terminal only).
    """

    def __init__(self, model: ChatModel, recorder: TurnRecorder) -> None:
        self.model = model
        self.recorder = recorder
        self.supports_tools = model.supports_tools
        self.name = model_name(model).strip("'")

    def tool_channels(self, model: str | None = None) -> tuple[ToolChannel, ...]:
        """The wrapped model's tool search channels."""
        return tool_channels(self.model, model)

    def cache_shortfall(self, prompt: Prompt) -> int:
        """What ``prompt`` lacks before the wrapped model's provider caches it."""
        return cache_shortfall(self.model, prompt)

    async def call(self, prompt: Prompt) -> ChatResponse:
        self.recorder.request(prompt)
        with progress(f"Waiting for {self.name}"):
            response = await self.model.call(prompt)
        self.recorder.response(response)
        return response

    async def stream(self, prompt: Prompt) -> AsyncIterator[ChatResponse]:
        self.recorder.request(prompt)
        merger = ChunkMerger()
        async for chunk in self.model.stream(prompt):
            merger.add(chunk)
            yield chunk
        self.recorder.response(merger.response())


class RecordingIndex(IndexWrapper):
    """A :class:`~toolrelay.search.ToolIndex` that keeps every search's response."""

    def __init__(self, index: ToolIndex) -> None:
        super().__init__(index)
        self._responses: list[SearchResponse] = []
        self._lock = threading.Lock()  # searches run in worker threads

    def search(self, request: SearchRequest) -> SearchResponse:
        response = self.inner.search(request)
        with self._lock:
            self._responses.append(response)
        return response

    def take(self) -> list[SearchResponse]:
        """The responses kept since the last call, in the order the searches finished."""
        with self._lock:
            taken, self._responses = self._responses, []
        return taken


class ObservedToolSearchAdvisor(ToolSearchAdvisor):
    """The tool search advisor, telling a :class:`TurnRecorder` about each tool round."""

    def __init__(
        self,
        catalog: ToolCatalog,
        *,
        index: RecordingIndex,
        recorder: TurnRecorder,
        **options: Any,
    ) -> None:
        super().__init__(catalog, index=index, **options)
        self.recording = index
        self.recorder = recorder

    async def execute_tools(
        self, request: ChatClientRequest, response: ChatClientResponse, state: ToolLoopState
    ) -> ToolExecutionResult:
        result = await super().execute_tools(request, response, state)
        self.recorder.results(result.outcomes, self.recording.take())
        return result


async def no_approver(invocation: ToolInvocation, /) -> Deny:
    """Deny a call that needs approval: no person approves calls from the command line."""
    return Deny(
        f"The tool {invocation.tool_name!r} requires a person's approval before it runs, and "
        "nobody approves calls in this session, so it did not run. Do not call it again; "
        "tell the user it needs approval."
    )


@dataclass(frozen=True, kw_only=True)
class Pipeline:
    """A client over the observed pipeline, and the recorder of its latest turn."""

    client: ChatClient
    recorder: TurnRecorder


def build_pipeline(
    model: ChatModel,
    catalog: ToolCatalog,
    index: ToolIndex,
    *,
    system: str,
    max_results: int,
    tool_context: Mapping[str, Any],
    listener: RoundListener | None = None,
    language: SearchLanguage = "auto",
    usage_log: UsageLog | None = None,
    approval: ApprovalHandler | ApprovalInterceptor = no_approver,
    channel: Channel = "auto",
) -> Pipeline:
    """The client over ``model`` with tool search over ``catalog`` (indexed by ``index``).

    ``language`` is the tool search advisor's: the language of its texts; ``usage_log``
    its usage log (searches rank with it and record in it); ``approval`` decides about calls
    of tools that require approval (denied, by default: see :func:`no_approver`);
    ``channel`` how found tools reach the model (the best the model renders by default).

    Raises:
        ConfigurationError: ``channel`` is one the model does not render.
    """
    recorder = TurnRecorder(catalog.definitions(), listener)
    advisor = ObservedToolSearchAdvisor(
        catalog,
        index=RecordingIndex(index),
        recorder=recorder,
        options=SearchOptions(max_results=max_results, language=language, usage_log=usage_log),
        channel=channel,
    )
    # Refused now, naming the fix, rather than at the first turn.
    advisor.search.channel_for(model, owner="--channel")
    memory = MessageChatMemoryAdvisor(MessageWindowChatMemory(InMemoryChatMemoryRepository()))
    client = (
        ChatClient.builder(MeteredModel(model, recorder))
        .default_system(system)
        .default_advisors(memory, advisor)
        .default_tool_context(tool_context)
        .guards(approval=approval)
        .build()
    )
    return Pipeline(client=client, recorder=recorder)


@contextmanager
def quiet_library_logs() -> Iterator[None]:
    """Keep toolrelay's log records (a tool raised, say) off stderr while the block runs.

    The live view already shows every failed call with the feedback the model got; without
    a handler of its own, Python would print each warning with its traceback.
    """
    logger = logging.getLogger("toolrelay")
    handler = logging.NullHandler()
    logger.addHandler(handler)
    try:
        yield
    finally:
        logger.removeHandler(handler)


def search_queries(call: ToolCall) -> list[str]:
    """The queries of a ``tool_search`` call, as its arguments hold them (a lone one too)."""
    try:
        arguments = decode_arguments(call.name, call.arguments)
    except InvalidJsonError:
        return []
    queries = arguments.get("queries")
    queries = [queries] if isinstance(queries, str) else queries
    return [q for q in queries if isinstance(q, str)] if isinstance(queries, list) else []
