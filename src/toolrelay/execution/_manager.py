"""One round of tool execution that turns a model's mistakes into feedback, never a crash.

:class:`ToolCallingManager` is Spring AI's ``DefaultToolCallingManager`` with what its users ask
for: the calls of a round run concurrently; unknown names, unusable JSON and schema violations
become error tool responses the model can act on; a failing call never discards the others;
each call can time out; per-turn call limits stop runaway loops; one pipeline of
interceptors decides whether and how each call runs (authorization, approval, idempotency,
audit, tracing).

A round, for each call of the first generation that has tool calls:

1. resolve the name among the tools the request offers (then lenient matching); a name that
   is not text, or longer than ``max_name_length``, is refused without being looked up; a
   name none of them answers to gets the round's ``unavailable`` text when it has one (tool
   search: the same for unknown, hidden and forbidden names), else the closest names; a
   call of a :class:`~toolrelay.execution.ForwardingTool` (``call_tool``) is read as the
   call of the tool it names, which that tool's ``forward`` resolves for the caller;
2. count it against the turn's :class:`~toolrelay.execution.CallLimits`;
3. check that the tool context holds what the tool needs (``context_keys``, a required
   ``ToolContext``, the caller its idempotency keys are kept for), whichever door the call
   came through: a :class:`~toolrelay.exceptions.ToolContextError` for the developer;
4. read the arguments with the one reader (an object's JSON text, a JSON string holding one,
   ``None``, a mapping; anything else, text over ``max_arguments_length`` or values nested too
   deeply are feedback naming what came, see :mod:`~toolrelay.execution._arguments`) and
   validate them against the tool, once;
5. pass the call through the interceptors, the round's own first, then the manager's (see
   :mod:`~toolrelay.execution._interception`), then run the tool with the validated arguments,
   which a :class:`~toolrelay.tools.ValidatingTool` gets as they are, never parsed again
   (bounded by ``max_concurrency``, cancelled
   after its timeout; synchronous functions in a bounded pool of threads of their own, each
   tool within its share of them, see :mod:`~toolrelay.tools._workers`); exceptions go to the
   :class:`~toolrelay.execution.ToolExceptionProcessor`;
6. bound what the model reads: a result (or a tool's error text, or a replayed result) longer
   than the tool's ``max_result_chars``, else the manager's
   (:data:`DEFAULT_MAX_RESULT_CHARS`), is cut there, with a note saying how much was shown and
   what to do; the outcome keeps the whole text (``ToolCallOutcome.full_result``). The
   library's own tools (``tool_search``) fit their answers to the bound themselves, whole.

Steps 1-4 run for every call before any tool starts, so a ``"raise"`` policy for unknown names
or invalid arguments fails before anything has side effects. Responses keep the order of the
calls, and the history keeps every call well-formed (a name that is text, arguments that are
text), so an adapter re-sending it never fails.
Every call is answered, even when two calls share an id or have an empty id: responses echo
the ids given, and providers decide what they accept. A response carries the tool's canonical
name when the call resolved, and the name as the model wrote it when it did not. A round
resumed after an approval stop (``resumed=``) keeps the answers its calls already had: none
runs twice. :meth:`ToolCallingManager.run_call` runs one call the same way, without a model
response.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import contextlib
import dataclasses
import enum
import json
import logging
from collections.abc import Awaitable, Callable, Iterable, Sequence
from dataclasses import dataclass
from functools import partial
from time import perf_counter
from typing import Any, Final, Literal, TypeVar, Unpack

from toolrelay._sync import run_sync
from toolrelay.exceptions import (
    ArgumentProblem,
    ConfigurationError,
    ModelResponseError,
    ToolArgumentError,
    ToolCallLimitError,
    ToolContextError,
    ToolExecutionError,
    ToolNotFoundError,
    ToolResultError,
)
from toolrelay.execution import _feedback as feedback
from toolrelay.execution._approval import ResumedRound
from toolrelay.execution._arguments import (
    MAX_ARGUMENTS_DEPTH,
    ParsedArguments,
    parse_arguments,
    validate_call_arguments,
    validates_itself,
)
from toolrelay.execution._concurrency import run_all
from toolrelay.execution._exceptions_policy import (
    DefaultToolExceptionProcessor,
    ToolExceptionProcessor,
    error_text,
    tool_error_text,
)
from toolrelay.execution._forwarding import FORWARDED_NAME, ForwardingTool
from toolrelay.execution._interception import ToolCallInterceptor, ToolInvocation, run_interceptors
from toolrelay.execution._limits import CallLimits, LimitBreach, TurnCallCounter
from toolrelay.execution._pipeline import (
    META_TOOL,
    GuardOptions,
    Guards,
    check_guard_options,
    check_tool_context,
    given_guards,
)
from toolrelay.execution._resolution import (
    MAX_TOOL_NAME_LENGTH,
    StaticToolResolver,
    ToolLookup,
    ToolResolver,
    closest_names,
)
from toolrelay.execution._result import (
    ApprovalDecision,
    ToolCallOutcome,
    ToolCallStatus,
    ToolExecutionResult,
)
from toolrelay.messages import (
    ChatResponse,
    Generation,
    ToolCall,
    ToolResponse,
    ToolResponseMessage,
)
from toolrelay.prompt import ChatOptions, Prompt
from toolrelay.tools._arguments import json_kind
from toolrelay.tools._base import (
    Tool,
    ToolContext,
    ToolDefinition,
    ToolMetadata,
    ValidatedArguments,
    check_result_chars,
    check_seconds,
)
from toolrelay.tools._names import provider_safe_name
from toolrelay.tools._workers import WorkerJob, WorkerPool, WorkerPoolBusy, sync_tool_workers

__all__ = [
    "DEFAULT_MAX_ARGUMENTS_LENGTH",
    "DEFAULT_MAX_NAME_LENGTH",
    "DEFAULT_MAX_RESULT_CHARS",
    "DEFAULT_TIMEOUT",
    "ToolCallingManager",
    "configured_manager",
]

_log = logging.getLogger("toolrelay.execution")

T = TypeVar("T")
Policy = Literal["feedback", "raise"]
_Bound = asyncio.Semaphore | contextlib.nullcontext[None]  # bounds a round's concurrency
_TIMED_OUT = object()

DEFAULT_TIMEOUT: Final = 120.0
"""Seconds a tool may run when neither its metadata nor the manager sets a timeout."""
DEFAULT_MAX_NAME_LENGTH: Final = MAX_TOOL_NAME_LENGTH
"""Characters of a called name beyond which the call is refused unread (256)."""
DEFAULT_MAX_ARGUMENTS_LENGTH: Final = 1_000_000
"""Characters of a call's argument text beyond which the call is refused unread."""
DEFAULT_MAX_RESULT_CHARS: Final = 20_000
"""Characters of a tool's text the model reads; a longer one is cut there, with a note.

Characters (Unicode code points, Python's ``len``) rather than tokens: exact and free to count
on every call, and the same for every model, where tokens depend on the model's tokenizer.
20,000 characters are about 4,700 tokens of English prose, 7,300 of JSON and 22,000 of
Chinese (``cl100k_base``).
"""


