"""``ToolCallingAdvisor``: the do-while tool loop, as an advisor.

The loop takes its tools from a :class:`~toolrelay.client.ToolProvider` (the request's own
by default; :class:`~toolrelay.client.ToolSearchAdvisor` is this loop with the searching
provider), which it asks before each model call and after each round. Each round: build the
request, ``before_call``, let the provider set the tools the model is shown, call the advisors
after this one and the model (``chain.copy(excluding=self)``), ``after_call``, add the round's
usage, ask the eligibility checker whether the answer asks for tools, run them with the
:class:`~toolrelay.execution.ToolCallingManager` over what the provider offers the round, and
either stop or let ``next_instructions`` build the next round's messages. ``init_loop`` and
``finalize_loop`` open and close a turn.

The loop stops when:

- the answer has no eligible tool calls: it is the final answer;
- every tool of a round is return-direct: the tool results are the answer (finish reason
  ``"returnDirect"``), the model is not asked again;
- the manager raises :class:`~toolrelay.exceptions.ToolCallLimitError` (limits with
  ``on_breach="raise"``): one generation with finish reason ``"toolCallLimitExceeded"``;
- calls wait for a person's approval (an
  :class:`~toolrelay.execution.ApprovalInterceptor` deferred them): one generation with
  finish reason ``"approvalRequired"``; the response's ``approval`` resumes the same
  turn later (see :mod:`~toolrelay.client._deferred_approval`);
- the model was called ``max_model_calls`` times and still asks for tools:
  :class:`~toolrelay.exceptions.ModelCallLimitError`.

Before each model call, the names in ``options.tool_names`` are resolved through the
manager's resolver into ``options.tools``: models read their tools from ``options.tools``.
After it, tool call ids the model repeated (or left empty) are renamed, so every call of the
turn has an id of its own: tool responses, approvals and providers all pair by id.

The final response's usage is the sum over all rounds, and its ``tool_loop`` is a
:class:`~toolrelay.client.ToolLoopReport` (the whole turn's history).

**Memory inside the loop.** When an advisor that keeps the conversation
(:class:`~toolrelay.client._advisor.HistoryAdvisor`, e.g. a ``MessageChatMemoryAdvisor`` with a
higher order) sits after this one, it already adds the stored history to every request and
stores every message it sees. Each later round then sends only the system messages and the
new tool response message, and when a turn ends without another model call the last tool
responses and the answer are handed to its ``remember``. ``conversation_history=True``
forces full histories; ``False`` always sends only new messages.

**Streaming.** Text chunks are passed on as they arrive (without tool-call fragments, usage or
finish reasons); tool-call fragments are merged into whole calls, run, and the loop goes on.
The stream ends with one closing chunk carrying the finish reason and the summed usage (and,
for return-direct or limit answers, their text); its context holds the complete final
response under ``FINAL_RESPONSE_KEY``, so aggregating a stream gives the called answer.
"""

from __future__ import annotations

import dataclasses
from collections.abc import AsyncIterator, Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

from toolrelay.client._advisor import (
    HIGHEST_PRECEDENCE,
    LOWEST_PRECEDENCE,
    TOOL_CALLING_ADVISOR_ORDER,
    AdvisorChain,
    HistoryAdvisor,
)
from toolrelay.client._conversations import turn_conversation
from toolrelay.client._deferred_approval import ApprovalState, Resumption
from toolrelay.client._memory_advisor import answer_message
from toolrelay.client._requests import ChatClientRequest, ChatClientResponse
from toolrelay.client._streaming import FINAL_RESPONSE_KEY, StreamAggregator, text_chunk
from toolrelay.client._tool_loop import (
    APPROVAL_REQUIRED_FINISH_REASON,
    TOOL_CALL_LIMIT_FINISH_REASON,
    LoopStop,
    ToolLoopReport,
)
from toolrelay.client._tool_provider import _REQUEST_TURN, RequestTools, ToolProvider, TurnTools
from toolrelay.exceptions import (
    ConfigurationError,
    ModelCallLimitError,
    ToolCallLimitError,
    ToolNotFoundError,
)
from toolrelay.execution import ToolCallingManager, ToolExecutionResult
from toolrelay.execution._approval import ResumedRound
from toolrelay.execution._pipeline import check_context
from toolrelay.execution._resolution import closest_names
from toolrelay.messages import (
    AssistantMessage,
    ChatResponse,
    Generation,
    Message,
    SystemMessage,
    Usage,
)
from toolrelay.models._call_ids import consistent_call_ids
from toolrelay.models._chunks import without_text
from toolrelay.prompt import Prompt

