"""``ToolGateway``: progressive tool disclosure for any MCP client, over many tool sources.

A client sees two tools instead of hundreds:

- ``tool_search(queries, max_results?, category?)``: the best permitted tools for each query
  (one query per need, all answered at once), each
  with its name, full description, input schema and MCP annotations as the gateway runs it
  (and ``requires_approval`` when the gateway asks before running it), best first (none
  scoring under ``min_relative_score``, half the best one's score by default);
- ``call_tool(name, arguments)``: runs one of them; the result (or error) is the tool's.
  ``arguments`` is an object, or a JSON text of one. Its annotations are the most any tool
  of the catalogs may do (:meth:`ToolGateway.call_tool_metadata`): clients decide what to
  confirm from the tools they list, and they list only these two.

Both run on the tool-search core the in-process :class:`~toolrelay.client.ToolSearchAdvisor`
and the bridges run on (:class:`~toolrelay.toolsearch._core.CatalogSearch`, with the same
:class:`~toolrelay.toolsearch.SearchOptions`), and every call takes the manager's one path
(``call_tool`` is a :class:`~toolrelay.execution.ForwardingTool`):

- ``tool_filter(context, definition)`` decides what a caller may see: search results are
  limited to it (the index applies it while ranking) and a call of anything else is answered
  with the same "not available" text as an unknown name, so nothing reveals that a forbidden
  tool exists;
- ``authorize(context, tool, arguments)``, a guard option, is asked before each call runs.

Side-effect policies (:class:`~toolrelay.gateway._policy.ToolPolicy`) give a tool the
metadata the gateway assumes about it (approval, idempotency key, destructive...) before the
call reaches the hooks and the manager's interceptors.

The caller's :class:`~toolrelay.tools.ToolContext` comes from the MCP request's ``_meta``,
with the gateway's configured context on top (see :mod:`toolrelay.mcp._context`). Calls run
through one :class:`~toolrelay.execution.ToolCallingManager`: argument validation, the
tool's context, timeouts, bounded results and error feedback as in the tool loop, and its
guards (approval, idempotency, audit, ``authorize``) apply to gateway calls as well.

The catalogs are read on every request: when an MCP server's tools change, the next request
re-indexes (the index rebuilds only when the fingerprint changed).

What the client reads besides the catalog (the two tools' descriptions, the "not available"
answer, the server's instructions) is in the catalog's language by default, English or
Chinese, as under the in-process tool search (:class:`~toolrelay.toolsearch.SearchTexts`).
"""

from __future__ import annotations

import contextlib
import dataclasses
import itertools
import logging
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Unpack

from mcp_types import ToolAnnotations

from toolrelay.exceptions import ConfigurationError, ToolExecutionError
from toolrelay.execution import ForwardingTool, GuardOptions, ToolCallingManager, ToolCallStatus
from toolrelay.execution._manager import configured_manager
from toolrelay.execution._pipeline import META_TOOL
from toolrelay.gateway._annotations import MAY_DO_ANYTHING, as_run, most_of
from toolrelay.gateway._parameters import SearchQueries, SearchText
from toolrelay.gateway._policy import ToolPolicy, apply_policies
from toolrelay.mcp._annotations import OPEN_WORLD
from toolrelay.mcp._live_catalog import LiveToolCatalog
from toolrelay.messages import ToolCall
from toolrelay.search._base import ToolIndex
from toolrelay.tools import FunctionTool, Tool, ToolCatalog, ToolContext
from toolrelay.tools._base import ToolDefinition, ToolMetadata
from toolrelay.tools._schema import cached_function_schema
from toolrelay.toolsearch._access import CatalogSnapshot
from toolrelay.toolsearch._core import CatalogSearch
from toolrelay.toolsearch._learning import CallerRecorders, UsageRecorder, usage_scope
from toolrelay.toolsearch._options import SearchOptions
from toolrelay.toolsearch._proxy import call_tool, resolve_called
from toolrelay.toolsearch._reveal import refuse_turn_options
from toolrelay.toolsearch._search_tool import (
    ToolSearchRecord,
    definition_hit,
    search_tool_schema,
)
from toolrelay.toolsearch._texts import (
    CALL_TOOL_NAME,
    TOOL_SEARCH_NAME,
    SearchTexts,
    unavailable_text,
)

__all__ = [
    "PENDING_APPROVAL_TEXT",
    "FoundTool",
    "GatewayCallResult",
    "ToolGateway",
    "refuse_search_keywords",
]

_log = logging.getLogger("toolrelay.gateway")

