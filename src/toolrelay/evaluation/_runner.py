"""Running a suite: every task, in every mode, some number of times, through the real client.

Each run gets a fresh environment (tools bound to a back end of their own) and its own
client, built as an application builds one: a :class:`~toolrelay.client.ChatClient` over
the model, a :class:`~toolrelay.client.MessageChatMemoryAdvisor` (an in-memory window large
enough that no run's history is cut), and the mode's loop advisor:

- ``all-tools``: a :class:`~toolrelay.client.ToolCallingAdvisor`; every request carries the
  whole catalog;
- ``search:INDEX``: a :class:`~toolrelay.client.ToolSearchAdvisor` over the catalog with that
  index (built once per environment and shared by the runs, as one index serves every
  conversation of an application) on the mode's channel (``auto`` by default), with its
  defaults: the model starts with ``tool_search`` and the best hits of a search with the
  task's prompt (the reveal), or with every tool of a catalog too small to search.

Only the model and the mode vary. What a run did is read from the loop's own records (the
tool rounds), a thin wrapper around the model (each request and its answer), and the
environment's back end afterwards; its checks then decide success. What a request showed is
read on any channel (``toolrelay.client._shown``): its tool list, the tools its tool changes
add, the definitions search answers in its history gave.

Runs go in rounds of repeats, each round task by task and mode by mode, so an interrupted
evaluation leaves the modes compared on the same tasks. ``concurrency`` runs that many at
once (for remote models; a local model answers one request at a time anyway).
"""

from __future__ import annotations

import asyncio
import json
import time
from collections.abc import AsyncIterator, Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from toolrelay.client import (
    ChatClient,
    ChatClientRequest,
    ChatClientResponse,
    MessageChatMemoryAdvisor,
    ToolCallingAdvisor,
    ToolLoopState,
    ToolSearchAdvisor,
)
from toolrelay.client._shown import carried_definitions, shown_tools
from toolrelay.client._tool_search import Channel
from toolrelay.evaluation._checks import CallRecord, CallStatus, CheckResult, RunTrace
from toolrelay.evaluation._suite import Task, TaskEnvironment, TaskSuite
from toolrelay.exceptions import (
    AuthenticationError,
    ConfigurationError,
    ModelAPIError,
    ModelCallLimitError,
    ModelConnectionError,
    ModelError,
    RateLimitError,
    ToolCallLimitError,
    ToolRelayError,
    ToolsNotSupportedError,
)
from toolrelay.execution import (
    ApprovalInterceptor,
    ToolCallOutcome,
    ToolCallStatus,
    ToolExecutionResult,
)
from toolrelay.execution._resolution import match_tool_name
from toolrelay.memory import InMemoryChatMemoryRepository, MessageWindowChatMemory
from toolrelay.messages import ChatResponse
from toolrelay.models import ChatModel, ToolChannel
from toolrelay.models._base import cache_shortfall, model_name, tool_channels
from toolrelay.models._metadata import CACHE_READ_TOKENS, CACHE_WRITE_TOKENS
from toolrelay.models._openai_wire import messages_to_openai
from toolrelay.prompt import ChatOptions, Prompt
from toolrelay.search import ToolIndex, default_index
from toolrelay.tools import Tool, ToolDefinition, as_tools
from toolrelay.tools._arguments import decode_arguments
from toolrelay.tools._tokens import count_tokens, tool_payload
from toolrelay.toolsearch import TOOL_SEARCH_NAME
from toolrelay.toolsearch._texts import CALL_TOOL_NAME

__all__ = [
    "ALL_TOOLS",
    "DEFAULT_MAX_REQUESTS",
    "Mode",
    "RunKey",
    "RunResult",
    "TaskRunner",
    "Unrecorded",
]

ALL_TOOLS = "all-tools"
"""The name of the mode that offers every catalog tool on every request."""

DEFAULT_MAX_REQUESTS = 20
"""Model requests per run before the run counts as failed (a model that never stops)."""

