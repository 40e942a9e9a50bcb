"""``ChatClient``: a chat model behind an ordered advisor chain, with the tool loop in it.

Example::

    client = ChatClient(
        model,
        system="You triage failed refunds.",
        tools=[RefundTools(), notify_owner],
        advisors=[MessageChatMemoryAdvisor(MessageWindowChatMemory())],
    )
    result = await client.run("Fix yesterday's refunds", conversation="c1")
    result.text, result.messages, result.usage, result.tool_loop

The same client, built the way Spring AI builds one, and a request spec::

    client = (
        ChatClient.builder(model)
        .default_system("You triage failed refunds.")
        .default_tools(RefundTools(), notify_owner)
        .default_advisors(MessageChatMemoryAdvisor(MessageWindowChatMemory()))
        .build()
    )
    answer = client.prompt().user("Fix yesterday's refunds").conversation("c1").call().content()
    async for text in client.prompt("Hi").stream().content(): ...

Both are one path: the builder collects the constructor's arguments, and ``run`` is a request
spec (``prompt(task).conversation(...).tool_context(...)``) whose response is read as a
:class:`~toolrelay.client._run.RunResult`.

A turn that stopped for approval (``result.approval`` set; finish reason
``"approvalRequired"``) continues with ``client.resume(result.approval, {call_id: Approve()})``
(or ``client.prompt().resume(state, decisions).call()``), in this process or another (see
:mod:`~toolrelay.client._deferred_approval`).

A request is built from the client's defaults plus the request's own settings: the request's
system text replaces the default, tools and advisors add to the defaults (tools with the same
name are an error), options, tool context and advisor parameters are merged with the request
winning. Every client has exactly one tool-calling advisor: a default
:class:`~toolrelay.client._tool_calling.ToolCallingAdvisor` unless one (or a subclass) is given
as an advisor, or tool calling is switched off (``tool_calling=False``).

No setting is silently dropped: one that nothing would honour is a
:class:`~toolrelay.exceptions.ConfigurationError` naming the conflict, raised when the client
is made for its defaults and when a request runs for its own settings. A
``tool_calling_manager`` (or the guard settings a manager is built from) conflicts with a
loop advisor given with a manager of its own and with ``tool_calling=False``; a loop advisor
conflicts with ``tool_calling=False``; ``tool_names`` need a loop to resolve them; a resumed
request takes no new system text, messages or response format.

**Guards.** The tools' declarations hold by default: the guard options
(:class:`~toolrelay.execution.GuardOptions`: ``approval=``, ``idempotency=``, ``audit=``,
``authorize=``, ``interceptors=``, the same keywords at every door) build the client's one
:class:`~toolrelay.execution.ToolCallingManager`, which runs every round whether the tools are
shown whole or found through a :class:`~toolrelay.client.ToolSearchAdvisor` (given without a
manager of its own, it uses the client's). A tool that requires approval with no ``approval=``
refuses the client at build; idempotency keys are honoured with the process's store unless
``idempotency=`` names a shared one. A request whose tool context lacks what a tool declares
it needs (``context_keys``, a ``ToolContext`` parameter, a caller for its idempotency keys)
fails before the first model call; with a store shared between processes (Redis), a request
without ``tenant_id`` is refused unless the client is declared ``single_tenant=True``.
"""

from __future__ import annotations

import warnings
from collections.abc import AsyncIterator, Awaitable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field, fields, replace
from typing import Any, Unpack

from toolrelay._sync import run_sync
from toolrelay.client._advisor import Advisor, AdvisorChain, CallAdvisor, StreamAdvisor
from toolrelay.client._conversations import CONVERSATION_SCOPE, ConversationScope
from toolrelay.client._deferred_approval import ApprovalState, Decisions, Resumption
from toolrelay.client._requests import ChatClientRequest, ChatClientResponse
from toolrelay.client._responses import CallResponse, StreamResponse, format_instructions
from toolrelay.client._run import RunResult, run_result
from toolrelay.client._tool_calling import MANAGER_KEY, ToolCallingAdvisor
from toolrelay.exceptions import ConfigurationError
from toolrelay.execution import GuardOptions, ToolCallingManager
from toolrelay.execution._manager import configured_manager
from toolrelay.execution._pipeline import check_guard_options, given_guards
from toolrelay.memory._base import CONVERSATION_ID
from toolrelay.messages import Message, SystemMessage, UserMessage
from toolrelay.models._base import ChatModel
from toolrelay.prompt import ChatOptions, Prompt
from toolrelay.tools import Tool, ToolCatalog, as_tools