_PARAMETERS = (
    "resolver",
    "exception_processor",
    "max_concurrency",
    "default_timeout",
    "limits",
    "unknown_tool",
    "invalid_arguments",
    "allow_unoffered_tools",
    "max_name_length",
    "max_arguments_length",
    "sync_workers",
    "max_result_chars",
)  # the manager's own keyword arguments, suggested when a guard option is misspelt


class _Default(enum.Enum):
    """Marks an option left out, which differs from one given as ``None``."""

    TIMEOUT = enum.auto()


Unavailable = Callable[[str], str]
"""The answer to a called name none of the caller's tools answers to, given that name."""

_FORWARDED_ARGUMENTS = "arguments"  # the parameter of a forwarding call with the named tool's


@dataclass(frozen=True, kw_only=True)
class _Ready:
    """A call that passed resolution, limits, the context check and argument validation.

    ``call`` is what the pipeline sees (a forwarded call's: the named tool's call, under the
    model's id); ``written`` the model's call as the history keeps it, which is answered.
    """

    call: ToolCall
    written: ToolCall
    tool: Tool
    arguments: ValidatedArguments
    decision: ApprovalDecision | None = None


@dataclass(frozen=True, kw_only=True)
class _Forwarding:
    """A call of a forwarding tool, resolved once the tool it names is known."""

    call: ToolCall
    written: ToolCall
    tool: ForwardingTool


def _decided(ready: _Ready, resumed: ResumedRound) -> _Ready:
    """``ready`` carrying the person's decision about it, if the resumed round has one."""
    decision = resumed.decision_for(ready.written, ready.tool.definition.name)
    return ready if decision is None else dataclasses.replace(ready, decision=decision)


class _CallWorkers:
    """The pool as one call sees it: remembers the job of the call's synchronous body.

    The body takes a thread of its tool's share (``ToolMetadata.thread_share``, else the
    pool's ``tool_share``).
    """

    __slots__ = ("job", "pool", "share", "tool")

    def __init__(self, pool: WorkerPool, tool: str, share: int | None) -> None:
        self.pool = pool
        self.tool = tool
        self.share = share
        self.job: WorkerJob[Any] | None = None

    async def run(self, fn: Callable[[], T], /) -> T:
        job = self.pool.submit(fn, tool=self.tool, share=self.share)
        self.job = job
        return await job.wait()

    def refused(self, exc: BaseException) -> bool:
        """Whether ``exc`` is the pool refusing the call's body a thread (it never ran)."""
        return self.job is not None and exc is self.job.refused

    def body_started(self) -> bool:
        """Whether the body began (an ``async`` body has, once the tool was called)."""
        return self.job is None or self.job.started