__all__ = [
    "DEFAULT_MAX_MODEL_CALLS",
    "EligibilityChecker",
    "ToolCallingAdvisor",
    "ToolLoopState",
    "has_tool_calls",
]

DEFAULT_MAX_MODEL_CALLS = 50

MANAGER_KEY = "toolrelay.tool_calling_manager"
"""Request context entry: the client's manager, for a loop advisor that has none of its own."""

EligibilityChecker = Callable[[ChatResponse], bool]
"""Decides whether a model answer asks for a tool round."""


def has_tool_calls(response: ChatResponse) -> bool:
    """The default eligibility check: any generation asks for tool calls."""
    return response.has_tool_calls


def _check_order(order: object) -> None:
    # As Spring AI's ToolCallingAdvisor: either end would tie the loop with the advisor placed
    # there, and a tie keeps the order the advisors were given in.
    in_range = isinstance(order, int) and HIGHEST_PRECEDENCE < order < LOWEST_PRECEDENCE
    if in_range and not isinstance(order, bool):
        return
    raise ConfigurationError(
        f"order must be an int strictly between HIGHEST_PRECEDENCE ({HIGHEST_PRECEDENCE}) and "
        f"LOWEST_PRECEDENCE ({LOWEST_PRECEDENCE}), not {order!r}: the tool loop sits inside the "
        "outermost advisors (tracing, whose span holds the whole turn) and leaves the innermost "
        "place, right before the model, to advisors of every model call; the default is "
        "TOOL_CALLING_ADVISOR_ORDER (HIGHEST_PRECEDENCE + 300)"
    )


@dataclass(kw_only=True)
class ToolLoopState:
    """What the loop knows during one turn; every hook receives it.

    The advisor object is shared by concurrent requests, so per-turn data lives here, never
    on the advisor. Subclasses keep their own per-turn data in :attr:`data`.

    Attributes:
        request: The request the loop received (as returned by ``init_loop``).
        chain: The advisors after the loop, then the model.
        streaming: Whether the turn is streamed.
        history: The turn so far: the messages the loop started with, then each round's
            assistant message and tool response message. This is also the prompt given to
            the execution manager, so its per-turn call limits count every round.
        history_advisors: Advisors after the loop that keep the conversation themselves;
            when there are any (and ``conversation_history`` is not forced on), each round
            sends them only new messages.
        delegate_history: Whether rounds send only new messages (see above).
        model_calls: Model calls made so far in this turn.
        usage: Usage summed over the rounds so far.
        rounds: The execution result of every tool round so far.
        stop: Why the loop ended (set when it ends).
        resumed: While the round that stopped for approval runs again, that round (with the
            person's decisions); ``execute_tools`` passes it to the manager. ``None``
            otherwise.
        tools: The turn's side of the loop's tool provider (see ``ToolProvider``).
        manager: The manager that runs the turn's rounds: the advisor's own, else the
            client's.
        data: Free space for subclasses.
    """

    request: ChatClientRequest
    chain: AdvisorChain
    streaming: bool
    history: list[Message] = field(default_factory=list)
    history_advisors: tuple[HistoryAdvisor, ...] = ()
    delegate_history: bool = False
    model_calls: int = 0
    usage: Usage = field(default_factory=Usage)
    rounds: list[ToolExecutionResult] = field(default_factory=list)
    stop: LoopStop | None = None
    resumed: ResumedRound | None = None
    tools: TurnTools = _REQUEST_TURN
    manager: ToolCallingManager = field(default_factory=ToolCallingManager)
    data: dict[str, Any] = field(default_factory=dict)