__all__ = ["ChatClient", "ChatClientBuilder", "ChatClientRequestSpec"]


@dataclass(frozen=True, kw_only=True)
class _Defaults:
    # The constructor's keyword arguments, checked; the builder collects the same fields.
    system: str | None = None
    tools: tuple[object, ...] = ()
    context: Mapping[str, Any] = field(default_factory=dict)
    advisors: tuple[Advisor, ...] = ()
    advisor_params: Mapping[str, Any] = field(default_factory=dict)
    options: ChatOptions = field(default_factory=ChatOptions)
    tool_calling: bool = True
    tool_calling_manager: ToolCallingManager | None = None
    single_tenant: bool = False
    guards: Mapping[str, Any] = field(default_factory=dict)


class ChatClient:
    """Sends prompts to a model through an ordered advisor chain.

    A client is immutable and safe to share between concurrent requests. Run a task with
    :meth:`run` (or :meth:`run_sync`); build requests fluently with :meth:`prompt`. The same
    client can be built with :meth:`builder`, as in Spring AI.

    Args:
        model: The chat model (``OpenAIChatModel(...)``, ``AnthropicChatModel(...)``...).
        system: The system text of every request (a request's own replaces it).
        tools: Tools offered on every request: tools, functions, objects or classes with
            ``@tool`` methods, catalogs, or a list of these (see
            :func:`toolrelay.tools.as_tools`). A catalog stays live: tools added to it later
            are offered too.
        advisors: The advisor chain, run sorted by ``order``. Without a loop advisor among
            them (a ``ToolCallingAdvisor``, a ``ToolSearchAdvisor``), a default
            ``ToolCallingAdvisor`` runs the tool loop.
        context: The tool context of every request (a mapping or a ``ToolContext``): handed
            to tools, never shown to the model; a request's entries win.
        options: The options of every request; fields a request sets win.
        advisor_params: Advisor parameters of every request (e.g. ``conversation_scope``).
        tool_calling: ``False`` runs no tool loop: tool calls come back unexecuted.
        tool_calling_manager: The manager of every tool round, made by you; instead of
            the guard options, which build one.
        single_tenant: Requests need no ``tenant_id`` even with a store shared between
            processes (one tenant uses this deployment).
        guards: The guard options of the client's manager
            (:class:`~toolrelay.execution.GuardOptions`): ``approval=`` (an async handler
            returning ``Approve()``, ``Deny(reason)`` or ``Defer()``, or
            ``ApprovalInterceptor()``: a person decides later, the turn stops for them),
            ``idempotency=`` (the process's store when omitted; several workers: a
            ``RedisIdempotencyStore``), ``audit=``, ``authorize=``, ``interceptors=``.

    Raises:
        ConfigurationError: An argument of the wrong kind (something that is not an
            advisor among ``advisors``, a context that is not a mapping...); settings that
            conflict, so one would be ignored: a ``tool_calling_manager`` next to guard
            options, a manager (or guard options) next to a loop advisor with a manager of
            its own or with ``tool_calling=False``, a loop advisor with
            ``tool_calling=False``, or two loop advisors; or a tool known now that requires
            approval with no ``approval=`` (it could never run).
    """

    def __init__(
        self,
        model: ChatModel,
        *,
        system: str | None = None,
        tools: Iterable[object] | object = (),
        advisors: Iterable[Advisor] | Advisor = (),
        context: Mapping[str, Any] | None = None,
        options: ChatOptions | None = None,
        advisor_params: Mapping[str, Any] | None = None,
        tool_calling: bool = True,
        tool_calling_manager: ToolCallingManager | None = None,
        single_tenant: bool = False,
        **guards: Unpack[GuardOptions],
    ) -> None:
        check_guard_options(guards, owner="ChatClient", parameters=_PARAMETERS)
        if not isinstance(model, ChatModel):
            raise ConfigurationError(
                f"ChatClient needs a chat model (OpenAIChatModel(...), AnthropicChatModel(...), "
                f"a ChatModel of your own), not {model!r}"
            )
        _check(system, str, "system", 'the system text, e.g. system="Be brief."')
        _check(context, Mapping, "context", "a mapping or a ToolContext")
        _check(advisor_params, Mapping, "advisor_params", "a mapping")
        _check(options, ChatOptions, "options", "a ChatOptions")
        _check(tool_calling_manager, ToolCallingManager, "tool_calling_manager", "a manager")
        _check(tool_calling, bool, "tool_calling", "True or False")
        _check(single_tenant, bool, "single_tenant", "True or False")
        defaults = _Defaults(
            system=system,
            tools=_tool_sources(tools),
            context=dict(context or {}),
            advisors=_advisors(advisors),
            advisor_params=dict(advisor_params or {}),
            options=options or ChatOptions(),
            tool_calling=tool_calling,
            tool_calling_manager=tool_calling_manager,
            single_tenant=single_tenant,
            guards=dict(guards),
        )
        self.tool_calling_manager = configured_manager(
            tool_calling_manager, owner="client", **guards
        )
        loops = _check_loops(defaults, defaults.advisors)
        self.model = model
        self._defaults = defaults
        # The default loop advisor is stateless per turn, so one instance serves every request.
        self._default_tool_advisor = ToolCallingAdvisor(
            tool_calling_manager=self.tool_calling_manager
        )
        self._shared_stores = _shared_stores(self.tool_calling_manager, loops)
        _check_declared(self, loops)

    @staticmethod
    def builder(model: ChatModel) -> ChatClientBuilder:
        """A builder for a client over ``model``."""
        return ChatClientBuilder(model)

    @staticmethod
    def create(model: ChatModel) -> ChatClient:
        """A client over ``model`` with no defaults (``ChatClient(model)``)."""
        return ChatClient(model)

    def mutate(self) -> ChatClientBuilder:
        """A builder starting from this client's settings."""
        return ChatClientBuilder(self.model, self._defaults)

    def prompt(self, user: str | None = None) -> ChatClientRequestSpec:
        """Start a request, optionally with the user's text."""
        spec = ChatClientRequestSpec(self)
        return spec.user(user) if user is not None else spec

    async def run(
        self,
        task: str,
        *,
        conversation: str | None = None,
        context: Mapping[str, Any] | None = None,
        system: str | None = None,
        tools: Iterable[object] | object = (),
        options: ChatOptions | None = None,
    ) -> RunResult:
        """Run one turn on ``task`` and return its typed result.

        The request spec ``prompt(task).conversation(...).tool_context(...)...`` run with
        ``acall()``: the same defaults, merging and checks.

        Args:
            task: The user's message.
            conversation: The conversation id (memory, discovered tools and approval states
                are kept under it, scoped by tenant).
            context: This turn's tool context, merged over the client's (a mapping or a
                ``ToolContext``).
            system: The system text for this turn, replacing the client's.
            tools: More tools for this turn (anything ``tools=`` of the client takes).
            options: Options for this turn, merged over the client's.

        Raises:
            ConfigurationError: ``task`` is not text, or a setting nothing would honour (see
                the module docs); a memory advisor without a conversation id.
            DuplicateToolError: Two tools share a name.
            ToolsNotSupportedError: Tools were offered to a model that cannot take them.
            ModelCallLimitError: The tool loop called the model too many times.
        """
        if not isinstance(task, str):
            raise ConfigurationError(f"run takes the task as text, not {task!r}")
        spec = self.prompt(task)
        if system is not None:
            spec.system(system)
        spec = self._for_turn(spec, conversation, context, tools, options)
        return run_result(await self._call(spec))

    def run_sync(
        self,
        task: str,
        *,
        conversation: str | None = None,
        context: Mapping[str, Any] | None = None,
        system: str | None = None,
        tools: Iterable[object] | object = (),
        options: ChatOptions | None = None,
    ) -> RunResult:
        """Blocking :meth:`run` (works inside a running event loop too)."""
        return run_sync(
            self.run(
                task,
                conversation=conversation,
                context=context,
                system=system,
                tools=tools,
                options=options,
            )
        )

    async def resume(
        self,
        state: ApprovalState | str,
        decisions: Decisions | None = None,
        *,
        conversation: str | None = None,
        context: Mapping[str, Any] | None = None,
        tools: Iterable[object] | object = (),
        options: ChatOptions | None = None,
    ) -> RunResult:
        """Continue a turn that stopped for approval, with people's decisions.

        ``prompt().resume(state, decisions)`` run as :meth:`run` runs a task. Give it the
        stopped turn's conversation id and tool context again (the state keeps neither), and
        the tools given to that turn's ``run``.

        Args:
            state: The stopped turn's ``result.approval``, or its JSON text (``to_json()``).
            decisions: By call id, or by the ``PendingApproval`` the person was shown:
                ``Approve()``, ``Approve(arguments={...})`` or ``Deny(reason)``. A waiting
                call without a decision is asked about again.
            conversation: The stopped turn's conversation id.
            context: The stopped turn's tool context.
            tools: The stopped turn's own tools, if it had any.
            options: Options for the rest of the turn.

        Raises:
            ConfigurationError: A decision names a call that is not waiting, or one it was
                not shown; the state belongs to another conversation or tenant; the client
                has no tool loop.
            LoadError: ``state`` is text that is not a serialised approval state, or one
                whose waiting calls do not match their arguments (edited).
        """
        spec = self._for_turn(
            self.prompt().resume(state, decisions), conversation, context, tools, options
        )
        return run_result(await self._call(spec))

    def resume_sync(
        self,
        state: ApprovalState | str,
        decisions: Decisions | None = None,
        *,
        conversation: str | None = None,
        context: Mapping[str, Any] | None = None,
        tools: Iterable[object] | object = (),
        options: ChatOptions | None = None,
    ) -> RunResult:
        """Blocking :meth:`resume` (works inside a running event loop too)."""
        return run_sync(
            self.resume(
                state,
                decisions,
                conversation=conversation,
                context=context,
                tools=tools,
                options=options,
            )
        )

    @staticmethod
    def _for_turn(
        spec: ChatClientRequestSpec,
        conversation: str | None,
        context: Mapping[str, Any] | None,
        tools: Iterable[object] | object,
        options: ChatOptions | None,
    ) -> ChatClientRequestSpec:
        """``spec`` with the settings :meth:`run` and :meth:`resume` take as keywords."""
        _check(conversation, str, "conversation", "the conversation id as text")
        _check(context, Mapping, "context", "a mapping or a ToolContext")
        _check(options, ChatOptions, "options", "a ChatOptions")
        if conversation is not None:
            spec.conversation(conversation)
        if context is not None:
            spec.tool_context(context)
        if options is not None:
            spec.options(options)
        return spec.tools(*_tool_sources(tools))

    # --- running a request ----------------------------------------------------------------

    def _advisors(self, extra: Sequence[Advisor]) -> list[Advisor]:
        advisors = [*self._defaults.advisors, *extra]
        loops = _check_loops(self._defaults, advisors)
        if not loops and self._defaults.tool_calling:
            advisors.append(self._default_tool_advisor)
        return advisors

    def _request(self, spec: ChatClientRequestSpec) -> tuple[ChatClientRequest, AdvisorChain]:
        defaults = self._defaults
        resume = spec._resume
        if resume is not None:
            given = [
                name
                for name, value in (
                    (".user()", spec._user),
                    (".messages()", spec._messages or None),
                    (".system()", spec._system),
                    (".response_format()", spec._response_format),
                )
                if value is not None
            ]
            if given:
                raise ConfigurationError(
                    "a resumed request continues the stopped turn with its own messages, so "
                    f"{', '.join(given)} would be ignored: give it no new messages"
                )
        messages: list[Message] = []
        system = spec._system if spec._system is not None else defaults.system
        if system:
            messages.append(SystemMessage(text=system))
        messages.extend(spec._messages)
        user = spec._user
        if spec._response_format is not None:
            instructions = format_instructions(spec._response_format)
            user = f"{user}\n\n{instructions}" if user else instructions
        if user is not None:
            messages.append(UserMessage(text=user))
        if not messages and resume is None:
            raise ConfigurationError(
                "the request has no messages: give .user(...) or .messages(...)"
            )

        options = defaults.options.merged_with(spec._options)
        tools = as_tools(*options.tools, *defaults.tools, *spec._tools)
        options = replace(
            options,
            tools=tuple(tools),
            tool_context={**options.tool_context, **defaults.context, **spec._tool_context},
        )
        context = {
            **defaults.advisor_params,
            **spec._advisor_params,
            MANAGER_KEY: self.tool_calling_manager,
        }
        request = ChatClientRequest(
            prompt=Prompt(messages=tuple(messages), options=options), context=context, resume=resume
        )
        advisors = self._advisors(spec._advisors)
        shared = self._shared_stores
        if spec._advisors:  # a request's own loop advisor may keep state in a shared store
            loops = [a for a in spec._advisors if isinstance(a, ToolCallingAdvisor)]
            shared = [*shared, *_shared_stores(self.tool_calling_manager, loops)]
        tenant = options.tool_context.get("tenant_id")
        if shared and not defaults.single_tenant and (tenant is None or tenant == ""):
            raise ConfigurationError(
                f"{shared[0]} is shared between processes and tenants, and this request has "
                "no tenant_id, so its records would mix with other tenants': pass "
                ".tool_context({'tenant_id': ...}) (or context= on the client), or declare "
                "ChatClient(..., single_tenant=True)"
            )
        has_loop = any(isinstance(a, ToolCallingAdvisor) for a in advisors)
        if resume is not None and not has_loop:
            raise ConfigurationError("resuming a turn needs a tool-calling advisor")
        if options.tool_names and not has_loop:
            raise ConfigurationError(
                f"tool_names {list(options.tool_names)} are resolved by the tool-calling "
                "advisor, and this client has none (.tool_calling(False)): they would reach "
                "no model; give the tools themselves with .tools(...)"
            )
        return request, AdvisorChain.for_model(self.model, advisors)

    def _call(self, spec: ChatClientRequestSpec) -> Awaitable[ChatClientResponse]:
        # Not a coroutine itself: it hands back the chain's, so no frame of its own sits under
        # every tool call (see benchmarks/shape.py).
        request, chain = self._request(spec)
        return chain.next_call(request)

    async def _stream(self, spec: ChatClientRequestSpec) -> AsyncIterator[ChatClientResponse]:
        request, chain = self._request(spec)
        async for chunk in chain.next_stream(request):
            yield chunk