class ToolCallingManager:
    """Executes the tool calls of one model response.

    Args:
        resolver: Finds tools by name (Spring AI's ``ToolCallbackResolver``): those named by
            ``ChatOptions.tool_names``, and, with ``allow_unoffered_tools``, any tool a call
            names; ``None`` means none.
        exception_processor: Turns a tool's exception into feedback or raises; defaults to
            :class:`~toolrelay.execution.DefaultToolExceptionProcessor`.
        max_concurrency: How many tools of one round may run at the same time.
        default_timeout: Seconds a tool may run when its metadata sets no ``timeout``
            (:data:`DEFAULT_TIMEOUT`, 120 s, when left out); ``None`` means no limit. A
            timed-out ``async`` tool is cancelled; a synchronous function already running in
            its thread cannot be stopped and finishes in the background (its thread counts
            as stuck until then).
        limits: Per-turn call limits.
        unknown_tool: ``"feedback"`` answers a call to an unknown name with an error
            response; ``"raise"`` raises :class:`~toolrelay.exceptions.ToolNotFoundError`.
        invalid_arguments: ``"feedback"`` answers unusable arguments with an error response;
            ``"raise"`` raises :class:`~toolrelay.exceptions.ToolArgumentError`.
        guards: The guard options, as every door takes them
            (:class:`~toolrelay.execution.GuardOptions`: ``approval=``, ``idempotency=``,
            ``audit=``, ``authorize=``, ``interceptors=``). The pipeline is, outermost
            first: ``authorize``, ``audit``, ``interceptors``, idempotency, ``approval``,
            then the tool. A tool that requires
            approval never runs without ``approval=`` (it is refused as feedback, logged as an
            error; a client refuses to build over it, see ``check_tools``); idempotency keys
            are honoured with the process's in-memory store unless ``idempotency=`` names
            another.
        allow_unoffered_tools: Also run tools the request did not offer, when the resolver
            knows the name a call gives. By default a call can only run a tool of the
            request (``ChatOptions.tools`` and ``tool_names``): a model cannot reach a tool
            it was never shown by guessing its name.
        max_name_length: Characters of a called name beyond which the call is answered as an
            unknown tool without being looked up (:data:`DEFAULT_MAX_NAME_LENGTH`).
        max_arguments_length: Characters of a call's argument text beyond which the call is
            answered as invalid without being parsed (:data:`DEFAULT_MAX_ARGUMENTS_LENGTH`).
        sync_workers: The threads synchronous function tools run in; the process-wide pool
            (:func:`~toolrelay.tools._workers.sync_tool_workers`) by default.
        max_result_chars: Characters of a tool's text (its result, or its error text) the
            model reads, for tools whose metadata sets no ``max_result_chars``
            (:data:`DEFAULT_MAX_RESULT_CHARS`, 20,000); ``None`` means no bound. A longer text
            is cut there (never inside a surrogate pair), followed by a note saying how much
            was shown of how much and what to do; the outcome keeps the whole text
            (``ToolCallOutcome.full_result``).

    Raises:
        ConfigurationError: An option is out of range (a timeout that is not a finite number
            of seconds above 0, a limit below 1), a guard option is unknown or of the wrong
            kind, or a built-in step is among ``interceptors`` (it has its own option).
    """

    def __init__(
        self,
        *,
        resolver: ToolResolver | None = None,
        exception_processor: ToolExceptionProcessor | None = None,
        max_concurrency: int = 8,
        default_timeout: float | _Default | None = _Default.TIMEOUT,
        limits: CallLimits = CallLimits(),  # noqa: B008 - frozen, so sharing it is safe
        unknown_tool: Policy = "feedback",
        invalid_arguments: Policy = "feedback",
        allow_unoffered_tools: bool = False,
        max_name_length: int = DEFAULT_MAX_NAME_LENGTH,
        max_arguments_length: int = DEFAULT_MAX_ARGUMENTS_LENGTH,
        sync_workers: WorkerPool | None = None,
        max_result_chars: int | None = DEFAULT_MAX_RESULT_CHARS,
        **guards: Unpack[GuardOptions],
    ) -> None:
        check_guard_options(guards, owner="ToolCallingManager", parameters=_PARAMETERS)
        for option, limit in (
            ("max_concurrency", max_concurrency),
            ("max_name_length", max_name_length),
            ("max_arguments_length", max_arguments_length),
        ):
            if isinstance(limit, bool) or not isinstance(limit, int) or limit < 1:
                raise ConfigurationError(f"{option} must be an integer >= 1, not {limit!r}")
        if isinstance(default_timeout, _Default):
            default_timeout = DEFAULT_TIMEOUT
        check_seconds("default_timeout", default_timeout)
        check_result_chars("max_result_chars", max_result_chars, unbounded="None means no bound")
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
        self.guards = Guards(**guards)
        self.allow_unoffered_tools = allow_unoffered_tools
        self.max_name_length = max_name_length
        self.max_arguments_length = max_arguments_length
        self.sync_workers = sync_workers if sync_workers is not None else sync_tool_workers()
        self.max_result_chars = max_result_chars

    def check_tools(self, tools: Iterable[Tool], *, owner: str) -> None:
        """Refuse to build over a tool that requires approval where none is configured.

        Args:
            tools: The tools known now (a live catalog's later tools are refused per call).
            owner: Where the fix goes, for the message (``"ChatClient"``...).

        Raises:
            ConfigurationError: Naming the tools and the one-line fix.
        """
        self.guards.check_tools(tools, owner=owner)

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
        self,
        prompt: Prompt,
        chat_response: ChatResponse,
        *,
        interceptors: Sequence[ToolCallInterceptor] = (),
        resumed: ResumedRound | None = None,
        unavailable: Unavailable | None = None,
    ) -> ToolExecutionResult:
        """Run the tool calls of ``chat_response`` and answer each of them.

        Args:
            prompt: The request that produced ``chat_response``; its options carry the tools
                and the tool context, its messages start the new history.
            chat_response: The model's answer; the first generation with tool calls is used.
            interceptors: Extra interceptors for this round only. They run outside the
                manager's pipeline (before it), so a call the round refuses never reaches
                an idempotency store, an approver or an audit sink of the manager.
            resumed: The round that stopped for approval, run again: its answered calls keep
                their answers (none runs twice) and each pending call carries the person's
                decision (``ToolInvocation.decision``) to the approval interceptor.
            unavailable: The answer to a name none of the request's tools answers to (tool
                search's "not available" text), given the name as the model wrote it;
                calls then resolve among the request's tools only, never through the
                resolver. ``None``: the manager's unknown-tool feedback.

        Returns:
            The new history (prompt messages, the assistant message with every call
            well-formed, one tool response message answering every call in order),
            ``return_direct`` and one outcome per call.

        Raises:
            ModelResponseError: No generation has tool calls.
            ConfigurationError: ``resumed`` is not a round of these calls.
            ToolNotFoundError: A name is unknown and ``unknown_tool="raise"``.
            ToolArgumentError: Arguments are unusable and ``invalid_arguments="raise"``.
            ToolContextError: A tool needs what the request's tool context lacks (a mistake
                of the calling code, never the model's).
            ToolCallLimitError: A limit was breached and ``limits.on_breach="raise"``; the
                calls within the limits still ran and ``partial`` holds the round's result.
            ToolExecutionError: The exception processor wraps a tool's exception.
            Exception: What an interceptor raises, or a tool exception the processor
                re-raises; ``KeyboardInterrupt``, ``asyncio.CancelledError`` and
                ``MemoryError`` always propagate. The round's other running calls are
                cancelled first.
        """
        generation = _tool_call_generation(chat_response)
        assistant = generation.message
        calls = assistant.tool_calls
        if resumed is not None and not resumed.matches(calls):
            raise ConfigurationError(
                "resumed= holds another round's calls; pass the response that stopped for "
                "approval together with the round saved from it"
            )
        counter = TurnCallCounter(self.limits, prompt.messages)
        breaches: list[LimitBreach] = []
        outcomes, ready = await self._round(
            calls,
            self._offered(prompt.options),
            ToolContext(prompt.options.tool_context),
            counter,
            breaches,
            interceptors,
            resumed,
            unavailable,
        )
        return_direct = all(o.ok for o in outcomes) and all(
            r.tool.metadata.return_direct for r in ready
        )
        for outcome, call in zip(outcomes, calls, strict=True):
            if outcome.call is not call:  # a name or arguments that were not text
                written = tuple(o.call for o in outcomes)
                assistant = dataclasses.replace(assistant, tool_calls=written)
                break
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
        self,
        prompt: Prompt,
        chat_response: ChatResponse,
        *,
        interceptors: Sequence[ToolCallInterceptor] = (),
        resumed: ResumedRound | None = None,
        unavailable: Unavailable | None = None,
    ) -> ToolExecutionResult:
        """Blocking :meth:`execute_tool_calls` (works inside a running event loop too)."""
        return run_sync(
            self.execute_tool_calls(
                prompt,
                chat_response,
                interceptors=interceptors,
                resumed=resumed,
                unavailable=unavailable,
            )
        )

    async def run_call(
        self,
        call: ToolCall,
        tools: Sequence[Tool],
        context: ToolContext | None = None,
        *,
        interceptors: Sequence[ToolCallInterceptor] = (),
        unavailable: Unavailable | None = None,
    ) -> ToolCallOutcome:
        """Run one call outside a conversation: the same path as every call of a round.

        For a caller that has a call but no model response (the MCP gateway and servers,
        the bridges, converted tools); there is no history to count limits over.

        Args:
            call: The call; its arguments as the model or the protocol gave them (JSON
                text, a mapping, ``None``).
            tools: The tools it may run (the resolver's too, with ``allow_unoffered_tools``
                and no ``unavailable``).
            context: The caller's tool context; empty when ``None``.
            interceptors: Extra interceptors for this call, outside the manager's own.
            unavailable: As for :meth:`execute_tool_calls`.

        Returns:
            The call's outcome.

        Raises:
            ToolNotFoundError, ToolArgumentError, ToolContextError, ToolExecutionError,
            Exception: As for :meth:`execute_tool_calls`.
        """
        counter = TurnCallCounter(self.limits, ())
        outcomes, _ = await self._round(
            (call,),
            tools,
            context if context is not None else ToolContext(),
            counter,
            [],
            interceptors,
            None,
            unavailable,
        )
        return outcomes[0]

    async def _round(
        self,
        calls: Sequence[ToolCall],
        offered: Sequence[Tool],
        context: ToolContext,
        counter: TurnCallCounter,
        breaches: list[LimitBreach],
        round_steps: Sequence[ToolCallInterceptor],
        resumed: ResumedRound | None,
        unavailable: Unavailable | None,
    ) -> tuple[tuple[ToolCallOutcome, ...], list[_Ready]]:
        """Answer ``calls``: one outcome each, in order, and the calls that were run."""
        resolver = self.resolver if self.allow_unoffered_tools and unavailable is None else None
        lookup = ToolLookup(offered, resolver)
        slots: list[ToolCallOutcome | _Ready] = []
        for call in calls:
            slot = self._prepare(call, lookup, counter, breaches, context, unavailable)
            if type(slot) is _Forwarding:
                slot = await self._forwarded(slot, counter, breaches, context)
            slots.append(slot)  # type: ignore[arg-type]
        if resumed is not None:
            # A resumed round keeps the answers its calls got before it waited for approval,
            # and hands each waiting call the person's decision.
            slots = [
                (resumed.answer_of(i) or _decided(s, resumed)) if isinstance(s, _Ready) else s
                for i, s in enumerate(slots)
            ]
        ready = [slot for slot in slots if isinstance(slot, _Ready)]
        # A round no larger than the bound never waits, so it skips the semaphore's cost.
        semaphore: _Bound = (
            asyncio.Semaphore(self.max_concurrency)
            if len(ready) > self.max_concurrency
            else contextlib.nullcontext()
        )
        executed = iter(
            await run_all([self._job(r, round_steps, context, semaphore) for r in ready])
        )
        outcomes = tuple(s if isinstance(s, ToolCallOutcome) else next(executed) for s in slots)
        return outcomes, ready

    # --- steps ------------------------------------------------------------------------------

    def _offered(self, options: ChatOptions) -> Sequence[Tool]:
        """The tools the request offers: ``options.tools``, then ``options.tool_names``."""
        if not options.tool_names:
            return options.tools
        tools = list(options.tools)
        for name in options.tool_names:
            found = self.resolver.resolve(name)
            if found is not None:
                tools.append(found)
        return tools

    def _prepare(
        self,
        call: ToolCall,
        lookup: ToolLookup,
        counter: TurnCallCounter,
        breaches: list[LimitBreach],
        context: ToolContext,
        unavailable: Unavailable | None,
    ) -> ToolCallOutcome | _Ready | _Forwarding:
        """Resolve, count, check, read and validate one call; an outcome when it cannot run.

        A call of a forwarding tool comes back as :class:`_Forwarding`: the tool it names is
        resolved (``_forwarded``, which may wait) before the call is made ready.
        """
        name = call.name
        written = call if type(name) is str and type(call.arguments) is str else _well_formed(call)
        if not isinstance(name, str):  # a provider's null, a hand-built call's mistake
            text = feedback.name_not_text(json_kind(name))
            return self._unknown(written, repr(name), counter, text)
        if len(name) > self.max_name_length:
            text = feedback.name_too_long(len(name), self.max_name_length)
            return self._unknown(written, name, counter, text)
        tool = lookup.find(name)
        if tool is None:
            if unavailable is not None:
                text = unavailable(name)
            else:
                names = lookup.names()
                text = feedback.unknown_tool(name, lookup.suggestions(name), any_tools=bool(names))
            _log.debug("unknown tool %r in call %r", name, call.id)
            return self._unknown(written, name, counter, text, lookup.suggestions)
        if isinstance(tool, ForwardingTool):
            return _Forwarding(call=call, written=written, tool=tool)
        return self._ready(call, written, tool, call.arguments, counter, breaches, context)

    def _ready(
        self,
        call: ToolCall,
        written: ToolCall,
        tool: Tool,
        raw: object,
        counter: TurnCallCounter,
        breaches: list[LimitBreach],
        context: ToolContext,
        *,
        forwarded: bool = False,
    ) -> ToolCallOutcome | _Ready:
        """Count, check, read and validate a call of ``tool`` with the arguments ``raw``.

        ``call`` is what the pipeline sees: the model's, or for a ``forwarded`` one the call of
        the tool it names under the model's id.
        """
        name = tool.definition.name
        breach = counter.admit(name)
        if breach is not None:
            breaches.append(breach)
            return _answer(written, name, breach.message, ToolCallStatus.LIMIT)
        metadata = tool.metadata
        # What a function's required ToolContext parameter needs, the function checks itself.
        if metadata.context_keys or metadata.idempotency_key is not None:
            check_tool_context(tool, context)
        try:
            parsed = parse_arguments(name, raw, max_length=self.max_arguments_length)
            arguments = validate_call_arguments(tool, parsed.values, parsed.text)
        except ToolArgumentError as exc:
            if self.invalid_arguments == "raise":
                raise
            text = feedback.invalid_arguments(name, exc.problems)
            return _answer(written, name, text, ToolCallStatus.INVALID_ARGUMENTS, exception=exc)
        except Exception as exc:  # the tool's own validation is broken: the tool failed
            _log.warning("tool %r failed to validate its arguments", name, exc_info=exc)
            text = tool_error_text(self.exception_processor, name, exc)
            return _answer(written, name, text, ToolCallStatus.ERROR, exception=exc)
        if forwarded:
            call = ToolCall(id=call.id, name=name, arguments=parsed.text)
        return _Ready(call=call, written=written, tool=tool, arguments=arguments)

    def _unknown(
        self,
        written: ToolCall,
        name: str,
        counter: TurnCallCounter,
        text: str,
        suggest: Callable[[str], list[str]] | None = None,
    ) -> ToolCallOutcome:
        """The answer to a call no tool the caller may use answers to."""
        counter.admit(name, resolved=False)
        if self.unknown_tool == "raise":
            raise ToolNotFoundError(name, suggest(name) if suggest is not None else ())
        return _answer(written, None, text, ToolCallStatus.UNKNOWN_TOOL)

    async def _forwarded(
        self,
        forwarding: _Forwarding,
        counter: TurnCallCounter,
        breaches: list[LimitBreach],
        context: ToolContext,
    ) -> ToolCallOutcome | _Ready:
        """The call of the tool a forwarding call names, made ready; or the answer why not."""
        tool, written = forwarding.tool, forwarding.written
        own = tool.definition.name
        try:
            named, raw = _forwarding_parts(
                own,
                # The wrapper is one level more than the named tool's arguments it carries.
                parse_arguments(
                    own,
                    forwarding.call.arguments,
                    max_length=self.max_arguments_length,
                    max_depth=MAX_ARGUMENTS_DEPTH + 1,
                ),
            )
        except ToolArgumentError as exc:
            counter.admit(own)
            if self.invalid_arguments == "raise":
                raise
            text = feedback.invalid_arguments(own, exc.problems)
            return _answer(written, own, text, ToolCallStatus.INVALID_ARGUMENTS, exception=exc)
        target = await tool.forward(named, context)
        if isinstance(target, str | ForwardingTool):
            text = target if isinstance(target, str) else feedback.unknown_tool(named, ())
            return self._unknown(written, named, counter, text)
        return self._ready(
            forwarding.call, written, target, raw, counter, breaches, context, forwarded=True
        )

    def _job(
        self,
        ready: _Ready,
        round_steps: Sequence[ToolCallInterceptor],
        context: ToolContext,
        sem: _Bound,
    ) -> Callable[[], Awaitable[ToolCallOutcome]]:
        """One call's run through the round's steps and the pipeline, then the tool.

        What the pipeline answers (a result, a replay, a refusal) is then bounded and
        answered under the call as the history keeps it.
        """
        invocation = ToolInvocation(
            call=ready.call,
            tool=ready.tool,
            arguments=ready.arguments,
            context=context,
            decision=ready.decision,
        )
        run = partial(self._run, semaphore=sem)
        steps = self.guards.steps(ready.tool)
        pipeline = (*round_steps, *steps) if round_steps else steps
        if not pipeline and ready.call is ready.written:
            return partial(run, invocation)  # no frame of the pipeline's under the tool
        return partial(self._answered, ready, pipeline, invocation, run)

    async def _answered(
        self,
        ready: _Ready,
        pipeline: Sequence[ToolCallInterceptor],
        invocation: ToolInvocation,
        run: Callable[[ToolInvocation], Awaitable[ToolCallOutcome]],
    ) -> ToolCallOutcome:
        """The pipeline's outcome, bounded and answered under the call the history keeps.

        The tool's own text is bounded where it ran (``_run``); what a step answered without
        running it (a replayed result) is bounded here, the same way.
        """
        if pipeline:
            outcome = await run_interceptors(pipeline, invocation, run)
        else:
            outcome = await run(invocation)
        if outcome.call is not ready.written:  # a forwarded call: the model's call of it
            outcome = dataclasses.replace(outcome, call=ready.written)
        if outcome.full_result is None and outcome.status in _BOUNDED:
            outcome = self._bounded(outcome, ready.tool)
        return outcome

    def _bound(self, metadata: ToolMetadata) -> int | None:
        """The characters of a tool's text the model reads; ``None``: whole."""
        if metadata.extra.get(META_TOOL):
            return None  # the library's own tools fit their answers to the bound, whole
        limit = metadata.max_result_chars
        return self.max_result_chars if limit is None else limit

    def _bounded(self, outcome: ToolCallOutcome, tool: Tool) -> ToolCallOutcome:
        """``outcome`` with its text cut to ``tool``'s bound, and a note, when longer."""
        limit = self._bound(tool.metadata)
        text = outcome.response.data
        if limit is None or len(text) <= limit:
            return outcome
        cut = _cut(text, limit, ok=outcome.ok, keyed=tool.metadata.idempotency_key is not None)
        return dataclasses.replace(
            outcome, response=dataclasses.replace(outcome.response, data=cut), full_result=text
        )

    async def _run(self, invocation: ToolInvocation, semaphore: _Bound) -> ToolCallOutcome:
        """Run the tool, bounded by the concurrency limit and its timeout."""
        call, tool = invocation.call, invocation.tool
        name = tool.definition.name
        metadata = tool.metadata
        timeout = metadata.timeout
        if timeout is None:
            timeout = self.default_timeout
        workers = _CallWorkers(self.sync_workers, name, metadata.thread_share)
        progress = invocation.progress
        error: Exception | None = None
        unknown, late = False, None
        if progress.confirm is not None and not await progress.confirm():
            # Another owner took the reservation over while this call waited (an approval):
            # it runs there, never twice.
            return _answer(call, name, feedback.taken_over(name), ToolCallStatus.ERROR)
        async with semaphore:
            started = perf_counter()
            try:
                # The timeout is inlined rather than a helper coroutine: every frame here sits
                # under every tool call (see benchmarks/shape.py). Without one, no scope: it
                # would cost a tenth of a cheap call's whole run.
                if timeout is None:
                    value = await _body(invocation, workers)
                else:
                    scope = asyncio.timeout(timeout)
                    try:
                        async with scope:
                            value = await _body(invocation, workers)
                    except TimeoutError:
                        if not scope.expired():
                            raise  # the tool's own TimeoutError, e.g. from an HTTP client
                        value = _TIMED_OUT
                progress.ended = progress.returned = value is not _TIMED_OUT
            except ToolArgumentError as exc:  # a tool that checks more than its schema says
                progress.ended = True
                if self.invalid_arguments == "raise":
                    raise
                text = feedback.invalid_arguments(name, exc.problems)
                status, error = ToolCallStatus.INVALID_ARGUMENTS, exc
            except ToolContextError:
                progress.ended = True  # refused before doing anything
                raise  # the developer's mistake, never the model's
            except ToolResultError as exc:
                progress.ended = progress.returned = True  # it did its work
                cause = exc.__cause__ if exc.__cause__ is not None else exc
                _log.warning("tool %r returned a value that is not text", name, exc_info=cause)
                text, status = feedback.unusable_result(name, cause), ToolCallStatus.ERROR
                error = exc
            except (KeyboardInterrupt, MemoryError):
                raise  # the process's to handle
            except BaseException as exc:
                if isinstance(exc, asyncio.CancelledError) and _being_cancelled():
                    raise  # the round is being cancelled from outside: the body did not end
                progress.ended = True
                status = ToolCallStatus.ERROR
                if isinstance(exc, WorkerPoolBusy) and workers.refused(exc):
                    # no thread for it until a stuck call returns: refused, never run
                    text, error = feedback.tool_busy(name, exc), exc
                    _log.warning("tool %r got no thread: %s", name, exc)
                else:
                    error = exc if isinstance(exc, Exception) else _wrapped(name, exc)
                    text = tool_error_text(self.exception_processor, name, error)
                    _log.warning(
                        "tool %r raised; the model gets an error response", name, exc_info=exc
                    )
            else:
                if value is _TIMED_OUT:
                    assert timeout is not None  # only a timeout produces the marker
                    status = ToolCallStatus.TIMEOUT
                    text, unknown, late = self._timed_out(name, timeout, workers)
                else:
                    try:
                        text, status = _as_text(value), ToolCallStatus.OK
                    except Exception as exc:
                        _log.warning(
                            "tool %r returned a value that is not text", name, exc_info=exc
                        )
                        text, status = feedback.unusable_result(name, exc), ToolCallStatus.ERROR
                        error = exc
            finally:
                progress.started = workers.body_started()
            elapsed_ms = (perf_counter() - started) * 1000.0
        full = None
        if status in _BOUNDED:
            limit = self._bound(metadata)
            if limit is not None and len(text) > limit:
                full = text
                keyed = metadata.idempotency_key is not None
                text = _cut(text, limit, ok=status is ToolCallStatus.OK, keyed=keyed)
        return _answer(
            call,
            name,
            text,
            status,
            duration_ms=elapsed_ms,
            exception=error,
            result_unknown=unknown,
            late_result=late,
            full_result=full,
        )

    def _timed_out(
        self, name: str, seconds: float, workers: _CallWorkers
    ) -> tuple[str, bool, concurrent.futures.Future[str] | None]:
        """The timeout's text, whether the result is unknown, and the body still running."""
        job = workers.job
        if job is None:  # an async body, cancelled part-way
            return feedback.timed_out(name, seconds), True, None
        if not job.started:  # it waited for a thread all along and will never run
            pool = self.sync_workers
            text = feedback.timed_out_waiting(
                name, seconds, pool.status(), pool.tool_status(name, share=workers.share)
            )
            return text, False, None
        return feedback.timed_out_running(name, seconds), True, job.future