_FINISHED = ("answer", "return_direct")  # the turn ended with an answer for the user
_MEMORY_WINDOW = 1_000  # messages: far more than any run's turn, so memory never cuts it
_ERROR_SHOWN = 300


@dataclass(frozen=True, kw_only=True)
class Mode:
    """How the catalog reaches the model.

    Attributes:
        name: ``"all-tools"``, or ``"search:KIND"`` (``"search:KIND/CHANNEL"`` on a channel
            other than ``auto``; the results are keyed by it).
        index: Makes the index of a tool search mode; ``None`` for all tools.
        channel: How a tool search mode's found tools reach the model (see
            :data:`~toolrelay.client.Channel`).
    """

    name: str
    index: Callable[[], ToolIndex] | None = None
    channel: Channel = "auto"

    @classmethod
    def all_tools(cls) -> Mode:
        """Every catalog tool on every request."""
        return cls(name=ALL_TOOLS)

    @classmethod
    def search(
        cls,
        index: Callable[[], ToolIndex] = default_index,
        name: str | None = None,
        *,
        channel: Channel = "auto",
    ) -> Mode:
        """Tool search over indexes ``index()`` makes (the default index when omitted).

        The name is ``search:`` and the index's kind (``search:bm25``), then ``/`` and the
        channel unless it is ``auto`` (``search:bm25/proxy``), unless given.
        """
        if name is None:
            name = f"search:{index().search_type}"
            if channel != "auto":
                name += f"/{channel}"
        return cls(name=name, index=index, channel=channel)

    @property
    def searches(self) -> bool:
        """Whether the model finds its tools with ``tool_search``."""
        return self.index is not None


@dataclass(frozen=True, kw_only=True, order=True)
class RunKey:
    """One run: a task, a mode, a repeat (from 0)."""

    task: str
    mode: str
    repeat: int