class ChatClientBuilder:
    """Collects a client's settings fluently, as Spring AI's ``ChatClient.Builder`` does.

    Each method sets one of the :class:`ChatClient` constructor's arguments and returns the
    builder; :meth:`build` passes them all to the constructor.
    """

    def __init__(self, model: ChatModel, defaults: _Defaults | None = None) -> None:
        self._model = model
        self._defaults = defaults or _Defaults()

    def _set(self, **changes: Any) -> ChatClientBuilder:
        self._defaults = replace(self._defaults, **changes)
        return self

    def default_system(self, text: str | None) -> ChatClientBuilder:
        """The system text of every request (a request's ``.system`` replaces it)."""
        return self._set(system=text)

    def default_tools(self, *things: object) -> ChatClientBuilder:
        """Tools offered on every request.

        Tools, functions, objects with ``@tool`` methods and catalogs are accepted (see
        :func:`toolrelay.tools.as_tools`).
        """
        return self._set(tools=(*self._defaults.tools, *things))

    def default_tool_context(self, context: Mapping[str, Any]) -> ChatClientBuilder:
        """Tool context entries of every request."""
        return self._set(context={**self._defaults.context, **context})

    def default_advisors(self, *advisors: Advisor) -> ChatClientBuilder:
        """Advisors of every request."""
        return self._set(advisors=(*self._defaults.advisors, *advisors))

    def default_advisor_params(self, **params: Any) -> ChatClientBuilder:
        """Advisor parameters of every request (e.g. ``conversation_id``)."""
        return self._set(advisor_params={**self._defaults.advisor_params, **params})

    def conversation_scope(self, scope: ConversationScope) -> ChatClientBuilder:
        """Where conversations are kept: ``scope(conversation_id, tool_context) -> key``.

        Memory, discovered tools and approval states are all kept under that key (see
        :mod:`~toolrelay.client._conversations`); the default, ``tenant_scope``, keeps each
        tenant's conversations apart. Sets the ``conversation_scope`` advisor parameter.

        Raises:
            ConfigurationError: ``scope`` is not callable.
        """
        if not callable(scope):
            raise ConfigurationError(f"conversation_scope needs a function, not {scope!r}")
        return self.default_advisor_params(**{CONVERSATION_SCOPE: scope})

    def default_options(self, options: ChatOptions) -> ChatClientBuilder:
        """Options of every request, merged with what was set before."""
        return self._set(options=self._defaults.options.merged_with(options))

    def tool_calling_manager(self, manager: ToolCallingManager) -> ChatClientBuilder:
        """The manager of every tool round (instead of the guard options)."""
        return self._set(tool_calling_manager=manager)

    def guards(self, **guards: Unpack[GuardOptions]) -> ChatClientBuilder:
        """The guard options of every tool round, as ``ChatClient(**guards)`` takes them.

        Options given again replace the earlier ones (``interceptors=`` included).

        Raises:
            ConfigurationError: A keyword is no guard option.
        """
        check_guard_options(guards, owner="ChatClientBuilder.guards")
        return self._set(guards={**self._defaults.guards, **guards})

    def single_tenant(self, single: bool = True) -> ChatClientBuilder:
        """Requests need no ``tenant_id`` (``ChatClient(single_tenant=)``)."""
        return self._set(single_tenant=single)

    def tool_calling(self, enabled: bool) -> ChatClientBuilder:
        """Whether to add the default tool-calling advisor.

        Without it (and without another loop advisor) tool calls are returned to the caller
        unexecuted.
        """
        return self._set(tool_calling=enabled)

    def build(self) -> ChatClient:
        """The client.

        Raises:
            ConfigurationError: Settings conflict, so one would be ignored: a
                ``tool_calling_manager`` next to a loop advisor given (it has its own
                manager) or with ``tool_calling(False)``, a loop advisor with
                ``tool_calling(False)``, or two loop advisors.
        """
        defaults = self._defaults
        settings = {
            f.name: getattr(defaults, f.name) for f in fields(defaults) if f.name != "guards"
        }
        return ChatClient(self._model, **settings, **defaults.guards)