class ToolCallingAdvisor:
    """Runs the tool loop for the advisors after it and the model.

    Args:
        tool_provider: Where each turn's tools come from; the request's own if omitted.
        tool_calling_manager: Runs each round. When omitted, the client's (built from its
            ``approval=``, ``idempotency=``, ``audit=``, ``authorize=`` and
            ``interceptors=``): give a manager here only for a loop used without those.
        order: Position in the chain (default ``HIGHEST_PRECEDENCE + 300``): an ``int``
            strictly between ``HIGHEST_PRECEDENCE`` and ``LOWEST_PRECEDENCE``, as Spring AI's
            ``ToolCallingAdvisor`` accepts. The ends are the outermost place (the tracing
            advisor's, whose span holds the whole turn) and the innermost, right before the
            model (an advisor's that sees every model call); a loop there would tie with that
            advisor, and which of the two runs first would hang on the order they were given in.
        eligibility_checker: Whether an answer asks for a tool round.
        max_model_calls: Most model calls per turn before
            :class:`~toolrelay.exceptions.ModelCallLimitError`.
        conversation_history: ``None`` (auto): full histories unless a history advisor sits
            after the loop; ``True``: always full; ``False``: always only new messages.
        name: For messages.

    Subclasses customise the loop through the hooks ``init_loop``, ``before_call``,
    ``after_call``, ``is_tool_call``, ``execute_tools``, ``next_instructions`` and
    ``finalize_loop``; per-turn data belongs in ``state.data``.

    Raises:
        ConfigurationError: ``order`` is not an ``int`` within its range, ``max_model_calls``
            is below 1, or ``tool_calling_manager`` is not a ``ToolCallingManager``.
    """

    def __init__(
        self,
        *,
        tool_provider: ToolProvider | None = None,
        tool_calling_manager: ToolCallingManager | None = None,
        order: int = TOOL_CALLING_ADVISOR_ORDER,
        eligibility_checker: EligibilityChecker = has_tool_calls,
        max_model_calls: int = DEFAULT_MAX_MODEL_CALLS,
        conversation_history: bool | None = None,
        name: str = "tool_calling",
    ) -> None:
        _check_order(order)
        if max_model_calls < 1:
            raise ConfigurationError(f"max_model_calls must be >= 1, not {max_model_calls}")
        self.tool_provider: ToolProvider = tool_provider or RequestTools()
        if tool_calling_manager is not None and not isinstance(
            tool_calling_manager, ToolCallingManager
        ):
            raise ConfigurationError(
                f"tool_calling_manager must be a ToolCallingManager, not {tool_calling_manager!r}"
            )
        self.tool_calling_manager = tool_calling_manager
        self._own_manager: ToolCallingManager | None = None
        self.order = order
        self.eligibility_checker = eligibility_checker
        self.max_model_calls = max_model_calls
        self.conversation_history = conversation_history
        self.name = name

    def __repr__(self) -> str:
        return f"{type(self).__name__}(name={self.name!r}, order={self.order})"

    # --- advisor entry points -------------------------------------------------------------

    async def advise_call(
        self, request: ChatClientRequest, chain: AdvisorChain
    ) -> ChatClientResponse:
        """Run the loop and return the final response."""
        answer: ChatClientResponse | None = None
        async for response, final in self._loop(request, chain, streaming=False):
            if final:
                answer = response
        assert answer is not None  # the loop always ends with its final response
        return answer

    async def advise_stream(
        self, request: ChatClientRequest, chain: AdvisorChain
    ) -> AsyncIterator[ChatClientResponse]:
        """Run the loop, passing text chunks on, and end with a closing chunk."""
        async for response, final in self._loop(request, chain, streaming=True):
            if not final:
                yield response
                continue
            complete = response.chat_response
            closing = complete
            if response.tool_loop is not None and response.tool_loop.stop is LoopStop.ANSWER:
                closing = without_text(complete)  # its text was streamed already
            yield dataclasses.replace(
                response,
                chat_response=closing,
                context={**response.context, FINAL_RESPONSE_KEY: complete},
            )

    # --- hooks ----------------------------------------------------------------------------

    async def init_loop(
        self, request: ChatClientRequest, state: ToolLoopState
    ) -> ChatClientRequest:
        """Open a turn; returns the request the loop starts from (default: unchanged)."""
        return request

    async def before_call(
        self, request: ChatClientRequest, state: ToolLoopState
    ) -> ChatClientRequest:
        """Adjust one round's request before the model sees it (default: unchanged).

        Changes apply to this round only; the turn's history is kept in ``state.history``.
        """
        return request

    async def after_call(
        self, response: ChatClientResponse, state: ToolLoopState
    ) -> ChatClientResponse:
        """Adjust one round's response before the loop looks at it (default: unchanged)."""
        return response

    def is_tool_call(self, response: ChatResponse, state: ToolLoopState) -> bool:
        """Whether ``response`` asks for a tool round (the eligibility checker's verdict)."""
        return self.eligibility_checker(response)

    async def execute_tools(
        self, request: ChatClientRequest, response: ChatClientResponse, state: ToolLoopState
    ) -> ToolExecutionResult:
        """Run one round's tool calls with the manager, over the turn's whole history.

        The calls run with what the provider offers the round (``state.tools.round``), which
        hears the result, also a partial one when a call limit stopped the round.
        """
        offered = state.tools.round(request, response.chat_response)
        prompt = Prompt(
            messages=tuple(state.history),
            options=request.prompt.options.replace(tools=offered.tools),
        )
        try:
            result = await state.manager.execute_tool_calls(
                prompt,
                response.chat_response,
                interceptors=offered.interceptors,
                resumed=state.resumed,
                unavailable=offered.unavailable,
            )
        except ToolCallLimitError as exc:
            if isinstance(exc.partial, ToolExecutionResult):
                await state.tools.after_round(exc.partial)
            raise
        await state.tools.after_round(result)
        return result

    async def next_instructions(
        self,
        request: ChatClientRequest,
        response: ChatClientResponse,
        result: ToolExecutionResult,
        state: ToolLoopState,
    ) -> Sequence[Message]:
        """The messages of the next round.

        The whole history; or, when a history advisor after the loop keeps the conversation,
        only the system messages and the new tool response message.
        """
        if not state.delegate_history:
            return result.conversation_history
        system = [m for m in state.request.prompt.messages if isinstance(m, SystemMessage)]
        new = result.tool_response_message
        return [*system, *([new] if new is not None else [])]

    async def finalize_loop(
        self, response: ChatClientResponse, state: ToolLoopState
    ) -> ChatClientResponse:
        """Close a turn; returns the final response (default: unchanged)."""
        return response

    # --- the loop -------------------------------------------------------------------------

    def manager_for(self, request: ChatClientRequest) -> ToolCallingManager:
        """The manager of ``request``'s rounds: this advisor's own, else the client's."""
        if self.tool_calling_manager is not None:
            return self.tool_calling_manager
        manager = request.context.get(MANAGER_KEY)
        if manager is None:  # a loop run without a client: a manager of its own, made once
            if self._own_manager is None:
                self._own_manager = ToolCallingManager()
            manager = self._own_manager
        assert isinstance(manager, ToolCallingManager)
        return manager

    def _with_named_tools(
        self, request: ChatClientRequest, manager: ToolCallingManager
    ) -> ChatClientRequest:
        """Resolve ``options.tool_names`` into ``options.tools``, which the model reads."""
        options = request.prompt.options
        if not options.tool_names:
            return request
        resolver = manager.resolver
        tools = list(options.tools)
        known = {t.definition.name for t in tools}
        for name in options.tool_names:
            found = resolver.resolve(name)
            if found is None:
                raise ToolNotFoundError(name, closest_names(name, resolver.names()))
            if found.definition.name not in known:
                known.add(found.definition.name)
                tools.append(found)
        return request.with_options(options.replace(tools=tuple(tools), tool_names=()))

    def _start(
        self, request: ChatClientRequest, chain: AdvisorChain, streaming: bool
    ) -> ToolLoopState:
        inner = chain.copy(excluding=self)
        history_advisors = tuple(a for a in inner.advisors if isinstance(a, HistoryAdvisor))
        delegate = (
            bool(history_advisors)
            if self.conversation_history is None
            else not self.conversation_history
        )
        return ToolLoopState(
            request=request,
            chain=inner,
            streaming=streaming,
            history_advisors=history_advisors,
            delegate_history=delegate,
            manager=self.manager_for(request),
        )

    async def _loop(
        self, request: ChatClientRequest, chain: AdvisorChain, *, streaming: bool
    ) -> AsyncIterator[tuple[ChatClientResponse, bool]]:
        """The loop itself, for calls and streams.

        Yields ``(chunk, False)`` for text chunks (streams only), then
        ``(final response, True)``.
        """
        state = self._start(request, chain, streaming)
        request = self._with_named_tools(await self.init_loop(request, state), state.manager)
        state.request = request
        options = request.prompt.options
        # A context the tools cannot run with fails before the model is paid for a first call
        # (a tool that needs approval was checked when the client was built, and one that
        # arrived since, in a live catalog, is refused as feedback when called).
        check_context(options.tools, options.tool_context)
        state.tools = await self.tool_provider.open(
            request, owner=self.name, manager=state.manager, model=state.chain.model
        )
        state.history = list(request.prompt.messages)
        instructions: Sequence[Message] = request.prompt.messages
        resumed = request.resume
        if resumed is not None:
            _restore(state, resumed)
        while True:
            if resumed is not None:  # the round that waited for approval; the model is not asked
                round_request = await self._round_request(state.history, state)
                generation = Generation(message=resumed.state.assistant)
                response = ChatClientResponse(  # its usage is counted already
                    chat_response=ChatResponse(generations=(generation,)), context=request.context
                )
                chat_response = response.chat_response
            else:
                if state.model_calls >= self.max_model_calls:
                    if state.rounds:  # the last tool responses never reached a history advisor
                        await self._remember(request, instructions, state)
                    raise ModelCallLimitError(
                        f"{self.name}: the model was called {state.model_calls} times in one "
                        f"turn and still asks for tools (max_model_calls={self.max_model_calls}); "
                        "check the tools' results or raise the limit"
                    )
                round_request = await self._round_request(instructions, state)
                state.model_calls += 1
                if streaming:
                    aggregator = StreamAggregator()
                    async for chunk in state.chain.next_stream(round_request):
                        aggregator.add(chunk)
                        text = text_chunk(chunk.chat_response)
                        if text is not None:
                            yield chunk.with_chat_response(text), False
                    response = aggregator.response()
                else:
                    response = await state.chain.next_call(round_request)
                response = await self.after_call(response, state)
                response = response.with_chat_response(
                    _unique_call_ids(response.chat_response, state.history)
                )
                chat_response = response.chat_response
                state.usage = state.usage + chat_response.usage

                if not self.is_tool_call(chat_response, state):
                    state.stop = LoopStop.ANSWER
                    final = response
                    break
            state.resumed = None if resumed is None else resumed.round()
            try:
                result = await self.execute_tools(round_request, response, state)
            except ToolCallLimitError as exc:
                final = await self._limit_answer(exc, round_request, response, state)
                break
            finally:
                state.resumed = None
            resumed = None
            if result.pending:  # a person decides; the turn can resume with the saved state
                state.stop = LoopStop.APPROVAL_REQUIRED
                final = _approval_required(response, _stopped(state, result))
                break
            state.rounds.append(result)
            state.history = list(result.conversation_history)
            if result.return_direct:
                state.stop = LoopStop.RETURN_DIRECT
                answer = dataclasses.replace(chat_response, generations=result.build_generations())
                final = response.with_chat_response(answer)
                await self._remember(
                    round_request, [result.tool_response_message, answer_message(answer)], state
                )
                break
            instructions = await self.next_instructions(round_request, response, result, state)

        final = state.tools.finish(_with_report(final, state))
        yield await self.finalize_loop(final, state), True

    async def _round_request(
        self, messages: Sequence[Message], state: ToolLoopState
    ) -> ChatClientRequest:
        """The next model call's request: the hook's, with the tools the provider shows."""
        request = await self.before_call(state.request.with_messages(messages), state)
        request = self._with_named_tools(request, state.manager)
        return state.tools.prepare(request, model_call=state.model_calls + 1)

    async def _limit_answer(
        self,
        exc: ToolCallLimitError,
        request: ChatClientRequest,
        response: ChatClientResponse,
        state: ToolLoopState,
    ) -> ChatClientResponse:
        state.stop = LoopStop.TOOL_CALL_LIMIT
        partial = exc.partial if isinstance(exc.partial, ToolExecutionResult) else None
        if partial is not None:
            state.rounds.append(partial)
            state.history = list(partial.conversation_history)
        generation = Generation(
            message=AssistantMessage(text=str(exc)), finish_reason=TOOL_CALL_LIMIT_FINISH_REASON
        )
        answer = dataclasses.replace(response.chat_response, generations=(generation,))
        if partial is not None:
            await self._remember(
                request, [partial.tool_response_message, answer_message(answer)], state
            )
        return response.with_chat_response(answer)

    async def _remember(
        self,
        request: ChatClientRequest,
        messages: Sequence[Message | None],
        state: ToolLoopState,
    ) -> None:
        """Hand history advisors the messages that will never go back through them."""
        kept = [m for m in messages if m is not None and not isinstance(m, SystemMessage)]
        if state.delegate_history and kept:
            for advisor in state.history_advisors:
                await advisor.remember(request, kept)