@dataclass(frozen=True, kw_only=True)
class RunResult:
    """What one run did and whether it succeeded.

    Attributes:
        suite: The suite's name.
        model: The model's name.
        task: The task's id.
        mode: The mode's name.
        repeat: The repeat, from 0.
        success: The turn ended with an answer (``stop`` is ``answer`` or ``return_direct``)
            and every check passed.
        checks: Each check's verdict (evaluated also when the run failed, for diagnosis).
        stop: How the turn ended: ``answer``, ``return_direct``, ``tool_call_limit``,
            ``approval_required``, ``request_limit`` (the model was asked ``max_requests``
            times and still called tools) or ``model_error``.
        error: The error that ended the run, if any.
        requests: Model requests made.
        prompt_tokens: Prompt tokens the model reported, summed over the requests.
        completion_tokens: Completion tokens the model reported.
        usage_reported: Whether every answer reported its usage (a model that reports none,
            such as a scripted one, leaves the counted figures as the only ones).
        counted_prompt_tokens: The requests counted with cl100k_base in the OpenAI wire
            format (messages and tools), every request made.
        counted_completion_tokens: The answers counted the same way.
        cache_read_tokens: Prompt tokens the provider served from its prompt cache, summed
            over the answers that reported them (``None``: no answer did; the figures come
            from the adapters' ``cache_read_tokens`` response metadata).
        cache_write_tokens: Prompt tokens the provider wrote to its prompt cache (Anthropic),
            the same way.
        seconds: Wall time of the turn.
        calls: Every tool call but ``tool_search``.
        searches: ``tool_search`` calls.
        needed: The tools the task needs.
        never_shown: Needed tools no request showed the model (retrieval misses).
        answer: The final answer's text.
    """

    suite: str
    model: str
    task: str
    mode: str
    repeat: int
    success: bool
    checks: tuple[CheckResult, ...]
    stop: str
    error: str | None
    requests: int
    prompt_tokens: int
    completion_tokens: int
    usage_reported: bool
    counted_prompt_tokens: int
    counted_completion_tokens: int
    seconds: float
    cache_read_tokens: int | None = None
    cache_write_tokens: int | None = None
    calls: tuple[CallRecord, ...] = ()
    searches: int = 0
    needed: tuple[str, ...] = ()
    never_shown: tuple[str, ...] = ()
    answer: str | None = None

    @property
    def key(self) -> RunKey:
        """The run's key."""
        return RunKey(task=self.task, mode=self.mode, repeat=self.repeat)

    def count(self, status: CallStatus) -> int:
        """Calls that ended with ``status``."""
        return sum(c.status is status for c in self.calls)

    def to_json(self) -> dict[str, Any]:
        """The result as one JSON object (a line of a results file)."""
        return {
            "suite": self.suite,
            "model": self.model,
            "task": self.task,
            "mode": self.mode,
            "repeat": self.repeat,
            "success": self.success,
            "checks": [c.to_json() for c in self.checks],
            "stop": self.stop,
            "error": self.error,
            "requests": self.requests,
            "tokens": {
                "reported": {"prompt": self.prompt_tokens, "completion": self.completion_tokens}
                if self.usage_reported
                else None,
                "counted": {
                    "prompt": self.counted_prompt_tokens,
                    "completion": self.counted_completion_tokens,
                },
                "cache": {"read": self.cache_read_tokens, "write": self.cache_write_tokens},
            },
            "seconds": round(self.seconds, 4),
            "calls": [c.to_json() for c in self.calls],
            "searches": self.searches,
            "needed": list(self.needed),
            "never_shown": list(self.never_shown),
            "answer": self.answer,
        }

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> RunResult:
        """The result :meth:`to_json` wrote.

        Raises:
            KeyError, TypeError, ValueError: ``data`` is not such a result.
        """
        tokens = data["tokens"]
        reported = tokens["reported"]
        cache = tokens.get("cache") or {}
        return cls(
            suite=str(data["suite"]),
            model=str(data["model"]),
            task=str(data["task"]),
            mode=str(data["mode"]),
            repeat=int(data["repeat"]),
            success=bool(data["success"]),
            checks=tuple(CheckResult.from_json(c) for c in data["checks"]),
            stop=str(data["stop"]),
            error=data["error"],
            requests=int(data["requests"]),
            prompt_tokens=int(reported["prompt"]) if reported else 0,
            completion_tokens=int(reported["completion"]) if reported else 0,
            usage_reported=reported is not None,
            counted_prompt_tokens=int(tokens["counted"]["prompt"]),
            counted_completion_tokens=int(tokens["counted"]["completion"]),
            cache_read_tokens=_optional_count(cache.get("read")),
            cache_write_tokens=_optional_count(cache.get("write")),
            seconds=float(data["seconds"]),
            calls=tuple(CallRecord.from_json(c) for c in data["calls"]),
            searches=int(data["searches"]),
            needed=tuple(data["needed"]),
            never_shown=tuple(data["never_shown"]),
            answer=data.get("answer"),
        )


@dataclass(frozen=True, kw_only=True)
class Unrecorded:
    """A run the model's provider could not serve (unreachable, throttled, a server error).

    It is not written to the results, so running the evaluation again retries it.

    Attributes:
        key: The run.
        error: What the provider said.
    """

    key: RunKey
    error: str


IndexBuilder = Callable[[ToolIndex, Sequence[ToolDefinition]], object]
"""Indexes a catalog (``index.index`` by default; the command line shows progress)."""