_PARAMETERS = (
    "system",
    "tools",
    "advisors",
    "context",
    "options",
    "advisor_params",
    "tool_calling",
    "tool_calling_manager",
    "single_tenant",
)  # the client's own keyword arguments, suggested when a guard option is misspelt


def _check(value: object, kind: type, name: str, what: str) -> None:
    """Nothing when ``value`` is ``None`` or a ``kind``.

    Raises:
        ConfigurationError: It is not; the message says what ``name`` takes (``what``).
    """
    if value is not None and not isinstance(value, kind):
        raise ConfigurationError(f"{name} takes {what}, not {value!r}")


def _tool_sources(tools: Iterable[object] | object) -> tuple[object, ...]:
    """The tools given, made into tools once, not again per request.

    A catalog stays live: what is added to it later is offered too.

    Raises:
        ToolDefinitionError: Something given is no tool and makes none.
    """
    given = tools if isinstance(tools, list | tuple) else (tools,)
    made: list[object] = []
    for source in given:
        if isinstance(source, ToolCatalog):
            made.append(source)
        elif isinstance(source, list | tuple):
            made.extend(_tool_sources(source))
        else:
            made.extend(as_tools(source))
    return tuple(made)


def _advisors(advisors: Iterable[Advisor] | Advisor) -> tuple[Advisor, ...]:
    """``advisors`` as a tuple (one advisor alone too), each checked to be an advisor.

    Raises:
        ConfigurationError: Something among them is not an advisor; a ``ToolCallingManager``
            is named with where it goes.
    """
    given = (advisors,) if isinstance(advisors, CallAdvisor | StreamAdvisor) else advisors
    if not isinstance(given, Iterable):
        raise ConfigurationError(f"advisors takes a list of advisors, not {advisors!r}")
    checked = tuple(given)
    for advisor in checked:
        if isinstance(advisor, ToolCallingManager):
            raise ConfigurationError(
                "a ToolCallingManager is not an advisor: give it as tool_calling_manager=... "
                "(the default tool loop's), or to the loop advisor you give "
                "(ToolCallingAdvisor(tool_calling_manager=...))"
            )
        if not isinstance(advisor, CallAdvisor | StreamAdvisor):
            raise ConfigurationError(
                f"{advisor!r} among the advisors is not an advisor: one has a name, an order "
                "and advise_call and/or advise_stream (subclass BaseAdvisor for the short way)"
            )
    return checked


