"""Every door a tool runs through, each calling a tool as its own caller would.

:func:`open_door` builds one place (:data:`PLACES`) over a catalog, with the guard options
given as keywords, as its users build it, and returns a :class:`Door`. ``Door.call`` calls a
tool of the catalog as a model or a client does there, and returns what the caller reads and
whether it is an error (``None`` where the door hands over the text alone: converted tools):

- ``run_call``: ``ToolCallingManager.run_call``;
- ``loop``: the client's tool loop, the model calling the tool it is shown;
- ``search`` and ``search_proxy``: the client with tool search, channel ``"rewrite"`` (the
  model calls the tool it found) and ``"proxy"`` (through ``call_tool``);
- ``bridge``: the bridges' core, ``BridgeSearch.call``;
- ``gateway``: ``ToolGateway.call``; ``served_gateway``: the gateway served over MCP to the
  SDK's in-process client; ``tools_server``: ``tools_server`` served the same way;
- ``langchain``, ``pydantic_ai``, ``openai_agents``: the tool converted twice (two
  conversions in one process, called alternately), each call made by the framework: LangChain's
  ``ainvoke``, a pydantic-ai ``Agent`` and an Agents SDK ``Runner`` with a scripted model.

A door whose extra is not installed is left out of :data:`PLACES` (README's plain install
runs the rest). The doors with ``call_tool`` (:data:`CALL_TOOL_DOORS`) also take a call of it
in any shape (``Door.call_tool``); those whose search answers carry definitions
(:data:`DEFINITION_DOORS`) answer a search (``Door.search``).
"""

from __future__ import annotations

import contextlib
import importlib.util
import itertools
import json
from collections.abc import Mapping, Sequence
from typing import Any

from tests.search_only import SEARCH_ONLY
from toolrelay import ChatClient, ToolContext, ToolSearchAdvisor
from toolrelay.bridges import BridgeSearch
from toolrelay.client import ChatClientResponse
from toolrelay.execution import ToolCallingManager
from toolrelay.messages import ChatResponse, ToolCall
from toolrelay.search import BM25ToolIndex, UsageLog
from toolrelay.testing import FunctionModel, tool_call_response
from toolrelay.tools import Tool, ToolCatalog, provider_safe_name
from toolrelay.toolsearch import CALL_TOOL_NAME, TOOL_SEARCH_NAME, SearchOptions

__all__ = [
    "CALL_TOOL_DOORS",
    "CLIENT_DOORS",
    "CONVERTED_DOORS",
    "DEFINITION_DOORS",
    "PLACES",
    "SERVER_DOORS",
    "Answer",
    "Door",
    "open_door",
]

Answer = tuple[str, bool | None]
"""What the caller reads, and whether it is an error (``None``: the door does not say)."""

Step = ChatResponse | str  # a scripted model's answer


def _installed(module: str) -> bool:
    return importlib.util.find_spec(module) is not None


PLACES: tuple[str, ...] = (
    ("run_call", "loop", "search", "search_proxy", "bridge")
    + (("gateway", "served_gateway", "tools_server") if _installed("mcp") else ())
    + (("langchain",) if _installed("langgraph") else ())
    + (("pydantic_ai",) if _installed("pydantic_ai") else ())
    + (("openai_agents",) if _installed("agents") else ())
)
"""The doors this installation has."""

CLIENT_DOORS = ("loop", "search", "search_proxy")
SERVER_DOORS = ("served_gateway", "tools_server")  # a caller's mistake is an error result there
CALL_TOOL_DOORS = tuple(p for p in ("search_proxy", "gateway", "served_gateway") if p in PLACES)
DEFINITION_DOORS = CALL_TOOL_DOORS  # search answers that carry whole definitions
CONVERTED_DOORS = ("langchain", "pydantic_ai", "openai_agents")


class Door:
    """One place a tool runs, built over a catalog (see the module docs)."""

    place: str
    gateway: Any = None  # the gateway's doors: their ToolGateway

    async def call(
        self, tool: Tool, arguments: Mapping[str, Any] | str, context: dict[str, Any]
    ) -> Answer:
        """Call ``tool`` with ``arguments`` (an object, or its JSON text) as the caller would."""
        raise NotImplementedError

    async def call_tool(self, arguments: object, context: dict[str, Any], *, found: Tool) -> Answer:
        """Call ``call_tool`` with ``arguments`` as given (``found``: the tool to search first)."""
        raise NotImplementedError(self.place)

    async def search(self, query: str, max_results: int, context: dict[str, Any]) -> str:
        """The answer of ``tool_search`` for ``query``."""
        raise NotImplementedError(self.place)

    async def turn(self, script: Sequence[Step], context: dict[str, Any]) -> ChatClientResponse:
        """The client's doors: one turn, the model answering with ``script``."""
        raise NotImplementedError(self.place)


