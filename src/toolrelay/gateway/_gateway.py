"""``ToolGateway``: progressive tool disclosure for any MCP client, over many tool sources.

A client sees two tools instead of hundreds:

- ``tool_search(query, max_results?, category?)``: the best permitted tools for a query, each
  with its name, full description, input schema and MCP annotations as the gateway runs it
  (and ``requires_approval`` when the gateway asks before running it), best first (none
  scoring under ``min_relative_score``, half the best one's score by default);
- ``call_tool(name, arguments)``: runs one of them; the result (or error) is the tool's.
  ``arguments`` is an object, or a JSON text of one. Its annotations are the most any tool
  of the catalogs may do (:meth:`ToolGateway.call_tool_metadata`): clients decide what to
  confirm from the tools they list, and they list only these two.

Both run under the same rules as the in-process
:class:`~toolrelay.client.ToolSearchAdvisor`, with the very same hooks:

- ``tool_filter(context, definition)`` decides what a caller may see: search results are
  limited to it (the index applies it while ranking) and a call of anything else is answered
  with the same "not available" text as an unknown name, so nothing reveals that a forbidden
  tool exists;
- ``authorize(context, tool, arguments)`` is asked before each call runs.

Side-effect policies (:class:`~toolrelay.gateway._policy.ToolPolicy`) give a tool the
metadata the gateway assumes about it (approval, idempotency key, destructive...) before the
call reaches the hooks and the manager's interceptors.

The caller's :class:`~toolrelay.tools.ToolContext` comes from the MCP request's ``_meta``,
with the gateway's configured context on top (see :mod:`toolrelay.mcp._context`). Calls run
through a :class:`~toolrelay.execution.ToolCallingManager`: argument validation, timeouts and
error feedback as in the tool loop, and whatever interceptors the manager is given (approval,
idempotency, audit) apply to gateway calls as well.

The catalogs are read on every request: when an MCP server's tools change, the next request
re-indexes (the index rebuilds only when the fingerprint changed).

What the client reads besides the catalog (the two tools' descriptions, the "not available"
answer, the server's instructions) is in the catalog's language by default, English or
Chinese, as under the in-process tool search (:mod:`toolrelay.gateway._texts`).
"""

from __future__ import annotations

import contextlib
import itertools
import json
import logging
from collections import OrderedDict
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from mcp_types import ToolAnnotations

from toolrelay._storable import valid_unicode
from toolrelay.exceptions import ConfigurationError, ToolExecutionError
from toolrelay.execution import (
    AuthorizationInterceptor,
    ToolCallingManager,
    ToolCallStatus,
)
from toolrelay.gateway._annotations import MAY_DO_ANYTHING, as_run, most_of
from toolrelay.gateway._parameters import SearchText
from toolrelay.gateway._policy import ToolPolicy, apply_policies
from toolrelay.gateway._side_effects import PENDING_APPROVAL_TEXT, gateway_guards
from toolrelay.gateway._texts import (
    GatewayTexts,
    GatewayTextSelector,
    described_tools,
)
from toolrelay.mcp._live_catalog import LiveToolCatalog
from toolrelay.messages import ToolCall
from toolrelay.search._base import DEFAULT_MAX_RESULTS, SearchRequest, ToolIndex
from toolrelay.search._usage import UsageLog
from toolrelay.tools import Tool, ToolCatalog, ToolContext
from toolrelay.tools._base import (
    ToolDefinition,
    ToolMetadata,
    ValidatedArguments,
    ValidatingTool,
)
from toolrelay.tools._workers import SyncRunner
from toolrelay.toolsearch import DEFAULT_MIN_RELATIVE_SCORE
from toolrelay.toolsearch._access import (
    Authorizer,
    CatalogSnapshot,
    CatalogView,
    ToolFilter,
    unavailable_text,
)
from toolrelay.toolsearch._learning import (
    UsageRecorder,
    check_usage_options,
    read_history,
    usage_scope,
)
from toolrelay.toolsearch._proxy import CallArguments, resolve_called
from toolrelay.toolsearch._search_tool import (
    CALL_TOOL_NAME,
    SearchRunner,
    check_search_options,
    definition_hit,
    definitions_answer,
)
from toolrelay.toolsearch._texts import FROM_LANGUAGE, FromLanguage, SearchLanguage

__all__ = ["CALL_TOOL_NAME", "FoundTool", "GatewayCallResult", "ToolGateway"]