PENDING_APPROVAL_TEXT = (
    "The call to tool {name!r} needs approval and has not run: nobody has approved it yet. "
    "Tell the user; the same call can be made again once it is approved."
)
"""What a client reads for a call that waits for approval (``{name}`` is the tool)."""


@dataclass(frozen=True, kw_only=True)
class FoundTool:
    """One search hit, as the client reads it.

    Attributes:
        name: The tool's canonical name (what ``call_tool`` takes).
        description: Its whole description.
        input_schema: The JSON Schema of its arguments.
        score: Relevance on the index's own scale.
        annotations: Its MCP annotations as the gateway runs it (``readOnlyHint``,
            ``destructiveHint``, ``idempotentHint``, ``openWorldHint``; see
            :meth:`ToolGateway.annotations`), for a client that decides per tool.
        requires_approval: The gateway asks for approval before each call runs.
    """

    name: str
    description: str
    input_schema: Mapping[str, Any]
    score: float
    annotations: Mapping[str, Any] = field(default_factory=dict)
    requires_approval: bool = False

    def as_json(self) -> dict[str, Any]:
        """The hit as the client reads it (without the score).

        The proxy channel's hit (:func:`~toolrelay.toolsearch._search_tool.definition_hit`)
        with its annotations.
        """
        hit = definition_hit(
            ToolDefinition(
                name=self.name, description=self.description, input_schema=self.input_schema
            )
        )
        hit["annotations"] = dict(self.annotations)
        if self.requires_approval:
            hit["requires_approval"] = True
        return hit


@dataclass(frozen=True, kw_only=True)
class GatewayCallResult:
    """The answer to one ``call_tool``.

    Attributes:
        text: What the tool returned, or the error text.
        is_error: Whether the call failed (the tool raised or reported an error, the
            arguments were invalid, the tool is not available, ``authorize`` denied it...).
        status: The execution status (``"ok"``, ``"error"``, ``"denied"``,
            ``"pending_approval"``...; ``"unknown_tool"`` for a name the caller cannot use).
        tool: The canonical name of the tool that was called, when the name resolved.
        replayed: Answered with the result recorded for an identical earlier call; the
            tool did not run again.
        approval: What an approval decided (``"approved"``, ``"edited"``, ``"denied"``,
            ``"pending"``), or ``None`` when none was asked for.
    """

    text: str
    is_error: bool
    status: str
    tool: str | None = None
    replayed: bool = False
    approval: str | None = None