# --- helpers ---------------------------------------------------------------------------------


def configured_manager(
    manager: ToolCallingManager | None, *, owner: str, **guards: Unpack[GuardOptions]
) -> ToolCallingManager:
    """``manager``, or one built from the guard options: what a client, gateway or bridge runs.

    Raises:
        ConfigurationError: Both are given, so the options would be ignored; or a guard
            option is unknown or of the wrong kind.
    """
    check_guard_options(guards, owner=owner, parameters=("tool_calling_manager",))
    if manager is None:
        return ToolCallingManager(**guards)
    given = given_guards(guards)
    if given:
        raise ConfigurationError(
            f"{', '.join(given)} build the {owner}'s manager, but tool_calling_manager= gives "
            "one already, so they would be ignored: give them to that ToolCallingManager(...) "
            "instead, or drop tool_calling_manager="
        )
    return manager


def _forwarding_parts(tool_name: str, parsed: ParsedArguments) -> tuple[str, object]:
    """The name a forwarding call gives and the arguments it gives for that tool, as given.

    Raises:
        ToolArgumentError: The name is missing or not text, or another parameter is given.
    """
    values = parsed.values
    named = values.get(FORWARDED_NAME)
    extra = sorted(set(values) - {FORWARDED_NAME, _FORWARDED_ARGUMENTS})
    problems = [ArgumentProblem(location=key, message=feedback.EXTRA_ARGUMENT) for key in extra]
    if not isinstance(named, str):
        # As pydantic words it: a name left out is required, a null one is not a string.
        message = (
            "Field required" if FORWARDED_NAME not in values else "Input should be a valid string"
        )
        problems.insert(0, ArgumentProblem(location=FORWARDED_NAME, message=message, input=named))
    if problems:
        raise ToolArgumentError(tool_name, problems)
    assert isinstance(named, str)
    return named, values.get(_FORWARDED_ARGUMENTS)


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
    result_unknown: bool = False,
    late_result: concurrent.futures.Future[str] | None = None,
    full_result: str | None = None,
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
        result_unknown=result_unknown,
        late_result=late_result,
        full_result=full_result,
    )