def _unique_call_ids(response: ChatResponse, history: Sequence[Message]) -> ChatResponse:
    """``response`` with every tool call id non-empty and unique within the turn.

    Models repeat ids (the same one for every call, ``""``, the id of an earlier round); an
    approval, a tool response and the provider all pair by id, so the loop renames the
    repeats (``call_3``...) before anything runs: a decision about one call never applies to
    another.
    """
    generations = []
    for generation in response.generations:
        message = generation.message
        if message.tool_calls:
            renamed = consistent_call_ids([*history, message])[-1]
            assert isinstance(renamed, AssistantMessage)  # it rewrites ids only
            message = renamed
        generations.append(
            generation
            if message is generation.message
            else dataclasses.replace(generation, message=message)
        )
    if all(a is b for a, b in zip(generations, response.generations, strict=True)):
        return response
    return dataclasses.replace(response, generations=tuple(generations))


def _with_report(final: ChatClientResponse, state: ToolLoopState) -> ChatClientResponse:
    """The final response with the turn's summed usage and its report."""
    chat_response = dataclasses.replace(final.chat_response, usage=state.usage)
    message = answer_message(chat_response)
    history = (*state.history, *([message] if message is not None else []))
    report = ToolLoopReport(
        history=history,
        model_calls=state.model_calls,
        usage=state.usage,
        rounds=tuple(state.rounds),
        stop=state.stop or LoopStop.ANSWER,
    )
    return dataclasses.replace(final, chat_response=chat_response, tool_loop=report)