class ToolGateway:
    """Tool search and tool calls over live catalogs, for MCP clients (see the module docs).

    Args:
        catalogs: Where tools come from (e.g. an MCP toolset's live catalog and a catalog of
            module tools); read on every request. Names must be unique across them.
        options: How it searches and answers (:class:`~toolrelay.toolsearch.SearchOptions`,
            as for every front end). Every hit is a whole definition, input schema included,
            that the client pays for in tokens, so weak ones are left out by default
            (``min_relative_score``); the texts clients read are in ``language``; with a
            ``usage_log``, searches rank with the caller's tenant's history, and a successful
            call of a tool one of the same caller's recent searches found (same tenant, user
            and session in the tool context) is recorded with that search's query.
        index: The search index; ``default_index()`` when omitted. Give each gateway its own.
        policies: Side-effect policies per tool name or pattern (see
            :mod:`toolrelay.gateway._policy`).
        tool_calling_manager: Runs the calls; by default one built from the guard options
            (giving both is an error).
        guards: The guard options (:class:`~toolrelay.execution.GuardOptions`), as every door
            takes them: ``approval=`` (without it, a tool that requires approval, as its
            policy leaves it, refuses the gateway at build, or each call when it appears
            later), ``idempotency=`` (the process's store when omitted), ``audit=``,
            ``authorize=``, ``interceptors=``.

    Raises:
        ConfigurationError: The options cannot be honoured with the index, a manager is
            given with guard options, a guard option is unknown, a tool requires approval
            and no approval is configured, or an option of the chat client's turn start is
            given (``reveal=``, ``reveal_min_relative_score=``, ``fill_cache_minimum=``,
            ``send_all_below=``): the
            gateway never sees a request's text, and its tools are always the proxy pair.
    """

    def __init__(
        self,
        catalogs: ToolCatalog | Sequence[ToolCatalog],
        *,
        options: SearchOptions | None = None,
        index: ToolIndex | None = None,
        policies: Sequence[ToolPolicy] = (),
        tool_calling_manager: ToolCallingManager | None = None,
        **guards: Unpack[GuardOptions],
    ) -> None:
        refuse_turn_options(guards, owner="ToolGateway")
        refuse_search_keywords(
            guards, owner="ToolGateway", fix="ToolGateway(catalogs, options=SearchOptions({}=...))"
        )
        self.core = CatalogSearch(catalogs, index=index, options=options)
        self.policies = tuple(policies)
        self.manager = configured_manager(tool_calling_manager, owner="ToolGateway", **guards)
        # A tool that requires approval (as its policy leaves it) where no approval is
        # configured could never run. A policy that does not fit its tool is check_policies'.
        runs = []
        for tool in self.core.tools():
            with contextlib.suppress(ConfigurationError):
                tool = apply_policies(tool, self.policies)
            runs.append(tool)
        self.manager.check_tools(runs, owner="ToolGateway")
        self._recorders = CallerRecorders()
        self._hits: tuple[CatalogSnapshot, Mapping[str, Mapping[str, Any]]] | None = None
        self._call_tool_metadata: tuple[tuple[Tool, ...], ToolMetadata] | None = None
        self._call_ids = itertools.count(1)

    @property
    def catalogs(self) -> tuple[ToolCatalog, ...]:
        """Where tools come from."""
        return self.core.catalogs

    @property
    def options(self) -> SearchOptions:
        """How it searches and answers."""
        return self.core.options

    async def snapshot(self) -> CatalogSnapshot:
        """The catalogs as indexed now, re-indexed first when their tools changed.

        Raises:
            DuplicateToolError: Two catalogs hold tools with the same name.
            ConfigurationError: A tool is named ``tool_search``.
        """
        return await self.core.snapshot()

    async def search(
        self,
        query: str,
        *,
        max_results: int | None = None,
        category: str | None = None,
        context: ToolContext | None = None,
    ) -> list[FoundTool]:
        """The best tools for ``query`` that the caller with ``context`` may see."""
        snapshot, (_, (record,)) = await self._searched([query], max_results, category, context)
        found = []
        for hit in record.response.hits:
            tool = snapshot.tools[hit.name]
            annotations, approval = self._published(tool)
            found.append(
                FoundTool(
                    name=tool.definition.name,
                    description=tool.definition.description,
                    input_schema=tool.definition.input_schema,
                    score=hit.score,
                    annotations=annotations.model_dump(by_alias=True, exclude_none=True),
                    requires_approval=approval,
                )
            )
        return found

    async def call(
        self,
        name: str,
        arguments: Mapping[str, Any] | str | None = None,
        *,
        context: ToolContext | None = None,
    ) -> GatewayCallResult:
        """Run the tool ``name`` (canonical or provider-safe) for the caller with ``context``.

        The call of ``call_tool`` a client makes, answered as a served one is
        (:meth:`answer`): ``arguments`` is an object (a mapping), the JSON text of one, or
        ``None``.

        Raises:
            ToolContextError: The tool needs what ``context`` lacks (a ``context_keys`` entry,
                a caller for its idempotency keys); nothing ran.
        """
        call = ToolCall(
            id=f"gateway_{next(self._call_ids)}",
            name=CALL_TOOL_NAME,
            arguments={"name": name, "arguments": arguments},  # type: ignore[arg-type]
        )
        return await self.answer(call, self._call_tool(), context)

    async def answer(
        self, call: ToolCall, tool: Tool, context: ToolContext | None = None
    ) -> GatewayCallResult:
        """The answer to a client's call of ``tool``, one of :meth:`tools`.

        What a served gateway runs for each call (:func:`~toolrelay.gateway.gateway_server`)
        and :meth:`call` for ``call_tool``: the manager's one path, then what the gateway
        adds: a successful call of a tool the caller's search found is recorded in the
        ``usage_log``, and a call waiting for approval tells the client to make it again.

        Raises:
            ToolContextError: The named tool needs what ``context`` lacks; nothing ran.
        """
        context = context or ToolContext()
        outcome = await self.manager.run_call(call, (tool,), context)
        if self.options.usage_log is not None:
            recorder = self._recorder(context)
            await recorder.record(self.options.usage_log, [(outcome.tool_name, outcome.status)])
        text = outcome.response.data
        if outcome.status is ToolCallStatus.PENDING_APPROVAL:
            # Nothing resumes a call here: the client must make it again once approved.
            text = PENDING_APPROVAL_TEXT.format(name=outcome.tool_name)
        return GatewayCallResult(
            text=text,
            is_error=outcome.response.is_error,
            status=str(outcome.status),
            tool=outcome.tool_name,
            replayed=outcome.replayed,
            approval=None if outcome.approval is None else str(outcome.approval),
        )

    async def check_policies(self) -> None:
        """Check the policies against the tools now in the catalogs.

        Raises:
            ConfigurationError: A policy names a tool that does not exist (a pattern may
                match none), or gives a tool an idempotency key of arguments it lacks.
        """
        snapshot = await self.snapshot()
        for tool in snapshot.members:
            apply_policies(tool, self.policies)
        unused = [
            p.tools for p in self.policies if not p.is_pattern and p.tools not in snapshot.tools
        ]
        if unused:
            raise ConfigurationError(
                f"tool policies name tools no source offers: {unused} (use the canonical "
                "names tool_search returns)"
            )

    def texts(self) -> SearchTexts:
        """What clients read besides the catalog, in the language of the catalogs now."""
        return self.core.texts()

    def tools(self) -> list[Tool]:
        """The two tools an MCP client sees: ``tool_search`` and ``call_tool``.

        Their texts are in the language of the catalogs when this is called (for a served
        gateway: once its sources are listed, before the first client arrives). The metadata
        of ``call_tool`` is :meth:`call_tool_metadata`, read whenever a client lists it.
        """
        texts = self.texts()
        search = FunctionTool(
            function=self._tool_search,
            definition=ToolDefinition(
                name=TOOL_SEARCH_NAME,
                description=texts.proxy_description,
                input_schema=search_tool_schema(texts.parameters),
            ),
            # The library's own tool, read-only and within the catalog: never authorized,
            # and its answer fits the bound by whole hits.
            metadata=ToolMetadata(read_only=True, extra={OPEN_WORLD: False, META_TOOL: True}),
            schema=cached_function_schema(self._tool_search, tool_name=TOOL_SEARCH_NAME),
        )
        return [search, self._call_tool(texts)]

    def annotations(self, tool: Tool) -> ToolAnnotations:
        """The MCP annotations of ``tool`` as this gateway runs it.

        Its metadata with the policies applied (:func:`~toolrelay.gateway._policy.apply_policies`:
        a tool that may change state is destructive unless stated otherwise), with
        ``idempotentHint`` as :func:`~toolrelay.gateway._annotations.as_run` gives it.
        """
        return self._published(tool)[0]

    def call_tool_metadata(self) -> ToolMetadata:
        """What ``call_tool`` may do: the most any tool of the catalogs may do.

        See :func:`~toolrelay.gateway._annotations.most_of`; computed again when the catalogs'
        tools change. Nothing is known of tools to come, so ``call_tool`` may do anything
        (MCP's defaults: destructive, not idempotent) when a catalog follows MCP servers
        (:class:`~toolrelay.mcp.LiveToolCatalog`), whose tools may change after a client
        listed ``call_tool``. The library's own tool: ``authorize`` is asked about the tool
        each call names, never about ``call_tool``.
        """
        if any(isinstance(catalog, LiveToolCatalog) for catalog in self.catalogs):
            return _own(MAY_DO_ANYTHING)
        tools = tuple(self.core.tools())
        cached = self._call_tool_metadata
        if cached is not None and _same_tools(cached[0], tools):
            return cached[1]
        metadata = _own(most_of([self.annotations(tool) for tool in tools]))
        self._call_tool_metadata = (tools, metadata)
        return metadata

    # --- what the two tools run -----------------------------------------------------------

    async def _searched(
        self,
        queries: Sequence[str],
        max_results: int | None,
        category: str | None,
        context: ToolContext | None,
    ) -> tuple[CatalogSnapshot, tuple[str, tuple[ToolSearchRecord, ...]]]:
        context = context or ToolContext()
        snapshot = await self.core.snapshot()
        view = self.core.view(snapshot, context)
        searcher = await self.core.searcher(
            view, hits=self._definition_hits(snapshot), max_chars=self.manager.max_result_chars
        )
        answer, records = await searcher.search(queries, max_results, category)
        if self.options.usage_log is not None:
            recorder = self._recorder(context)
            for record in records:
                recorder.found(record.query, record.names)
        return snapshot, (answer, records)

    async def _tool_search(
        self,
        queries: SearchQueries,
        max_results: int | None = None,
        category: SearchText | None = None,
        context: ToolContext | None = None,
    ) -> str:
        """Search the tool catalog.

        Args:
            queries: One per need: a few words for the action and its object, e.g.
                'cancel order'.
            max_results: How many tools to return per query (1-10).
            category: Only tools of this category, e.g. 'payments' for 'payments.*' tools.
            context: The caller's tool context (from the request, never in the schema).
        """
        return (await self._searched(queries, max_results, category, context))[1][0]

    def _call_tool(self, texts: SearchTexts | None = None) -> ForwardingTool:
        texts = texts if texts is not None else self.texts()
        return _CallTool(call_tool(texts, self._forward), self)

    async def _forward(self, name: str, context: ToolContext) -> Tool | str:
        """The tool a ``call_tool`` call names, as the gateway runs it, or the answer why not."""
        snapshot = await self.core.snapshot()
        view = self.core.view(snapshot, context)
        tool = resolve_called(name, snapshot.tools, view.permits)
        if tool is None:
            return unavailable_text(self.core.texts(snapshot).unavailable_message, name)
        try:
            return apply_policies(tool, self.policies)
        except ConfigurationError as exc:
            # The tools changed since the policies were checked; the operator must fix them.
            _log.error("gateway policy: %s", exc)
            return _PolicyInvalid(tool.definition)

    def _definition_hits(self, snapshot: CatalogSnapshot) -> Mapping[str, Mapping[str, Any]]:
        """Each tool's hit as clients read it, annotations included (made once per snapshot)."""
        if self._hits is None or self._hits[0] is not snapshot:
            hits: dict[str, Mapping[str, Any]] = {}
            for tool in snapshot.members:
                annotations, approval = self._published(tool)
                hit = definition_hit(tool.definition)
                hit["annotations"] = annotations.model_dump(by_alias=True, exclude_none=True)
                if approval:
                    hit["requires_approval"] = True
                hits[tool.definition.name] = hit
            self._hits = (snapshot, hits)
        return self._hits[1]

    def _published(self, tool: Tool) -> tuple[ToolAnnotations, bool]:
        """``tool``'s annotations as the gateway runs it, and whether it asks for approval."""
        try:
            run = apply_policies(tool, self.policies)
        except ConfigurationError:
            run = tool  # its calls are refused until the policy is fixed (see _forward)
        return as_run(tool, run, self.manager)

    def _recorder(self, context: ToolContext) -> UsageRecorder:
        """The caller's recorder (by tenant, user and session)."""
        scope = usage_scope(context, shared=self.options.shared_usage)
        caller = (scope, str(context.user_id or ""), str(context.session_id or ""))
        return self._recorders.of(caller, scope)


