"""``ToolCallingAdvisor``: the do-while tool loop, as an advisor.

Each round: build the request, ``before_call``, call the advisors after this one and the model
(``chain.copy(excluding=self)``), ``after_call``, add the round's usage, ask the eligibility
checker whether the answer asks for tools, run them with the
:class:`~toolrelay.execution.ToolCallingManager`, and either stop or let ``next_instructions``
build the next round's messages. ``init_loop`` and ``finalize_loop`` open and close a turn.

The loop stops when:

- the answer has no eligible tool calls: it is the final answer;
- every tool of a round is return-direct: the tool results are the answer (finish reason
  ``"returnDirect"``), the model is not asked again;
- the manager raises :class:`~toolrelay.exceptions.ToolCallLimitError` (limits with
  ``on_breach="raise"``): one generation with finish reason ``"toolCallLimitExceeded"``;
- calls wait for a person's approval (an
  :class:`~toolrelay.execution.ApprovalInterceptor` deferred them): one generation with
  finish reason ``"approvalRequired"``; the response's ``approval_state`` resumes the same
  turn later (see :mod:`~toolrelay.client._deferred_approval`);
- the model was called ``max_model_calls`` times and still asks for tools:
  :class:`~toolrelay.exceptions.ModelCallLimitError`.

Before each model call, the names in ``options.tool_names`` are resolved through the
manager's resolver into ``options.tools``: models read their tools from ``options.tools``.
After it, tool call ids the model repeated (or left empty) are renamed, so every call of the
turn has an id of its own: tool responses, approvals and providers all pair by id.

The final response's usage is the sum over all rounds, and its context holds a
:class:`~toolrelay.client._tool_loop.ToolLoopReport` (the whole turn's history) under
``TOOL_LOOP_KEY``.

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

from toolrelay.client._advisor import (
    TOOL_CALLING_ADVISOR_ORDER,
    AdvisorChain,
    HistoryAdvisor,
)
from toolrelay.client._deferred_approval import ApprovalState, approval_required, resumption_of
from toolrelay.client._memory_advisor import answer_message
from toolrelay.client._requests import ChatClientRequest, ChatClientResponse
from toolrelay.client._streaming import FINAL_RESPONSE_KEY, StreamAggregator, text_chunk
from toolrelay.client._tool_loop import (
    TOOL_CALL_LIMIT_FINISH_REASON,
    TOOL_LOOP_KEY,
    LoopStop,
    ToolLoopReport,
    ToolLoopState,
    with_report,
)
from toolrelay.exceptions import (
    ConfigurationError,
    ModelCallLimitError,
    ToolCallLimitError,
    ToolNotFoundError,
)
from toolrelay.execution import (
    ToolCallingManager,
    ToolCallInterceptor,
    ToolExecutionResult,
    closest_names,
)
from toolrelay.execution._guards import ToolCallGuard, guard_interceptors
from toolrelay.messages import (
    AssistantMessage,
    ChatResponse,
    Generation,
    Message,
    SystemMessage,
)
from toolrelay.models._call_ids import consistent_call_ids
from toolrelay.prompt import Prompt

__all__ = ["DEFAULT_MAX_MODEL_CALLS", "EligibilityChecker", "ToolCallingAdvisor", "has_tool_calls"]

DEFAULT_MAX_MODEL_CALLS = 50

EligibilityChecker = Callable[[ChatResponse], bool]
"""Decides whether a model answer asks for a tool round."""


def has_tool_calls(response: ChatResponse) -> bool:
    """The default eligibility check: any generation asks for tool calls."""
    return response.has_tool_calls


class ToolCallingAdvisor:
    """Runs the tool loop for the advisors after it and the model.

    Args:
        tool_calling_manager: Runs each round; a default ``ToolCallingManager()`` if omitted.
        order: Position in the chain (default ``HIGHEST_PRECEDENCE + 300``).
        eligibility_checker: Whether an answer asks for a tool round.
        max_model_calls: Most model calls per turn before
            :class:`~toolrelay.exceptions.ModelCallLimitError`.
        conversation_history: ``None`` (auto): full histories unless a history advisor sits
            after the loop; ``True``: always full; ``False``: always only new messages.
        guards: Deprecated: guards for every round, as interceptors outside the manager's
            (with a :class:`DeprecationWarning`); give the manager interceptors instead.
        name: For messages.

    Subclasses customise the loop through the hooks ``init_loop``, ``before_call``,
    ``after_call``, ``is_tool_call``, ``execute_tools``, ``next_instructions`` and
    ``finalize_loop``; per-turn data belongs in ``state.data``.
    """

    def __init__(
        self,
        *,
        tool_calling_manager: ToolCallingManager | None = None,
        order: int = TOOL_CALLING_ADVISOR_ORDER,
        eligibility_checker: EligibilityChecker = has_tool_calls,
        max_model_calls: int = DEFAULT_MAX_MODEL_CALLS,
        conversation_history: bool | None = None,
        guards: Sequence[ToolCallGuard] = (),
        name: str = "tool_calling",
    ) -> None:
        if max_model_calls < 1:
            raise ConfigurationError(f"max_model_calls must be >= 1, not {max_model_calls}")
        self.tool_calling_manager = tool_calling_manager or ToolCallingManager()
        self.order = order
        self.eligibility_checker = eligibility_checker
        self.max_model_calls = max_model_calls
        self.conversation_history = conversation_history
        self.round_interceptors: tuple[ToolCallInterceptor, ...] = guard_interceptors(
            guards, owner=f"{type(self).__name__}(guards=...)"
        )
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
            report = response.context.get(TOOL_LOOP_KEY)
            complete = response.chat_response
            closing = complete
            if isinstance(report, ToolLoopReport) and report.stop is LoopStop.ANSWER:
                closing = _without_text(complete)  # its text was streamed already
            yield ChatClientResponse(
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
        """Run one round's tool calls with the manager, over the turn's whole history."""
        prompt = Prompt(messages=tuple(state.history), options=request.prompt.options)
        return await self.tool_calling_manager.execute_tool_calls(
            prompt,
            response.chat_response,
            interceptors=self.round_interceptors,
            resumed=state.resumed,
        )

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

    def _with_named_tools(self, request: ChatClientRequest) -> ChatClientRequest:
        """Resolve ``options.tool_names`` into ``options.tools``, which the model reads."""
        options = request.prompt.options
        if not options.tool_names:
            return request
        resolver = self.tool_calling_manager.resolver
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
        )

    async def _loop(
        self, request: ChatClientRequest, chain: AdvisorChain, *, streaming: bool
    ) -> AsyncIterator[tuple[ChatClientResponse, bool]]:
        """The loop itself, for calls and streams.

        Yields ``(chunk, False)`` for text chunks (streams only), then
        ``(final response, True)``.
        """
        state = self._start(request, chain, streaming)
        state.request = request = await self.init_loop(request, state)
        state.history = list(request.prompt.messages)
        instructions: Sequence[Message] = request.prompt.messages
        resumed = resumption_of(request)
        if resumed is not None:
            resumed.restore(state)
        while True:
            if resumed is not None:  # the round that waited for approval; the model is not asked
                round_request = await self.before_call(request.with_messages(state.history), state)
                round_request = self._with_named_tools(round_request)
                response = resumed.response(request)
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
                round_request = await self.before_call(request.with_messages(instructions), state)
                round_request = self._with_named_tools(round_request)
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
                final = approval_required(response, ApprovalState.of(state, result))
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

        yield await self.finalize_loop(with_report(final, state), state), True

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


def _without_text(response: ChatResponse) -> ChatResponse:
    """``response`` without its generations' text (the closing chunk of a streamed answer)."""
    return dataclasses.replace(
        response,
        generations=tuple(
            Generation(
                message=AssistantMessage(tool_calls=g.message.tool_calls),
                finish_reason=g.finish_reason,
                metadata=g.metadata,
            )
            for g in response.generations
        ),
    )