_log = logging.getLogger("toolrelay.gateway")


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
            ``"pending_approval"``...; ``"unavailable"`` for a name the caller cannot use).
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
        index: The search index; BM25 when omitted. Give each gateway its own.
        tool_filter: Which tools a caller may see and run.
        authorize: Whether a call may run (``True``, or ``False``/a reason to deny).
        max_results: Hits per search when the client does not say (1-10).
        min_score: Drop hits scoring below this, on the index's own scale.
        min_relative_score: Drop hits scoring below this fraction of the best hit's score
            (0-1; ``None`` keeps them). Every hit is a whole definition, input schema
            included, that the client pays for in tokens, so weak ones are left out by
            default: 0.5, as in :class:`~toolrelay.client.ToolSearchAdvisor`, whose docs and
            docs/tool-search.md give what the cut-off costs in recall.
        tool_calling_manager: Runs the calls, with its interceptors. When omitted, one with
            the gateway's default guards (:func:`gateway_guards
            <toolrelay.gateway._side_effects.gateway_guards>`): results of idempotent
            tools recorded in memory, no approval: a tool that requires it refuses the
            gateway at build, or each call when it appears later; results longer than
            :data:`~toolrelay.execution.DEFAULT_MAX_RESULT_CHARS` cut, with a note.
        language: The language of what clients read besides the catalog: ``"auto"`` (the
            catalogs' language, English or Chinese), ``"en"``, ``"zh"``, or
            :class:`~toolrelay.gateway._texts.GatewayTexts` of your own.
        unavailable_message: The answer to a name the caller cannot use (``{name}`` and
            ``{search_tool}`` are filled in); by default the language's.
        policies: Side-effect policies per tool name or pattern (see
            :mod:`toolrelay.gateway._policy`).
        usage_log: Where past searches that led to successful calls are kept
            (:class:`~toolrelay.search.UsageLog`): searches rank with the caller's tenant's
            history, and a successful call of a tool that one of the same caller's recent
            searches found (same tenant, user and session in the tool context) is recorded
            with that search's query.
        shared_usage: One history for every tenant instead of one per tenant.

    Raises:
        ConfigurationError: ``max_results`` or ``min_relative_score`` is out of range,
            ``language`` is unknown, or the usage options cannot be honoured (``shared_usage``
            without a ``usage_log``, or a log with an index that does not rank with history).
    """

    def __init__(
        self,
        catalogs: ToolCatalog | Sequence[ToolCatalog],
        *,
        index: ToolIndex | None = None,
        tool_filter: ToolFilter | None = None,
        authorize: Authorizer | None = None,
        max_results: int = DEFAULT_MAX_RESULTS,
        min_score: float | None = None,
        min_relative_score: float | None = DEFAULT_MIN_RELATIVE_SCORE,
        tool_calling_manager: ToolCallingManager | None = None,
        language: SearchLanguage | GatewayTexts = "auto",
        unavailable_message: str | FromLanguage = FROM_LANGUAGE,
        policies: Sequence[ToolPolicy] = (),
        usage_log: UsageLog | None = None,
        shared_usage: bool = False,
    ) -> None:
        check_search_options(max_results, min_relative_score)
        self.usage_log = usage_log
        self.shared_usage = shared_usage
        # What each caller's recent searches found, for recording their calls (bounded).
        self._recorders: OrderedDict[tuple[str, str, str], UsageRecorder] = OrderedDict()
        self.catalogs = (catalogs,) if isinstance(catalogs, ToolCatalog) else tuple(catalogs)
        if index is None:
            from toolrelay.search._factory import lexical_index

            index = lexical_index()
        self.index = index
        self._runner = SearchRunner(index)
        check_usage_options(index, usage_log, shared_usage)
        self.tool_filter = tool_filter
        self.authorize = authorize
        self.max_results = max_results
        self.min_score = min_score
        self.min_relative_score = min_relative_score
        self.manager = tool_calling_manager or ToolCallingManager(**gateway_guards())
        self.policies = tuple(policies)
        # A tool that requires approval (as its policy leaves it) where no approval is
        # configured could never run. A policy that does not fit its tool is check_policies'.
        runs = []
        for tool in (tool for catalog in self.catalogs for tool in catalog):
            with contextlib.suppress(ConfigurationError):
                tool = apply_policies(tool, self.policies)
            runs.append(tool)
        try:
            self.manager.check_tools(runs, owner="ToolCallingManager")
        except ConfigurationError as exc:
            raise ConfigurationError(
                f"{exc}; give the gateway ToolGateway(..., tool_calling_manager=manager) (or "
                "the [approval] handler of its configuration file)"
            ) from None
        self.language = language
        self._texts = GatewayTextSelector(language, unavailable_message)
        self._snapshot: CatalogSnapshot | None = None
        self._call_tool_metadata: tuple[tuple[Tool, ...], ToolMetadata] | None = None
        self._call_ids = itertools.count(1)

    async def snapshot(self) -> CatalogSnapshot:
        """The catalogs as indexed now, re-indexed first when their tools changed.

        Raises:
            DuplicateToolError: Two catalogs hold tools with the same name.
            ConfigurationError: A tool is named ``tool_search``.
        """
        tools = tuple(tool for catalog in self.catalogs for tool in catalog)
        if self._snapshot is not None and self._snapshot.holds(tools):
            return self._snapshot
        if len(self.catalogs) > 1:
            ToolCatalog.merged(*self.catalogs)  # raises, naming both sources, on a clash
        # Two requests may both get here; indexing is idempotent, so both get the same index.
        snapshot, _ = await CatalogSnapshot.indexed(tools, self.index, ())
        self._snapshot = snapshot
        return snapshot

    async def search(
        self,
        query: str,
        *,
        max_results: int | None = None,
        category: str | None = None,
        context: ToolContext | None = None,
    ) -> list[FoundTool]:
        """The best tools for ``query`` that the caller with ``context`` may see."""
        snapshot = await self.snapshot()
        context = context or ToolContext()
        view = CatalogView(snapshot, context, self.tool_filter)
        recorder = self._recorder(context)
        history = None if recorder is None else await read_history(self.usage_log, recorder.scope)
        request = SearchRequest(
            # Embedders and tokenizers need valid Unicode: a lone surrogate becomes U+FFFD.
            query=valid_unicode(query),
            max_results=max_results if max_results is not None else self.max_results,
            min_score=self.min_score,
            min_relative_score=self.min_relative_score,
            allowed=view.allowed(),
            category=category or None,
            history=history,
        )
        # Off the loop unless the index answers faster than a thread hop.
        response = await self._runner.search(request)
        if recorder is not None:
            recorder.found(query, response.names)
        found = []
        for hit in response.hits:
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
        arguments: Mapping[str, Any] | None = None,
        *,
        context: ToolContext | None = None,
    ) -> GatewayCallResult:
        """Run the tool ``name`` (canonical or provider-safe) for the caller with ``context``."""
        context = context or ToolContext()
        snapshot = await self.snapshot()
        view = CatalogView(snapshot, context, self.tool_filter)
        tool = resolve_called(name, snapshot.tools, view.permits)
        if tool is None:
            template = self._texts.for_catalog(snapshot.definitions).search.unavailable_message
            text = unavailable_text(template, name)
            return GatewayCallResult(text=text, is_error=True, status="unavailable")
        try:
            tool = apply_policies(tool, self.policies)
        except ConfigurationError as exc:
            # The tools changed since the policies were checked; the operator must fix them.
            _log.error("gateway policy: %s", exc)
            exact = tool.definition.name
            return GatewayCallResult(
                text=f"Tool {exact!r} did not run: the gateway's policy for it is invalid.",
                is_error=True,
                status=str(ToolCallStatus.ERROR),
                tool=exact,
            )
        call = ToolCall(
            id=f"gateway_{next(self._call_ids)}",
            name=tool.definition.name,
            arguments=json.dumps(dict(arguments or {}), ensure_ascii=False),
        )
        checks = [] if self.authorize is None else [AuthorizationInterceptor(self.authorize)]
        outcome = await self.manager.run_call(call, (tool,), context, interceptors=checks)
        recorder = self._recorder(context)
        if recorder is not None:
            await recorder.record(self.usage_log, [(outcome.tool_name, outcome.status)])
        text = outcome.response.data
        if outcome.status is ToolCallStatus.PENDING_APPROVAL:
            # Nothing resumes a call here: the client must make it again once approved.
            text = PENDING_APPROVAL_TEXT.format(name=tool.definition.name)
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

    def texts(self) -> GatewayTexts:
        """What clients read besides the catalog, in the language of the catalogs now."""
        snapshot = self._snapshot
        tools = [tool for catalog in self.catalogs for tool in catalog]
        if snapshot is not None and snapshot.holds(tools):
            definitions: Sequence[ToolDefinition] = snapshot.definitions
        else:
            definitions = [tool.definition for tool in tools]
        return self._texts.for_catalog(definitions)

    def tools(self) -> list[Tool]:
        """The two tools an MCP client sees: ``tool_search`` and ``call_tool``.

        Their texts are in the language of the catalogs when this is called (for a served
        gateway: once its sources are listed, before the first client arrives). The metadata
        of ``call_tool`` is :meth:`call_tool_metadata`, read whenever a client lists it.
        """
        search, call = described_tools(self.texts(), self._tool_search, self._call_tool)
        return [search, _CallTool(call, self)]

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
        listed ``call_tool``.
        """
        if any(isinstance(catalog, LiveToolCatalog) for catalog in self.catalogs):
            return MAY_DO_ANYTHING
        tools = tuple(tool for catalog in self.catalogs for tool in catalog)
        cached = self._call_tool_metadata
        if cached is not None and _same_tools(cached[0], tools):
            return cached[1]
        metadata = most_of([self.annotations(tool) for tool in tools])
        self._call_tool_metadata = (tools, metadata)
        return metadata

    def _published(self, tool: Tool) -> tuple[ToolAnnotations, bool]:
        """``tool``'s annotations as the gateway runs it, and whether it asks for approval."""
        try:
            run = apply_policies(tool, self.policies)
        except ConfigurationError:
            run = tool  # its calls are refused until the policy is fixed (see call)
        return as_run(tool, run, self.manager)

    # --- the client-facing functions ------------------------------------------------------

    async def _tool_search(
        self,
        query: SearchText,
        max_results: int | None = None,
        category: SearchText | None = None,
        context: ToolContext | None = None,
    ) -> str:
        """Search the tool catalog.

        Args:
            query: A few words for the action you need and its object, e.g. 'cancel order'.
            max_results: How many tools to return (1-10).
            category: Only tools of this category, e.g. 'payments' for 'payments.*' tools.
            context: The caller's tool context (from the request, never in the schema).
        """
        found = await self.search(
            query, max_results=max_results, category=category, context=context
        )
        return definitions_answer([hit.as_json() for hit in found])

    async def _call_tool(
        self,
        name: str,
        arguments: CallArguments = {},  # noqa: B006 - the schema's default; copied per call
        context: ToolContext | None = None,
    ) -> str:
        """Run a tool found with tool_search.

        Args:
            name: The tool's exact name, as tool_search returned it.
            arguments: The tool's arguments, following its input_schema: an object, or a
                JSON text of one.
            context: The caller's tool context (from the request, never in the schema).
        """
        result = await self.call(name, arguments, context=context)
        if result.is_error:
            # Raising marks the MCP result as an error; the text is what the client reads.
            raise ToolExecutionError(result.tool or name, result.text)
        return result.text

    def _recorder(self, context: ToolContext) -> UsageRecorder | None:
        """The caller's recorder (by tenant, user and session), or ``None`` without a log."""
        if self.usage_log is None:
            return None
        scope = usage_scope(context, shared=self.shared_usage)
        key = (scope, str(context.user_id or ""), str(context.session_id or ""))
        recorder = self._recorders.pop(key, None) or UsageRecorder(scope=scope)
        self._recorders[key] = recorder
        if len(self._recorders) > _MAX_CALLERS:
            self._recorders.popitem(last=False)
        return recorder


_MAX_CALLERS = 10_000  # callers whose recent searches are remembered for recording


def _same_tools(before: Sequence[Tool], now: Sequence[Tool]) -> bool:
    return len(before) == len(now) and all(a is b for a, b in zip(before, now, strict=True))


class _CallTool:
    """``call_tool`` with the metadata of what it can run now (see ``call_tool_metadata``)."""

    def __init__(self, tool: ValidatingTool, gateway: ToolGateway) -> None:
        self._tool = tool
        self._gateway = gateway

    @property
    def definition(self) -> ToolDefinition:
        return self._tool.definition

    @property
    def metadata(self) -> ToolMetadata:
        return self._gateway.call_tool_metadata()

    async def call(self, arguments_json: str, context: ToolContext | None = None) -> str:
        return await self._tool.call(arguments_json, context)

    # Validated as the function behind it validates (arguments as an object or as JSON text),
    # by the manager of an MCP server that serves it.
    def validate_arguments(self, arguments: Mapping[str, Any]) -> ValidatedArguments:
        return self._tool.validate_arguments(arguments)

    async def call_validated(
        self,
        arguments: ValidatedArguments,
        context: ToolContext | None = None,
        *,
        workers: SyncRunner | None = None,
    ) -> str:
        return await self._tool.call_validated(arguments, context, workers=workers)

    def __repr__(self) -> str:
        return f"_CallTool({self._gateway!r})"