class TaskRunner:
    """Runs a suite's tasks in several modes, each some number of times.

    Args:
        suite: The tasks.
        model: The model every run asks (shared by the runs).
        modes: The modes to compare; the first is the baseline of the comparisons.
        repeats: Runs per task and mode.
        model_label: Names the model in results (default: the model's name).
        max_requests: Model requests per run before it fails (``request_limit``).
        concurrency: Runs at once.
        options: Chat options of every request (temperature, ``tool_choice``...).

    Raises:
        ConfigurationError: No modes, two modes with one name, counts below 1, or a mode's
            channel the model does not render.
    """

    def __init__(
        self,
        suite: TaskSuite,
        model: ChatModel,
        *,
        modes: Sequence[Mode],
        repeats: int = 1,
        model_label: str | None = None,
        max_requests: int = DEFAULT_MAX_REQUESTS,
        concurrency: int = 1,
        options: ChatOptions | None = None,
    ) -> None:
        if not modes:
            raise ConfigurationError("give at least one mode")
        names = [m.name for m in modes]
        if len(set(names)) != len(names):
            raise ConfigurationError(f"modes must have different names, got {names}")
        declared = tool_channels(model)
        for mode in modes:
            if mode.channel != "auto" and mode.channel not in declared:
                raise ConfigurationError(
                    f"mode {mode.name}: channel {mode.channel!r}, but the model "
                    f"{model_name(model)} renders only {', '.join(map(repr, declared))}: "
                    "choose one of those, or 'auto' for the best of them"
                )
        for label, value in (
            ("repeats", repeats),
            ("max_requests", max_requests),
            ("concurrency", concurrency),
        ):
            if value < 1:
                raise ConfigurationError(f"{label} must be at least 1, not {value}")
        self.suite = suite
        self.model = model
        self.modes = tuple(modes)
        self.repeats = repeats
        self.model_label = model_label or model_name(model).strip("'")
        self.max_requests = max_requests
        self.concurrency = concurrency
        self.options = options
        self._indexes: dict[tuple[str, str], ToolIndex] = {}
        self._tool_tokens: dict[tuple[str, tuple[str, ...]], int] = {}

    @property
    def keys(self) -> list[RunKey]:
        """Every planned run, in the order they go: repeat by repeat, task by task, mode by mode."""
        return [
            RunKey(task=task.id, mode=mode.name, repeat=repeat)
            for repeat in range(self.repeats)
            for task in self.suite.tasks
            for mode in self.modes
        ]

    def prepare(self, build: IndexBuilder | None = None) -> None:
        """Build each search mode's index of each environment, before any run is timed.

        Args:
            build: Indexes a catalog; ``index.index(definitions)`` when omitted.
        """
        for environment in dict.fromkeys(t.environment for t in self.suite.tasks):
            definitions: list[ToolDefinition] | None = None
            for mode in self.modes:
                if mode.index is None or (mode.name, environment) in self._indexes:
                    continue
                if definitions is None:
                    tools = as_tools(self.suite.environments[environment]().tools)
                    definitions = [t.definition for t in tools]
                index = mode.index()
                if build is None:
                    index.index(definitions)
                else:
                    build(index, definitions)
                self._indexes[(mode.name, environment)] = index

    async def run(
        self,
        keys: Sequence[RunKey] | None = None,
        on_result: Callable[[RunResult], None] | None = None,
    ) -> tuple[list[RunResult], list[Unrecorded]]:
        """Run ``keys`` (every planned run by default), ``concurrency`` at a time.

        Args:
            keys: The runs to make, e.g. the planned ones not in a results file yet.
            on_result: Told about each result as it arrives (to append it to a file).

        Returns:
            The results in the order they finished, and the runs the provider could not
            serve.

        Raises:
            AuthenticationError: The provider refused the credentials (every run would).
            ToolsNotSupportedError: The model cannot take tools.
            ConfigurationError: A key names an unknown task or mode.
        """
        modes = {m.name: m for m in self.modes}
        todo = list(self.keys if keys is None else keys)
        tasks = {t.id for t in self.suite.tasks}
        for key in todo:
            if key.mode not in modes:
                raise ConfigurationError(f"no mode {key.mode!r} among {sorted(modes)}")
            if key.task not in tasks:
                raise ConfigurationError(f"suite {self.suite.name!r} has no task {key.task!r}")
        if not todo:
            return [], []
        self.prepare()
        results: list[RunResult] = []
        unrecorded: list[Unrecorded] = []
        queue: asyncio.Queue[RunKey] = asyncio.Queue()
        for key in todo:
            queue.put_nowait(key)

        async def worker() -> None:
            while not queue.empty():
                key = queue.get_nowait()
                try:
                    result = await self._run_one(self.suite.task(key.task), modes[key.mode], key)
                except _ProviderFailure as failure:
                    unrecorded.append(Unrecorded(key=key, error=str(failure)))
                    continue
                results.append(result)
                if on_result is not None:
                    on_result(result)

        try:
            async with asyncio.TaskGroup() as group:
                for _ in range(min(self.concurrency, len(todo))):
                    group.create_task(worker())
        except ExceptionGroup as failed:  # the first failure, as a single run would raise it
            raise failed.exceptions[0] from None
        return results, unrecorded

    # --- one run ----------------------------------------------------------------------------

    async def _run_one(self, task: Task, mode: Mode, key: RunKey) -> RunResult:
        environment = self.suite.environments[task.environment]()
        tools = as_tools(environment.tools)
        definitions = {t.definition.name: t.definition for t in tools}
        meter = _Meter(self.model)
        recorder = _Recorder(catalog=tuple(definitions), searching=mode.searches)
        client = self._client(task, mode, environment, tools, meter, recorder)
        spec = client.prompt(task.prompt).conversation(f"{key.task}|{key.mode}|{key.repeat}")
        if task.tool_context:
            spec = spec.tool_context(task.tool_context)
        answer: str | None = None
        error: str | None = None
        started = time.perf_counter()
        try:
            response = await spec.acall()
        except ModelCallLimitError as exc:
            stop, error = "request_limit", str(exc)
        except (AuthenticationError, ToolsNotSupportedError):
            raise
        except ModelError as exc:
            if _provider_failure(exc):
                raise _ProviderFailure(f"{type(exc).__name__}: {exc}") from exc
            stop, error = "model_error", f"{type(exc).__name__}: {exc}"
        else:
            report = response.tool_loop
            stop = report.stop.value if report is not None else "answer"
            answer = response.content()
        seconds = time.perf_counter() - started
        shown = frozenset(n for p in meter.prompts for n in shown_tools(p) if n in definitions)
        trace = RunTrace(
            task_id=task.id,
            state=environment.state,
            answer=answer,
            calls=tuple(recorder.calls),
            shown=shown,
            definitions=definitions,
            error=error,
        )
        checks = tuple(check(trace) for check in task.checks)
        prompt_tokens, completion_tokens = self._counted(task.environment, meter)
        responses = meter.responses
        return RunResult(
            suite=self.suite.name,
            model=self.model_label,
            task=task.id,
            mode=mode.name,
            repeat=key.repeat,
            success=stop in _FINISHED and all(c.passed for c in checks),
            checks=checks,
            stop=stop,
            error=error,
            requests=len(meter.prompts),
            prompt_tokens=sum(r.usage.prompt_tokens for r in responses),
            completion_tokens=sum(r.usage.completion_tokens for r in responses),
            usage_reported=bool(responses) and all(r.usage.prompt_tokens > 0 for r in responses),
            counted_prompt_tokens=prompt_tokens,
            counted_completion_tokens=completion_tokens,
            cache_read_tokens=_reported_sum(responses, CACHE_READ_TOKENS),
            cache_write_tokens=_reported_sum(responses, CACHE_WRITE_TOKENS),
            seconds=seconds,
            calls=trace.calls,
            searches=recorder.searches,
            needed=task.needed,
            never_shown=tuple(n for n in task.needed if n not in shown),
            answer=answer,
        )

    def _client(
        self,
        task: Task,
        mode: Mode,
        environment: TaskEnvironment,
        tools: Sequence[Tool],
        meter: _Meter,
        recorder: _Recorder,
    ) -> ChatClient:
        memory = MessageChatMemoryAdvisor(
            MessageWindowChatMemory(InMemoryChatMemoryRepository(), max_messages=_MEMORY_WINDOW)
        )
        loop: _RecordingLoop | _RecordingSearch
        if mode.index is None:
            loop = _RecordingLoop(max_model_calls=self.max_requests)
        else:
            loop = _RecordingSearch(
                tools,
                index=self._indexes[(mode.name, task.environment)],
                max_model_calls=self.max_requests,
                channel=mode.channel,
            )
        loop.recorder = recorder
        # The loop runs its rounds with the client's manager, built from the environment's
        # guards: the same in every mode. Nobody approves during a run unless the
        # environment says who does: a call needing approval waits for a person.
        approval = environment.approval
        builder = (
            ChatClient.builder(meter)
            .default_advisors(memory, loop)
            .guards(
                approval=approval if approval is not None else ApprovalInterceptor(),
                interceptors=environment.interceptors,
                authorize=environment.authorize,
            )
        )
        if mode.index is None:
            builder = builder.default_tools(*tools)
        system = task.system if task.system is not None else self.suite.system
        if system:
            builder = builder.default_system(system)
        if self.options is not None:
            builder = builder.default_options(self.options)
        return builder.build()

    def _counted(self, environment: str, meter: _Meter) -> tuple[int, int]:
        """The cl100k_base tokens of every request and answer of a run."""
        prompt_tokens = 0
        for prompt in meter.prompts:
            messages = json.dumps(messages_to_openai(prompt.messages), ensure_ascii=False)
            prompt_tokens += count_tokens(messages) + self._tools_tokens(environment, prompt)
        completion_tokens = 0
        for response in meter.responses:
            generation = response.result
            if generation is not None:
                text = json.dumps(messages_to_openai([generation.message]), ensure_ascii=False)
                completion_tokens += count_tokens(text)
        return prompt_tokens, completion_tokens

    def _tools_tokens(self, environment: str, prompt: Prompt) -> int:
        # The tool list, and the tools a tool change added (the native channel); a search
        # answer's definitions are counted with the messages that hold them.
        carried = carried_definitions(prompt)
        key = (environment, tuple(d.name for d in carried))
        if key not in self._tool_tokens:
            payload = [tool_payload(d) for d in carried]
            self._tool_tokens[key] = (
                count_tokens(json.dumps(payload, ensure_ascii=False)) if payload else 0
            )
        return self._tool_tokens[key]


