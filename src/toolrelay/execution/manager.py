"""One round of tool execution that turns a model's mistakes into feedback, never a crash.

:class:`ToolCallingManager` is Spring AI's ``DefaultToolCallingManager`` with what its users ask
for: the calls of a round run concurrently; unknown names, unusable JSON and schema violations
become error tool responses the model can act on; a failing call never discards the others;
each call can time out; per-turn call limits stop runaway loops; guards can deny calls;
interceptors wrap each run (approval, idempotency, audit).

A round, for each call of the first generation that has tool calls:

1. resolve the name (the request's tools, then the resolver chain, then lenient matching);
2. count it against the turn's :class:`~toolrelay.execution.CallLimits`;
3. parse the arguments (blank text is ``{}``; anything else must be a JSON object);
4. run the guards; the first denial answers the call;
5. pass the call through the interceptors (see :mod:`~toolrelay.execution.interception`),
   then run the tool (bounded by ``max_concurrency``, cancelled after its timeout); its own
   argument validation errors become invalid-argument feedback, other exceptions go to the
   :class:`~toolrelay.execution.ToolExceptionProcessor`.

Steps 1-3 run for every call before any tool starts, so a ``"raise"`` policy for unknown names
or invalid JSON fails before anything has side effects. Responses keep the order of the calls.
Every call is answered, even when two calls share an id or have an empty id: responses echo
the ids given, and providers decide what they accept. A response carries the tool's canonical
name when the call resolved, and the name as the model wrote it when it did not. A round
resumed after an approval stop keeps the answers its calls already had: none runs twice.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
from collections.abc import Sequence
from dataclasses import dataclass
from functools import partial
from time import perf_counter
from typing import Literal

from toolrelay._sync import run_sync
from toolrelay.exceptions import (
    ConfigurationError,
    InvalidJsonError,
    ModelResponseError,
    ToolArgumentError,
    ToolCallLimitError,
    ToolNotFoundError,
)
from toolrelay.execution import feedback
from toolrelay.execution._concurrency import run_all
from toolrelay.execution.approval import answered_outcome
from toolrelay.execution.arguments import ParsedArguments, parse_arguments
from toolrelay.execution.exceptions_policy import (
    DefaultToolExceptionProcessor,
    ToolExceptionProcessor,
)
from toolrelay.execution.guards import ToolCallGuard, ToolCallRequest
from toolrelay.execution.interception import ToolCallInterceptor, ToolInvocation, run_interceptors
from toolrelay.execution.limits import CallLimits, LimitBreach, TurnCallCounter
from toolrelay.execution.resolution import (
    StaticToolResolver,
    ToolLookup,
    ToolResolver,
    closest_names,
)
from toolrelay.execution.result import ToolCallOutcome, ToolCallStatus, ToolExecutionResult
from toolrelay.messages import ChatResponse, Generation, ToolCall, ToolResponse, ToolResponseMessage
from toolrelay.prompt import ChatOptions, Prompt
from toolrelay.tools.base import Tool, ToolContext, ToolDefinition
from toolrelay.tools.names import provider_safe_name

__all__ = ["ToolCallingManager"]

_log = logging.getLogger("toolrelay.execution")

Policy = Literal["feedback", "raise"]
_Bound = asyncio.Semaphore | contextlib.nullcontext[None]  # bounds a round's concurrency
_TIMED_OUT = object()


@dataclass(frozen=True, kw_only=True)
class _Ready:
    """A call that passed resolution, limits and JSON parsing."""

    call: ToolCall
    tool: Tool
    arguments: ParsedArguments


class ToolCallingManager:
    """Executes the tool calls of one model response.

    Args:
        resolver: Finds tools the request does not carry (Spring AI's
            ``ToolCallbackResolver``); ``None`` means none.
        exception_processor: Turns a tool's exception into feedback or raises; defaults to
            :class:`~toolrelay.execution.DefaultToolExceptionProcessor`.
        max_concurrency: How many tools of one round may run at the same time.
        default_timeout: Seconds a tool may run when its metadata sets no ``timeout``;
            ``None`` means no limit. A timed-out tool's task is cancelled (a synchronous
            function already running in a worker thread finishes in the background).
        limits: Per-turn call limits.
        unknown_tool: ``"feedback"`` answers a call to an unknown name with an error
            response; ``"raise"`` raises :class:`~toolrelay.exceptions.ToolNotFoundError`.
        invalid_arguments: ``"feedback"`` answers unusable arguments with an error response;
            ``"raise"`` raises :class:`~toolrelay.exceptions.ToolArgumentError`.
        guards: Checks run before every call, in order (see :class:`ToolCallGuard`).
        interceptors: Steps around every run that passed the guards, outermost first (see
            :class:`~toolrelay.execution.ToolCallInterceptor`).

    Raises:
        ConfigurationError: An option is out of range.
    """

    def __init__(
        self,
        *,
        resolver: ToolResolver | None = None,
        exception_processor: ToolExceptionProcessor | None = None,
        max_concurrency: int = 8,
        default_timeout: float | None = None,
        limits: CallLimits = CallLimits(),  # noqa: B008 - frozen, so sharing it is safe
        unknown_tool: Policy = "feedback",
        invalid_arguments: Policy = "feedback",
        guards: Sequence[ToolCallGuard] = (),
        interceptors: Sequence[ToolCallInterceptor] = (),
    ) -> None:
        if max_concurrency < 1:
            raise ConfigurationError(f"max_concurrency must be >= 1, not {max_concurrency}")
        if default_timeout is not None and default_timeout <= 0:
            raise ConfigurationError(f"default_timeout must be > 0, not {default_timeout}")
        for option, value in (
            ("unknown_tool", unknown_tool),
            ("invalid_arguments", invalid_arguments),
        ):
            if value not in ("feedback", "raise"):
                raise ConfigurationError(f"{option} must be 'feedback' or 'raise', not {value!r}")
        self.resolver: ToolResolver = resolver if resolver is not None else StaticToolResolver()
        self.exception_processor: ToolExceptionProcessor = (
            exception_processor
            if exception_processor is not None
            else DefaultToolExceptionProcessor()
        )
        self.max_concurrency = max_concurrency
        self.default_timeout = default_timeout
        self.limits = limits
        self.unknown_tool = unknown_tool
        self.invalid_arguments = invalid_arguments
        self.guards: tuple[ToolCallGuard, ...] = tuple(guards)
        self.interceptors: tuple[ToolCallInterceptor, ...] = tuple(interceptors)

    def resolve_tool_definitions(self, options: ChatOptions) -> list[ToolDefinition]:
        """The definitions to send to the model: ``options.tools``, then ``options.tool_names``.

        Names are resolved through the resolver (canonical or provider-safe form) unless a tool
        in ``options.tools`` already has that name. A name seen twice is sent once; the first
        tool wins.

        Raises:
            ToolNotFoundError: A name in ``options.tool_names`` resolves to no tool.
        """
        definitions: dict[str, ToolDefinition] = {}
        for tool in options.tools:
            definitions.setdefault(tool.definition.name, tool.definition)
        given = {provider_safe_name(name) for name in definitions}
        for name in options.tool_names:
            if provider_safe_name(name) in given:
                continue  # the request carries this tool itself
            found = self.resolver.resolve(name)
            if found is None:
                raise ToolNotFoundError(name, closest_names(name, self.resolver.names()))
            definitions.setdefault(found.definition.name, found.definition)
        return list(definitions.values())

    async def execute_tool_calls(
        self, prompt: Prompt, chat_response: ChatResponse, *, guards: Sequence[ToolCallGuard] = ()
    ) -> ToolExecutionResult:
        """Run the tool calls of ``chat_response`` and answer each of them.

        Args:
            prompt: The request that produced ``chat_response``; its options carry the tools
                and the tool context, its messages start the new history.
            chat_response: The model's answer; the first generation with tool calls is used.
            guards: Extra guards for this round only, run after the manager's own.

        Returns:
            The new history (prompt messages, the assistant message, one tool response message
            answering every call in order), ``return_direct`` and one outcome per call.

        Raises:
            ModelResponseError: No generation has tool calls.
            ToolNotFoundError: A name is unknown and ``unknown_tool="raise"``.
            ToolArgumentError: Arguments are unusable and ``invalid_arguments="raise"``.
            ToolCallLimitError: A limit was breached and ``limits.on_breach="raise"``; the
                calls within the limits still ran and ``partial`` holds the round's result.
            ToolExecutionError: The exception processor wraps a tool's exception.
            Exception: What a guard raises, or a tool exception the processor re-raises;
                ``KeyboardInterrupt``, ``asyncio.CancelledError`` and ``MemoryError`` always
                propagate. The round's other running calls are cancelled first.
        """
        generation = _tool_call_generation(chat_response)
        assistant = generation.message
        context = ToolContext(prompt.options.tool_context)
        lookup = ToolLookup(prompt.options.tools, self.resolver)
        counter = TurnCallCounter(self.limits, prompt.messages)
        breaches: list[LimitBreach] = []
        calls = assistant.tool_calls
        slots = [self._prepare(call, lookup, counter, breaches) for call in calls]
        # A resumed round keeps the answers its calls got before it waited for approval.
        slots = [
            (answered_outcome(calls, i) or s) if isinstance(s, _Ready) else s
            for i, s in enumerate(slots)
        ]

        ready = [slot for slot in slots if isinstance(slot, _Ready)]
        all_guards = (*self.guards, *guards)
        # A round no larger than the bound never waits, so it skips the semaphore's cost.
        semaphore: _Bound = (
            asyncio.Semaphore(self.max_concurrency)
            if len(ready) > self.max_concurrency
            else contextlib.nullcontext()
        )
        executed = iter(
            await run_all(
                [partial(self._execute, r, all_guards, context, semaphore) for r in ready]
            )
        )
        outcomes = tuple(s if isinstance(s, ToolCallOutcome) else next(executed) for s in slots)

        return_direct = all(o.ok for o in outcomes) and all(
            r.tool.metadata.return_direct for r in ready
        )
        result = ToolExecutionResult(
            conversation_history=(
                *prompt.messages,
                assistant,
                ToolResponseMessage(responses=tuple(o.response for o in outcomes)),
            ),
            return_direct=return_direct,
            outcomes=outcomes,
        )
        if breaches and self.limits.on_breach == "raise":
            raise ToolCallLimitError(
                f"tool call limit reached: {breaches[0].describe()}", partial=result
            )
        return result

    def execute_tool_calls_sync(
        self, prompt: Prompt, chat_response: ChatResponse, *, guards: Sequence[ToolCallGuard] = ()
    ) -> ToolExecutionResult:
        """Blocking :meth:`execute_tool_calls` (works inside a running event loop too)."""
        return run_sync(self.execute_tool_calls(prompt, chat_response, guards=guards))

    # --- steps ------------------------------------------------------------------------------

    def _prepare(
        self,
        call: ToolCall,
        lookup: ToolLookup,
        counter: TurnCallCounter,
        breaches: list[LimitBreach],
    ) -> ToolCallOutcome | _Ready:
        """Resolve, count and parse one call; an outcome when it cannot run."""
        tool = lookup.find(call.name)
        if tool is None:
            counter.admit(call.name, resolved=False)
            suggestions = lookup.suggestions(call.name)
            if self.unknown_tool == "raise":
                raise ToolNotFoundError(call.name, suggestions)
            _log.debug("unknown tool %r in call %r", call.name, call.id)
            text = feedback.unknown_tool(call.name, suggestions, any_tools=bool(lookup.names()))
            return _answer(call, None, text, ToolCallStatus.UNKNOWN_TOOL)
        name = tool.definition.name
        breach = counter.admit(name)
        if breach is not None:
            breaches.append(breach)
            return _answer(call, name, breach.message, ToolCallStatus.LIMIT)
        try:
            arguments = parse_arguments(name, call.arguments)
        except InvalidJsonError as exc:
            if self.invalid_arguments == "raise":
                raise
            text = feedback.invalid_arguments(name, exc.problems)
            return _answer(call, name, text, ToolCallStatus.INVALID_ARGUMENTS, exception=exc)
        return _Ready(call=call, tool=tool, arguments=arguments)

    async def _execute(
        self, ready: _Ready, guards: Sequence[ToolCallGuard], context: ToolContext, sem: _Bound
    ) -> ToolCallOutcome:
        """Guard one call, then run it through the interceptors."""
        call, tool = ready.call, ready.tool
        name = tool.definition.name
        if guards:
            request = ToolCallRequest(
                call=call, tool=tool, arguments=ready.arguments.values, context=context
            )
            for guard in guards:
                reason = await guard(request)
                if reason is not None:
                    text = reason or feedback.denied(name)
                    return _answer(call, name, text, ToolCallStatus.DENIED)
        invocation = ToolInvocation(
            call=call, tool=tool, arguments=ready.arguments, context=context
        )
        run = partial(self._run, semaphore=sem)
        return await run_interceptors(self.interceptors, invocation, run)

    async def _run(self, invocation: ToolInvocation, semaphore: _Bound) -> ToolCallOutcome:
        """Run the tool, bounded by the concurrency limit and its timeout."""
        call, tool, context = invocation.call, invocation.tool, invocation.context
        name = tool.definition.name
        timeout = tool.metadata.timeout
        if timeout is None:
            timeout = self.default_timeout
        error: Exception | None = None
        async with semaphore:
            started = perf_counter()
            try:
                value = await _call(tool, invocation.arguments.text, context, timeout)
            except ToolArgumentError as exc:
                if self.invalid_arguments == "raise":
                    raise
                text = feedback.invalid_arguments(name, exc.problems)
                status, error = ToolCallStatus.INVALID_ARGUMENTS, exc
            except MemoryError:
                raise
            except Exception as exc:
                text = self.exception_processor.process(name, exc)
                _log.warning("tool %r raised; the model gets an error response", name, exc_info=exc)
                status, error = ToolCallStatus.ERROR, exc
            else:
                if value is _TIMED_OUT:
                    assert timeout is not None  # only a timeout produces the marker
                    text, status = feedback.timed_out(name, timeout), ToolCallStatus.TIMEOUT
                else:
                    text, status = _as_text(value), ToolCallStatus.OK
            elapsed_ms = (perf_counter() - started) * 1000.0
        return _answer(call, name, text, status, duration_ms=elapsed_ms, exception=error)


# --- helpers ---------------------------------------------------------------------------------


def _tool_call_generation(response: ChatResponse) -> Generation:
    for generation in response.generations:
        if generation.message.tool_calls:
            return generation
    raise ModelResponseError("the chat response has no generation with tool calls")


def _answer(
    call: ToolCall,
    tool_name: str | None,
    text: str,
    status: ToolCallStatus,
    *,
    duration_ms: float = 0.0,
    exception: Exception | None = None,
) -> ToolCallOutcome:
    response = ToolResponse(
        id=call.id,
        name=tool_name if tool_name is not None else call.name,
        data=text,
        is_error=status is not ToolCallStatus.OK,
    )
    return ToolCallOutcome(
        call=call,
        tool_name=tool_name,
        response=response,
        status=status,
        duration_ms=duration_ms,
        exception=exception,
    )


async def _call(tool: Tool, text: str, context: ToolContext, seconds: float | None) -> object:
    """``tool.call``, or the ``_TIMED_OUT`` marker when ``seconds`` passed first."""
    if seconds is None:
        return await tool.call(text, context)
    scope = asyncio.timeout(seconds)
    try:
        async with scope:
            return await tool.call(text, context)
    except TimeoutError:
        if scope.expired():
            return _TIMED_OUT
        raise  # the tool's own TimeoutError, e.g. from an HTTP client


def _as_text(value: object) -> str:
    """A tool's return value as text; ``None`` (a tool that returned nothing) is ``""``."""
    if value is None:
        return ""
    if isinstance(value, str):
        return value
    try:
        return json.dumps(value, ensure_ascii=False, default=str)
    except (TypeError, ValueError):
        return str(value)