def _stopped(state: ToolLoopState, result: ToolExecutionResult) -> ApprovalState:
    """The state of the turn, stopped at round ``result`` for approval."""
    return ApprovalState.of(
        result,
        history=state.history,
        model_calls=state.model_calls,
        usage=state.usage,
        conversation=turn_conversation(state.request),
    )


def _restore(state: ToolLoopState, resumed: Resumption) -> None:
    """Put a stopped turn's history and counters back into ``state``.

    Raises:
        ConfigurationError: The turn belongs to another conversation (or tenant) than the
            resuming request's.
    """
    expected = resumed.state.conversation
    if expected is not None and turn_conversation(state.request) != expected:
        raise ConfigurationError(
            "this approval state belongs to another conversation: resume it with the "
            "stopped turn's conversation id and tool context (tenant)"
        )
    state.history = list(resumed.state.history)
    state.model_calls = resumed.state.model_calls
    state.usage = resumed.state.usage


def _approval_required(response: ChatClientResponse, state: ApprovalState) -> ChatClientResponse:
    """The answer of a turn stopped for approval: finish reason ``"approvalRequired"``."""
    waiting = ", ".join(f"{p.tool_name} (call {p.call_id})" for p in state.pending)
    generation = Generation(
        message=AssistantMessage(text=f"Waiting for approval: {waiting}."),
        finish_reason=APPROVAL_REQUIRED_FINISH_REASON,
    )
    answer = dataclasses.replace(response.chat_response, generations=(generation,))
    return dataclasses.replace(response, chat_response=answer, approval=state)