class _ProviderFailure(Exception):
    """The provider could not serve a request; the run is not recorded."""


def _provider_failure(exc: ModelError) -> bool:
    """Whether ``exc`` says nothing about the model: unreachable, throttled, a server error."""
    if isinstance(exc, ModelConnectionError | RateLimitError):
        return True
    return isinstance(exc, ModelAPIError) and (exc.status_code is None or exc.status_code >= 500)


def _optional_count(value: Any) -> int | None:
    return None if value is None else int(value)


def _reported_sum(responses: Sequence[ChatResponse], key: str) -> int | None:
    """The sum of a count the answers' metadata carries, ``None`` when none carries it."""
    counts = [int(r.metadata[key]) for r in responses if r.metadata.get(key) is not None]
    return sum(counts) if counts else None


class _Meter:
    """The model, keeping each request it gets and each answer it gives."""

    def __init__(self, model: ChatModel) -> None:
        self.model = model
        self.supports_tools = model.supports_tools
        self.name = model_name(model)
        self.prompts: list[Prompt] = []
        self.responses: list[ChatResponse] = []

    def tool_channels(self, model: str | None = None) -> tuple[ToolChannel, ...]:
        """The wrapped model's tool search channels."""
        return tool_channels(self.model, model)

    def cache_shortfall(self, prompt: Prompt) -> int:
        """What ``prompt`` lacks before the wrapped model's provider caches it."""
        return cache_shortfall(self.model, prompt)

    async def call(self, prompt: Prompt) -> ChatResponse:
        """Ask the model, keeping the request and the answer."""
        self.prompts.append(prompt)
        response = await self.model.call(prompt)
        self.responses.append(response)
        return response

    async def stream(self, prompt: Prompt) -> AsyncIterator[ChatResponse]:
        """A call, as a stream of one chunk (the runs call, never stream)."""
        yield await self.call(prompt)