async def open_door(
    place: str,
    approval: Any,
    catalog: ToolCatalog,
    stack: contextlib.AsyncExitStack,
    *,
    bound: int | None = None,
    usage_log: UsageLog | None = None,
) -> Door:
    """The door ``place`` over ``catalog``, with ``approval=`` as its guard option.

    ``bound``: the manager's ``max_result_chars`` (its default when ``None``); ``usage_log``:
    the search options' (gateway doors). What must be closed goes on ``stack``.

    Raises:
        ConfigurationError: The door refuses to build (a tool requires approval, and none is
            configured).
    """
    door: Door
    if place == "run_call":
        door = _RunCall(_manager(approval, bound), catalog)
    elif place in CLIENT_DOORS:
        door = _Client(place, approval, catalog, bound)
    elif place == "bridge":
        door = _Bridge(BridgeSearch(catalog, index=BM25ToolIndex(), approval=approval))
    elif place in ("gateway", "served_gateway"):
        door = await _gateway(place, approval, catalog, stack, bound, usage_log)
    elif place == "tools_server":
        from mcp import Client

        from toolrelay.mcp import tools_server

        server = tools_server(catalog, approval=approval)
        door = _Served(place, await stack.enter_async_context(Client(server)))
    elif place in CONVERTED_DOORS:
        door = _Converted(place, approval, catalog)
    else:
        raise ValueError(f"no door {place!r}; one of {PLACES}")
    door.place = place
    return door


def _manager(approval: Any, bound: int | None) -> ToolCallingManager:
    if bound is None:
        return ToolCallingManager(approval=approval)
    return ToolCallingManager(approval=approval, max_result_chars=bound)


class _RunCall(Door):
    def __init__(self, manager: ToolCallingManager, catalog: ToolCatalog) -> None:
        manager.check_tools(catalog, owner="ToolCallingManager")
        self.manager, self.catalog = manager, catalog
        self.ids = itertools.count(1)

    async def call(
        self, tool: Tool, arguments: Mapping[str, Any] | str, context: dict[str, Any]
    ) -> Answer:
        text = arguments if isinstance(arguments, str) else json.dumps(arguments)
        call = ToolCall(id=f"c{next(self.ids)}", name=tool.definition.name, arguments=text)
        outcome = await self.manager.run_call(call, tuple(self.catalog), ToolContext(context))
        return outcome.response.data, outcome.response.is_error


class _Client(Door):
    """The client's tool loop: plain, or with tool search in either channel."""

    def __init__(self, place: str, approval: Any, catalog: ToolCatalog, bound: int | None) -> None:
        self.queue: list[Step] = []
        model = FunctionModel(lambda prompt: self.queue.pop(0))
        guards: dict[str, Any] = (
            {"approval": approval}
            if bound is None
            else {"tool_calling_manager": _manager(approval, bound)}
        )
        if place == "loop":
            self.client = ChatClient(model, tools=catalog, **guards)
        else:
            channel = "proxy" if place == "search_proxy" else "rewrite"
            search = ToolSearchAdvisor(
                catalog, index=BM25ToolIndex(), retention="all", channel=channel, **SEARCH_ONLY
            )
            self.client = ChatClient(model, advisors=[search], **guards)
        self.proxy = place == "search_proxy"
        self.turns = itertools.count(1)

    async def turn(self, script: Sequence[Step], context: dict[str, Any]) -> ChatClientResponse:
        """One turn of a conversation of its own, the model answering with ``script``."""
        self.queue[:] = script
        conversation = f"turn-{next(self.turns)}"
        request = self.client.prompt("go").conversation(conversation).tool_context(context)
        return await request.acall()

    def searched(self, tool: Tool) -> list[Step]:
        """The model's search for ``tool`` (by its description), where it must search first."""
        if self.place == "loop":
            return []
        query = {"queries": [tool.definition.description]}
        return [tool_call_response((TOOL_SEARCH_NAME, query))]

    async def call(
        self, tool: Tool, arguments: Mapping[str, Any] | str, context: dict[str, Any]
    ) -> Answer:
        name = tool.definition.name
        if self.proxy:
            called = tool_call_response((CALL_TOOL_NAME, {"name": name, "arguments": arguments}))
        else:
            called = tool_call_response((provider_safe_name(name), arguments))
        return _last(await self.turn([*self.searched(tool), called, "done"], context))

    async def call_tool(self, arguments: object, context: dict[str, Any], *, found: Tool) -> Answer:
        called = ToolCall(id="", name=CALL_TOOL_NAME, arguments=arguments)  # type: ignore[arg-type]
        return _last(
            await self.turn([*self.searched(found), tool_call_response(called), "done"], context)
        )