def refuse_search_keywords(keywords: Mapping[str, object], *, owner: str, fix: str) -> None:
    """Refuse a search option given where guard options go, naming where it belongs.

    Raises:
        ConfigurationError: A keyword is a :class:`SearchOptions` field; ``fix`` (with
            ``{}`` for the option) says where it goes.
    """
    for name in keywords:
        if name in _SEARCH_OPTIONS:
            raise ConfigurationError(f"{owner} takes {name} as a search option: {fix.format(name)}")


_SEARCH_OPTIONS = frozenset(f.name for f in dataclasses.fields(SearchOptions))


class _PolicyInvalid:
    """A tool whose gateway policy no longer fits it: a call fails, and nothing runs.

    It stands for the tool (its definition, so the call is validated, audited and answered
    under its name) with no guards of its own: nothing of the tool runs to guard.
    """

    def __init__(self, definition: ToolDefinition) -> None:
        self.definition = definition
        self.metadata = ToolMetadata()

    async def call(self, arguments_json: str, context: ToolContext | None = None) -> str:
        name = self.definition.name
        raise ToolExecutionError(
            name, f"Tool {name!r} did not run: the gateway's policy for it is invalid."
        )


def _own(metadata: ToolMetadata) -> ToolMetadata:
    """``metadata`` of the library's own tool (never asked ``authorize`` about itself)."""
    return dataclasses.replace(metadata, extra={**metadata.extra, META_TOOL: True})


def _same_tools(before: Sequence[Tool], now: Sequence[Tool]) -> bool:
    return len(before) == len(now) and all(a is b for a, b in zip(before, now, strict=True))


class _CallTool(ForwardingTool):
    """``call_tool`` with the metadata of what it can run now (see ``call_tool_metadata``)."""

    def __init__(self, tool: ForwardingTool, gateway: ToolGateway) -> None:
        super().__init__(tool.definition, tool.forward, tool.metadata)
        self._gateway = gateway

    @property
    def metadata(self) -> ToolMetadata:
        return self._gateway.call_tool_metadata()