@dataclass(kw_only=True)
class _Recorder:
    """The calls of one run, as each tool round ends."""

    catalog: tuple[str, ...]
    searching: bool
    calls: list[CallRecord] = field(default_factory=list)
    searches: int = 0

    def add(self, result: ToolExecutionResult, exposed: Sequence[str], model_call: int) -> None:
        for outcome in result.outcomes:
            if outcome.tool_name == TOOL_SEARCH_NAME:
                self.searches += outcome.ok
                continue
            status = self._status(outcome, exposed)
            name = outcome.tool_name if outcome.tool_name in self.catalog else _called(outcome)
            if status is CallStatus.NOT_SHOWN:
                name = match_tool_name(outcome.call.name, self.catalog) or name
            self.calls.append(
                CallRecord(
                    name=name or outcome.call.name,
                    arguments=_called_arguments(outcome),
                    status=status,
                    model_call=model_call,
                    error=None if outcome.ok else outcome.response.data[:_ERROR_SHOWN],
                )
            )

    def _status(self, outcome: ToolCallOutcome, exposed: Sequence[str]) -> CallStatus:
        status = outcome.status
        if status is ToolCallStatus.OK:
            return CallStatus.OK
        if status is ToolCallStatus.INVALID_ARGUMENTS:
            return CallStatus.INVALID_ARGUMENTS
        if status is ToolCallStatus.UNKNOWN_TOOL:
            # Tool search answers a call of a catalog tool it did not show as it answers a
            # name no tool has; the catalog tells the two apart.
            called = _called(outcome)
            hidden = self.searching and match_tool_name(called, exposed) is None
            if hidden and match_tool_name(called, self.catalog) is not None:
                return CallStatus.NOT_SHOWN
            return CallStatus.UNKNOWN_NAME
        if status in (ToolCallStatus.DENIED, ToolCallStatus.IDEMPOTENCY_CONFLICT):
            return CallStatus.DENIED  # a guard refused it, or its key is another call's
        if status in (ToolCallStatus.ERROR, ToolCallStatus.TIMEOUT):
            return CallStatus.FAILED
        return CallStatus.OTHER