def _last(response: ChatClientResponse) -> Answer:
    """The answer to the turn's last call; a turn waiting for a person has none."""
    if response.pending_approvals:
        return "waiting for approval", True
    loop = response.tool_loop
    assert loop is not None, response
    assert loop.rounds, response
    outcome = loop.rounds[-1].outcomes[-1]
    return outcome.response.data, outcome.response.is_error


class _Bridge(Door):
    def __init__(self, bridge: BridgeSearch) -> None:
        self.bridge = bridge

    async def call(
        self, tool: Tool, arguments: Mapping[str, Any] | str, context: dict[str, Any]
    ) -> Answer:
        name = tool.definition.name
        result = await self.bridge.call(
            name, arguments, key=None, context=ToolContext(context), discovered=[name]
        )
        return result.text, result.is_error


async def _gateway(
    place: str,
    approval: Any,
    catalog: ToolCatalog,
    stack: contextlib.AsyncExitStack,
    bound: int | None,
    usage_log: UsageLog | None,
) -> Door:
    from toolrelay.gateway import GatewayConfig, ToolGateway, gateway_server

    options = SearchOptions(usage_log=usage_log)
    if bound is None:
        gateway = ToolGateway(catalog, options=options, index=BM25ToolIndex(), approval=approval)
    else:
        manager = _manager(approval, bound)
        gateway = ToolGateway(
            catalog, options=options, index=BM25ToolIndex(), tool_calling_manager=manager
        )
    if place == "gateway":
        return _Gateway(gateway)
    from mcp import Client

    server = gateway_server(gateway, GatewayConfig(modules=("in_process",)))
    return _Served(place, await stack.enter_async_context(Client(server)), gateway)


class _Gateway(Door):
    """``ToolGateway.call``; ``call_tool`` in another shape answered as a served one is."""

    def __init__(self, gateway: Any) -> None:
        self.gateway = gateway
        self.ids = itertools.count(1)

    async def call(
        self, tool: Tool, arguments: Mapping[str, Any] | str, context: dict[str, Any]
    ) -> Answer:
        result = await self.gateway.call(
            tool.definition.name, arguments, context=ToolContext(context)
        )
        return result.text, result.is_error

    async def call_tool(self, arguments: object, context: dict[str, Any], *, found: Tool) -> Answer:
        if (
            isinstance(arguments, dict)
            and "name" in arguments
            and set(arguments) <= {"name", "arguments"}
        ):
            result = await self.gateway.call(
                arguments["name"], arguments.get("arguments"), context=ToolContext(context)
            )
        else:  # what ToolGateway.call cannot be given: the call as a client sends it
            call = ToolCall(id=f"g{next(self.ids)}", name=CALL_TOOL_NAME, arguments=arguments)  # type: ignore[arg-type]
            _, forwarding = self.gateway.tools()
            result = await self.gateway.answer(call, forwarding, ToolContext(context))
        return result.text, result.is_error

    async def search(self, query: str, max_results: int, context: dict[str, Any]) -> str:
        search, _ = self.gateway.tools()
        call = ToolCall(
            id=f"g{next(self.ids)}",
            name=TOOL_SEARCH_NAME,
            arguments=json.dumps({"queries": [query], "max_results": max_results}),
        )
        return str((await self.gateway.answer(call, search, ToolContext(context))).text)


class _Served(Door):
    """An MCP server (``tools_server`` or the gateway's) and the SDK's in-process client."""

    def __init__(self, place: str, client: Any, gateway: Any = None) -> None:
        self.place, self.client, self.gateway = place, client, gateway

    async def _called(self, name: str, arguments: object, context: dict[str, Any]) -> Answer:
        result = await self.client.call_tool(name, arguments, meta=context or None)
        [block] = result.content
        return block.text, bool(result.is_error)

    async def call(
        self, tool: Tool, arguments: Mapping[str, Any] | str, context: dict[str, Any]
    ) -> Answer:
        values = json.loads(arguments) if isinstance(arguments, str) else dict(arguments)
        if self.gateway is None:
            return await self._called(tool.definition.name, values, context)
        forwarded = {"name": tool.definition.name, "arguments": values}
        return await self._called(CALL_TOOL_NAME, forwarded, context)

    async def call_tool(self, arguments: object, context: dict[str, Any], *, found: Tool) -> Answer:
        return await self._called(CALL_TOOL_NAME, arguments, context)

    async def search(self, query: str, max_results: int, context: dict[str, Any]) -> str:
        arguments = {"queries": [query], "max_results": max_results}
        return (await self._called(TOOL_SEARCH_NAME, arguments, context))[0]