# The texts a tool produced (its result, its exception's text), which the bound applies to;
# the manager's own feedback is short already.
_BOUNDED: Final = frozenset({ToolCallStatus.OK, ToolCallStatus.ERROR})


def _cut(text: str, limit: int, *, ok: bool, keyed: bool) -> str:
    """The first ``limit`` characters of ``text`` (never half a surrogate pair), and the note.

    A keyed tool's result is its operation's record: asking again with other arguments would
    reuse its key, so its note never advises that.
    """
    end = limit
    if "\ud800" <= text[end - 1] <= "\udbff" and "\udc00" <= text[end] <= "\udfff":
        end -= 1  # a pair of surrogates stands for one character: keep both or neither
    if not ok:
        return text[:end] + feedback.error_cut(end, len(text))
    note = feedback.keyed_result_cut if keyed else feedback.result_cut
    return text[:end] + note(end, len(text))


def _well_formed(call: ToolCall) -> ToolCall:
    """``call`` as the history keeps it: a name that is text, arguments that are text.

    A provider's ``null`` name is ``""``; arguments that came as ``None`` are blank, a mapping
    its JSON text (``{}`` when it has none), anything else ``{}``. The answer to the call says
    what came; what an adapter re-sends can always be sent.
    """
    name, arguments = call.name, call.arguments
    if type(name) is str and type(arguments) is str:
        return call
    text: str
    if isinstance(arguments, str):
        text = str.__str__(arguments)
    elif arguments is None:
        text = ""
    else:
        try:
            text = parse_arguments("", arguments).text
        except ToolArgumentError:
            text = "{}"
    return ToolCall(id=call.id, name=name if isinstance(name, str) else "", arguments=text)