def _called(outcome: ToolCallOutcome) -> str:
    """The tool a call names: a ``call_tool`` call's ``name`` argument (the proxy channel)."""
    call = outcome.call
    if call.name != CALL_TOOL_NAME:
        return call.name
    try:
        named = decode_arguments(call.name, call.arguments).get("name")
    except ToolRelayError:
        return call.name
    return named if isinstance(named, str) and named else call.name


def _called_arguments(outcome: ToolCallOutcome) -> str:
    """The arguments a call gives its tool: a ``call_tool`` call's ``arguments`` argument."""
    call = outcome.call
    if call.name != CALL_TOOL_NAME:
        return call.arguments
    try:
        given = decode_arguments(call.name, call.arguments).get("arguments", {})
    except ToolRelayError:
        return call.arguments
    return json.dumps(given, ensure_ascii=False) if isinstance(given, dict) else call.arguments


class _RecordingLoop(ToolCallingAdvisor):
    """The tool loop, telling a recorder about each round's calls."""

    recorder: _Recorder

    async def execute_tools(
        self, request: ChatClientRequest, response: ChatClientResponse, state: ToolLoopState
    ) -> ToolExecutionResult:
        """Run the round as the loop does, then record its calls."""
        exposed = shown_tools(request.prompt)
        try:
            result = await super().execute_tools(request, response, state)
        except ToolCallLimitError as exc:
            if isinstance(exc.partial, ToolExecutionResult):
                self.recorder.add(exc.partial, exposed, state.model_calls)
            raise
        self.recorder.add(result, exposed, state.model_calls)
        return result


class _RecordingSearch(_RecordingLoop, ToolSearchAdvisor):
    """Tool search, telling a recorder about each round's calls."""