def _check_loops(defaults: _Defaults, advisors: Sequence[Advisor]) -> list[ToolCallingAdvisor]:
    """The loop advisors among ``advisors``, when the client's settings can all be honoured.

    Raises:
        ConfigurationError: Two loop advisors; a loop advisor given while tool calling is
            off; the client's manager given while a loop advisor (with a manager of its own)
            runs the loop, or while tool calling is off.
    """
    loops = [a for a in advisors if isinstance(a, ToolCallingAdvisor)]
    names = ", ".join(f"{type(a).__name__} {a.name!r}" for a in loops)
    if len(loops) > 1:
        raise ConfigurationError(
            f"a client runs exactly one tool-calling advisor, but {len(loops)} were given "
            f"({names}); keep one"
        )
    if loops and not defaults.tool_calling:
        raise ConfigurationError(
            f"tool_calling=False (.tool_calling(False)) switches the tool loop off, but "
            f"{names} was given and runs one; remove one of the two"
        )
    given = (["tool_calling_manager="] if defaults.tool_calling_manager is not None else []) + (
        given_guards(defaults.guards)
    )
    owned = [a for a in loops if a.tool_calling_manager is not None]
    if given and owned:
        raise ConfigurationError(
            f"{', '.join(given)} configure the client's tool rounds, but {names} runs the "
            "loop with a manager of its own, so the client's would be ignored: give the "
            f"advisor no manager ({type(owned[0]).__name__}(...) uses the client's), or give "
            "the settings to its manager"
        )
    if given and not defaults.tool_calling:
        raise ConfigurationError(
            f"{', '.join(given)} configure the client's tool rounds, but tool_calling=False "
            "(.tool_calling(False)) switches the loop off; remove one of the two"
        )
    return loops