def _body(invocation: ToolInvocation, workers: _CallWorkers) -> Awaitable[object]:
    """The tool's run, not started: with its validated arguments when it takes them."""
    tool, arguments, context = invocation.tool, invocation.arguments, invocation.context
    if validates_itself(tool):
        return tool.call_validated(arguments, context, workers=workers)  # type: ignore[attr-defined,no-any-return]
    return tool.call(arguments.text, context)


def _being_cancelled() -> bool:
    task = asyncio.current_task()
    return task is not None and task.cancelling() > 0


def _wrapped(tool_name: str, exc: BaseException) -> ToolExecutionError:
    """A ``SystemExit`` or another non-``Exception`` a tool raised, as an ordinary error."""
    wrapper = ToolExecutionError(tool_name, error_text(tool_name, exc))
    wrapper.__cause__ = exc
    return wrapper


def _as_text(value: object) -> str:
    """A tool's return value as text; ``None`` (a tool that returned nothing) is ``""``.

    Raises:
        Exception: The value cannot be turned into text (its ``__str__`` raises).
    """
    if type(value) is str:
        return value
    if value is None:
        return ""
    if isinstance(value, str):
        return str.__str__(value)  # a str subclass: its own methods may misbehave
    try:
        return json.dumps(value, ensure_ascii=False, default=str)
    except (TypeError, ValueError):
        return str(value)