class _Converted(Door):
    """Each tool converted twice for a framework; calls alternate between the conversions."""

    def __init__(self, place: str, approval: Any, catalog: ToolCatalog) -> None:
        self.place = place
        convert = _converter(place)
        guards = {} if approval is None else {"approval": approval}
        self.tools = {
            t.definition.name: (convert(t, **guards), convert(t, **guards)) for t in catalog
        }
        self.calls = itertools.count()

    async def call(
        self, tool: Tool, arguments: Mapping[str, Any] | str, context: dict[str, Any]
    ) -> Answer:
        converted = self.tools[tool.definition.name][next(self.calls) % 2]
        values = json.loads(arguments) if isinstance(arguments, str) else dict(arguments)
        if self.place == "langchain":
            config = {"configurable": {"tool_context": context}}
            return str(await converted.ainvoke(values, config)), None
        if self.place == "pydantic_ai":
            return await _pydantic_ai_call(converted, arguments, context), None
        return await _agents_call(converted, arguments, context), None


def _converter(place: str) -> Any:
    if place == "langchain":
        from toolrelay.bridges.langgraph import to_langchain

        return to_langchain
    if place == "pydantic_ai":
        from toolrelay.bridges.pydantic_ai import to_pydantic_ai

        return to_pydantic_ai
    from agents import set_tracing_disabled

    from toolrelay.bridges.openai_agents import to_openai_agents

    set_tracing_disabled(True)  # nothing to export traces to: no provider runs here
    return to_openai_agents


async def _pydantic_ai_call(
    converted: Any, arguments: Mapping[str, Any] | str, context: dict[str, Any]
) -> str:
    """One run of a pydantic-ai agent whose model calls ``converted`` once, then answers."""
    from pydantic_ai import Agent, DeferredToolRequests
    from pydantic_ai.messages import ModelResponse, TextPart, ToolCallPart, ToolReturnPart
    from pydantic_ai.models.function import AgentInfo, FunctionModel

    def model(messages: list[Any], info: AgentInfo) -> ModelResponse:
        if len(messages) == 1:
            args = arguments if isinstance(arguments, str) else dict(arguments)
            return ModelResponse(parts=[ToolCallPart(converted.name, args, tool_call_id="c1")])
        return ModelResponse(parts=[TextPart("done")])

    agent = Agent(FunctionModel(model), tools=[converted], output_type=[str, DeferredToolRequests])
    result = await agent.run("go", deps=context or None)
    if isinstance(result.output, DeferredToolRequests):
        return "waiting for approval"
    returned = [
        part.content
        for message in result.all_messages()
        for part in message.parts
        if isinstance(part, ToolReturnPart)
    ]
    return str(returned[-1])


async def _agents_call(
    converted: Any, arguments: Mapping[str, Any] | str, context: dict[str, Any]
) -> str:
    """One run of an Agents SDK agent whose model calls ``converted`` once, then answers."""
    from agents import Agent, Model, ModelResponse, Runner, Usage
    from openai.types.responses import (
        ResponseFunctionToolCall,
        ResponseOutputMessage,
        ResponseOutputText,
    )

    text = arguments if isinstance(arguments, str) else json.dumps(dict(arguments))

    class Scripted(Model):
        asked = 0

        async def get_response(self, *args: Any, **kwargs: Any) -> ModelResponse:
            self.asked += 1
            output: Any = (
                ResponseFunctionToolCall(
                    id="fc_1",
                    call_id="call_1",
                    type="function_call",
                    name=converted.name,
                    arguments=text,
                )
                if self.asked == 1
                else ResponseOutputMessage(
                    id="msg",
                    type="message",
                    role="assistant",
                    status="completed",
                    content=[
                        ResponseOutputText(
                            text="done", type="output_text", annotations=[], logprobs=[]
                        )
                    ],
                )
            )
            return ModelResponse(output=[output], usage=Usage(), response_id=None)

        def stream_response(self, *args: Any, **kwargs: Any) -> Any:
            raise NotImplementedError

    agent = Agent(name="desk", model=Scripted(), tools=[converted])
    result = await Runner.run(agent, "go", context=context)
    if result.interruptions:
        return "waiting for approval"
    outputs = [str(i.output) for i in result.new_items if i.type == "tool_call_output_item"]
    return outputs[-1]