def _catalog_tools(loops: Sequence[ToolCallingAdvisor]) -> list[Tool]:
    """The tools the loop advisors' providers may show (a tool search's catalog)."""
    return [tool for loop in loops for tool in getattr(loop.tool_provider, "catalog", ())]


def _check_declared(client: ChatClient, loops: Sequence[ToolCallingAdvisor]) -> None:
    """Refuse a client over tools it could never run as they declare (see the module docs).

    Raises:
        ConfigurationError: A tool known now requires approval and its loop's manager has
            none.
    """
    defaults = client._defaults
    tools = as_tools(*defaults.tools)
    manager = client.tool_calling_manager
    for loop in loops:
        if loop.tool_calling_manager is not None:
            loop.tool_calling_manager.check_tools(_catalog_tools([loop]), owner="ChatClient")
        else:
            tools.extend(_catalog_tools([loop]))
    if defaults.tool_calling:
        manager.check_tools(tools, owner="ChatClient")
    shared = client._shared_stores
    idempotency_store = manager.guards.idempotency.store
    if shared and not getattr(idempotency_store, "shared", False):
        warnings.warn(
            f"this client keeps state in {shared[0]}, shared between processes, but records "
            f"idempotent results in {type(idempotency_store).__name__}, which is per process: "
            "another worker may run the same operation again; pass "
            "idempotency=RedisIdempotencyStore(...)",
            UserWarning,
            stacklevel=3,
        )


def _shared_stores(manager: ToolCallingManager, loops: Sequence[ToolCallingAdvisor]) -> list[str]:
    """The stores of the client's that other processes (and tenants) share, by class name."""
    stores: list[object] = [manager.guards.idempotency.store]
    for loop in loops:
        provider = loop.tool_provider
        stores.append(getattr(provider, "session_store", None))
        stores.append(getattr(getattr(provider, "options", None), "usage_log", None))
        if loop.tool_calling_manager is not None:
            stores.append(loop.tool_calling_manager.guards.idempotency.store)
    return [type(s).__name__ for s in stores if getattr(s, "shared", False)]


class ChatClientRequestSpec:
    """One request, built fluently; finish with :meth:`call`, :meth:`acall` or :meth:`stream`."""

    def __init__(self, client: ChatClient) -> None:
        self._client = client
        self._system: str | None = None
        self._user: str | None = None
        self._messages: list[Message] = []
        self._tools: list[object] = []
        self._tool_context: dict[str, Any] = {}
        self._advisors: list[Advisor] = []
        self._advisor_params: dict[str, Any] = {}
        self._options: ChatOptions | None = None
        self._response_format: Any = None
        self._resume: Resumption | None = None

    def system(self, text: str) -> ChatClientRequestSpec:
        """The system text (replaces the client's default)."""
        self._system = text
        return self

    def user(self, text: str) -> ChatClientRequestSpec:
        """The user's message (the last message of the prompt)."""
        self._user = text
        return self

    def messages(self, *messages: Message) -> ChatClientRequestSpec:
        """Messages placed after the system text and before the user's message."""
        self._messages.extend(messages)
        return self

    def tools(self, *things: object) -> ChatClientRequestSpec:
        """More tools for this request.

        Tools, functions, objects with ``@tool`` methods and catalogs are accepted; a name
        offered twice raises ``DuplicateToolError`` when the request runs.
        """
        self._tools.extend(things)
        return self

    def tool_context(self, context: Mapping[str, Any]) -> ChatClientRequestSpec:
        """Tool context entries (handed to tools, never shown to the model)."""
        self._tool_context.update(context)
        return self

    def advisors(self, *advisors: Advisor) -> ChatClientRequestSpec:
        """More advisors for this request."""
        self._advisors.extend(advisors)
        return self

    def advisor_params(self, **params: Any) -> ChatClientRequestSpec:
        """Advisor parameters, e.g. ``conversation_id="c1"``."""
        self._advisor_params.update(params)
        return self

    def conversation(self, conversation_id: str) -> ChatClientRequestSpec:
        """Shorthand for ``advisor_params(conversation_id=...)``."""
        return self.advisor_params(**{CONVERSATION_ID: conversation_id})

    def options(self, options: ChatOptions) -> ChatClientRequestSpec:
        """Options for this request, merged over the client's (set fields win)."""
        self._options = options if self._options is None else self._options.merged_with(options)
        return self

    def response_format(self, type_: Any) -> ChatClientRequestSpec:
        """Ask for JSON matching ``type_``'s schema; read it with ``.call().entity(type_)``.

        The format instructions (with the JSON Schema) are appended to the user's message.
        """
        self._response_format = type_
        return self

    def resume(
        self,
        state: ApprovalState | str,
        decisions: Decisions | None = None,
    ) -> ChatClientRequestSpec:
        """Continue a turn that stopped for approval, with people's decisions.

        Give the request no new messages, but the same tool context and advisor parameters
        (conversation id) as the stopped turn; the client needs the same tools.

        Args:
            state: The stopped turn's ``response.approval``, or its JSON text.
            decisions: By call id, or by the ``PendingApproval`` the person was shown (the
                decision then applies only if the state holds that very call and
                arguments): ``Approve()``, ``Approve(arguments={...})`` or ``Deny(reason)``.
                A waiting call without a decision is asked about again.

        Raises:
            ConfigurationError: A decision names a call that is not waiting, or one it was
                not shown. When the request runs: the state belongs to another
                conversation or tenant.
            LoadError: ``state`` is text that is not a serialised approval state, or one
                whose waiting calls do not match their arguments (edited).
        """
        if isinstance(state, str):
            state = ApprovalState.from_json(state)
        self._resume = Resumption(state=state, decisions=decisions or {})
        return self

    async def acall(self) -> CallResponse:
        """Run the request and return the answer.

        Raises:
            ConfigurationError: Two tool-calling advisors, no messages, or a memory advisor
                without a conversation id.
            DuplicateToolError: Two tools share a name.
            ToolsNotSupportedError: Tools were offered to a model that cannot take them.
            ModelCallLimitError: The tool loop called the model too many times.
        """
        return CallResponse(await self._client._call(self))

    def call(self) -> CallResponse:
        """Blocking :meth:`acall` (works inside a running event loop too)."""
        return run_sync(self.acall())

    def stream(self) -> StreamResponse:
        """Stream the request; nothing runs until the stream is iterated."""
        return StreamResponse(lambda: self._client._stream(self))
