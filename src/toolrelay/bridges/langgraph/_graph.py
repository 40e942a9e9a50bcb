"""toolrelay's retrieval and guarded calls in a LangGraph graph.

- :class:`ToolRelayNode`: the node that answers the tool calls of the last ``AIMessage``,
  where langgraph's prebuilt ``ToolNode`` goes (after ``tools_condition``; it returns
  ``{"messages": [ToolMessage, ...]}``); ``ToolRelayNode(...).as_runnable()`` also runs in a
  graph invoked synchronously. The search tool's calls search; every other call runs
  through :meth:`~toolrelay.bridges.BridgeSearch.call`: only tools the thread has discovered
  and the caller may see run, ``authorize`` is asked, then the manager's guards (audit,
  your interceptors, idempotency, approval). A call that waits for a person (the search's
  ``approval=ApprovalInterceptor()``) stops the graph with ``interrupt(...)`` (the graph needs a
  checkpointer); resuming with ``Command(resume=True)`` runs it, ``False`` denies it. No
  call of the step runs before every decision is in.
- :func:`bound_tools`: what the model node binds at each step: the search tool and the
  thread's discovered tools the caller may see.
- :func:`create_agent`: langgraph-bigtool's ``create_agent`` (same arguments, same state
  with ``selected_tool_ids``) with toolrelay's retrieval and this node, so a bigtool user
  swaps in toolrelay by changing one import.
- :func:`retrieve_tools_functions`: the ``(function, coroutine)`` pair bigtool's own
  ``create_agent`` takes as ``retrieve_tools_function``/``retrieve_tools_coroutine``.

A thread's discoveries are kept in the :class:`~toolrelay.bridges.BridgeSearch`'s session
store under the config's ``thread_id`` (scoped by the tool context's tenant); the tool
context is the config's ``configurable["tool_context"]`` unless ``context=`` says otherwise.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Annotated, Any, Unpack

from langchain_core.language_models import BaseChatModel
from langchain_core.messages import AIMessage, AnyMessage, ToolMessage
from langchain_core.runnables import RunnableConfig, RunnableLambda
from langchain_core.tools import BaseTool, StructuredTool
from langgraph.graph import END, MessagesState, StateGraph
from langgraph.prebuilt import tools_condition
from langgraph.types import interrupt

from toolrelay._sync import run_sync
from toolrelay.bridges._search import BridgeSearch, conversation_key
from toolrelay.bridges.langgraph._convert import ContextOf, from_langchain, tool_context
from toolrelay.exceptions import ConfigurationError
from toolrelay.execution import (
    GuardOptions,
)
from toolrelay.execution._pipeline import given_guards
from toolrelay.tools import Tool, ToolContext, provider_safe_name
from toolrelay.toolsearch import TOOL_SEARCH_NAME, SearchOptions

__all__ = [
    "BIGTOOL_SEARCH_NAME",
    "ToolRelayNode",
    "bound_tools",
    "create_agent",
    "retrieve_tools_functions",
    "thread_key",
]

BIGTOOL_SEARCH_NAME = "retrieve_tools"
"""The name langgraph-bigtool gives its retrieval tool, kept by :func:`create_agent`."""


def thread_key(config: RunnableConfig, context: ToolContext) -> str:
    """The session key of the config's thread (``configurable["thread_id"]``).

    Raises:
        ConfigurationError: The config names no thread.
    """
    thread = (config.get("configurable") or {}).get("thread_id")
    if thread is None or thread == "":
        raise ConfigurationError(
            "toolrelay keeps each thread's discovered tools under its thread_id: invoke the "
            'graph with config={"configurable": {"thread_id": "..."}}'
        )
    return conversation_key(str(thread), context)


def _schema(tool: Tool, name: str | None = None) -> dict[str, Any]:
    definition = tool.definition
    return {
        "type": "function",
        "function": {
            "name": name or provider_safe_name(definition.name),
            "description": definition.description,
            "parameters": dict(definition.input_schema),
        },
    }


async def bound_tools(
    search: BridgeSearch,
    config: RunnableConfig,
    *,
    context: ContextOf | None = None,
    search_name: str = TOOL_SEARCH_NAME,
) -> list[dict[str, Any]]:
    """The tools to bind for the model's next step, in OpenAI's function format.

    The search tool (named ``search_name``) first, then the thread's discovered tools the
    caller may see, in discovery order.
    """
    tool_context_ = tool_context(config, context)
    key = thread_key(config, tool_context_)
    tools = [_schema(search.search_tool(), search_name)]
    tools.extend(_schema(tool) for tool in await search.shown(key, tool_context_))
    return tools


class ToolRelayNode:
    """Answers the last ``AIMessage``'s tool calls with toolrelay (see the module docs).

    Args:
        search: The catalog, index, sessions and execution rules.
        context: A call's tool context from the graph's ``RunnableConfig``; by default
            ``configurable["tool_context"]``.
        search_name: The name the model calls the search tool by.
        messages_key: The state's key of the messages.
    """

    def __init__(
        self,
        search: BridgeSearch,
        *,
        context: ContextOf | None = None,
        search_name: str = TOOL_SEARCH_NAME,
        messages_key: str = "messages",
    ) -> None:
        self.search = search
        self.context = context
        self.search_name = search_name
        self.messages_key = messages_key
        self.name = "tools"

    def as_runnable(self) -> RunnableLambda[Any, dict[str, Any]]:
        """This node for graphs run synchronously too (``graph.invoke`` as well as ``ainvoke``)."""

        def node(state: Any, config: RunnableConfig) -> dict[str, Any]:
            return run_sync(self(state, config))

        async def anode(state: Any, config: RunnableConfig) -> dict[str, Any]:
            return await self(state, config)

        return RunnableLambda(node, anode, name=self.name)

    async def __call__(self, state: Any, config: RunnableConfig) -> dict[str, Any]:
        """The node: one ``ToolMessage`` per call of the last ``AIMessage``, in order."""
        messages = state if isinstance(state, list) else _messages(state, self.messages_key)
        answers, _ = await self._answer(messages, config)
        return {self.messages_key: answers}

    async def _answer(
        self, messages: Sequence[AnyMessage], config: RunnableConfig
    ) -> tuple[list[AnyMessage], list[str]]:
        """The answers to the last message's calls, and what its searches found."""
        last = messages[-1] if messages else None
        if not isinstance(last, AIMessage):
            raise ConfigurationError("ToolRelayNode runs after an AIMessage with tool calls")
        context = tool_context(config, self.context)
        key = thread_key(config, context)
        calls = list(last.tool_calls)
        # Every decision first: a resumed step runs the node again from the top, and no call
        # may have run twice.
        decisions: dict[str, bool] = {}
        for call in calls:
            if call["name"] == self.search_name:
                continue
            tool = await self.search.resolve(call["name"], key=key, context=context)
            if tool is not None and self.search.needs_approval(tool):
                answer = interrupt(
                    {
                        "tool_call_id": call["id"],
                        "tool": tool.definition.name,
                        "arguments": call["args"],
                    }
                )
                decisions[str(call["id"])] = _approves(answer)
        answers: list[AnyMessage] = []
        found: list[str] = []
        for call in calls:
            call_id = str(call["id"])
            # The decoded arguments as they are: the manager reads (and bounds) them.
            if call["name"] == self.search_name:
                result = await self.search.search(call["args"], key=key, context=context)
                found.extend(result.found)
            else:
                result = await self.search.call(
                    call["name"],
                    call["args"],
                    key=key,
                    context=context,
                    call_id=call_id,
                    approved=decisions.get(call_id),
                )
            answers.append(
                ToolMessage(
                    content=result.text,
                    tool_call_id=call_id,
                    name=call["name"],
                    status="error" if result.is_error else "success",
                )
            )
        return answers, found


def _messages(state: Any, key: str) -> list[AnyMessage]:
    if isinstance(state, Mapping):
        return list(state.get(key) or [])
    return list(getattr(state, key, None) or [])


def _approves(answer: object) -> bool:
    """A resume value approves with ``True``, ``"approve"`` or ``{"approved": True}``."""
    if isinstance(answer, Mapping):
        return bool(answer.get("approved"))
    if isinstance(answer, str):
        return answer.lower() in ("approve", "approved", "yes", "y")
    return answer is True


# --- langgraph-bigtool ---------------------------------------------------------------------


def _add_new(left: list[str], right: list[str]) -> list[str]:
    return left + [item for item in right if item not in set(left)]


class State(MessagesState):
    """langgraph-bigtool's state: the messages and the ids of the tools selected so far."""

    selected_tool_ids: Annotated[list[str], _add_new]


def _registry_tools(
    tool_registry: Mapping[str, BaseTool | Callable[..., Any]],
) -> tuple[list[Tool], dict[str, str]]:
    """The registry's tools for a catalog, and each tool's registry id by its name."""
    tools: list[Tool] = []
    ids: dict[str, str] = {}
    for tool_id, item in tool_registry.items():
        lc = item if isinstance(item, BaseTool) else StructuredTool.from_function(item)
        [converted] = from_langchain([lc])
        tools.append(converted)
        ids[converted.definition.name] = tool_id
    return tools, ids


def create_agent(
    llm: BaseChatModel,
    tool_registry: Mapping[str, BaseTool | Callable[..., Any]],
    *,
    limit: int = 2,
    search: BridgeSearch | None = None,
    context: ContextOf | None = None,
    **guards: Unpack[GuardOptions],
) -> StateGraph[Any]:
    """langgraph-bigtool's agent with toolrelay's retrieval and guarded tool calls.

    The graph of ``langgraph_bigtool.create_agent``: the model starts with
    ``retrieve_tools`` only and is bound, at each step, the tools found so far; its state
    keeps ``selected_tool_ids`` (registry ids). Retrieval is toolrelay's search
    (:class:`~toolrelay.bridges.BridgeSearch`), within what the caller may see; calls run
    through :class:`ToolRelayNode`. Compile it as bigtool's (``.compile(checkpointer=...)``);
    invoke it with a ``thread_id``.

    Args:
        llm: The chat model (it must support ``bind_tools``).
        tool_registry: Tools (or functions) by id, as bigtool takes them.
        limit: Tools per retrieval when the model does not say (bigtool's ``limit``).
        search: The search and execution rules over the registry's tools (built with
            :func:`~toolrelay.bridges.langgraph.from_langchain`); by default one with the
            default options but ``max_results=limit``.
        context: A call's tool context from the ``RunnableConfig``.
        guards: For the default search: the guard options
            (:class:`~toolrelay.execution.GuardOptions`; ``approval=ApprovalInterceptor()``:
            the graph is interrupted until a person decides).

    Raises:
        ConfigurationError: ``search`` is given and its catalog lacks a registry tool, or
            with guard options (give them to the search).
    """
    catalog, ids = _registry_tools(tool_registry)
    if search is None:
        search = BridgeSearch(catalog, options=SearchOptions(max_results=limit), **guards)
    elif given_guards(guards):
        raise ConfigurationError(
            f"create_agent: {', '.join(given_guards(guards))} build the default search; with "
            "search= given, pass them to that BridgeSearch instead"
        )
    else:
        missing = [name for name in ids if search.catalog.get(name) is None]
        if missing:
            raise ConfigurationError(f"the search's catalog lacks registry tools: {missing}")
    node = ToolRelayNode(search, context=context, search_name=BIGTOOL_SEARCH_NAME)

    async def agent(state: State, config: RunnableConfig) -> dict[str, Any]:
        bound = await bound_tools(search, config, context=context, search_name=BIGTOOL_SEARCH_NAME)
        response = await llm.bind_tools(bound).ainvoke(state["messages"], config)
        return {"messages": [response]}

    async def run_tools(state: State, config: RunnableConfig) -> dict[str, Any]:
        answers, found = await node._answer(state["messages"], config)
        update: dict[str, Any] = {"messages": answers}
        selected = [ids[name] for name in found if name in ids]
        if selected:
            update["selected_tool_ids"] = selected
        return update

    def sync(
        node: Callable[[State, RunnableConfig], Any],
    ) -> Callable[[State, RunnableConfig], dict[str, Any]]:
        def run(state: State, config: RunnableConfig) -> dict[str, Any]:
            return run_sync(node(state, config))

        return run

    builder = StateGraph(State)
    # Both forms, as bigtool's nodes: the graph runs with invoke() as well as ainvoke().
    builder.add_node("agent", RunnableLambda(sync(agent), agent, name="agent"))
    builder.add_node("tools", RunnableLambda(sync(run_tools), run_tools, name="tools"))
    builder.set_entry_point("agent")
    builder.add_conditional_edges("agent", tools_condition, path_map=["tools", END])
    builder.add_edge("tools", "agent")
    return builder


def retrieve_tools_functions(
    search: BridgeSearch,
    tool_registry: Mapping[str, BaseTool | Callable[..., Any]] | None = None,
    *,
    context: ContextOf | None = None,
) -> tuple[Callable[..., list[str]], Callable[..., Any]]:
    """Retrieval for langgraph-bigtool's own ``create_agent``: ``(function, coroutine)``.

    Pass them as ``retrieve_tools_function=`` and ``retrieve_tools_coroutine=``. Each takes
    the model's ``query`` and returns the ids of the tools found (registry ids; the tools'
    names without a registry), within what the caller may see. bigtool's own tool node runs
    the calls then, without toolrelay's checks: :func:`create_agent` runs them through
    :class:`ToolRelayNode`.
    """
    ids = _registry_tools(tool_registry)[1] if tool_registry is not None else {}

    async def aretrieve_tools(query: str, config: RunnableConfig) -> list[str]:
        """Retrieve a tool to use, given a search query."""
        tool_context_ = tool_context(config, context)
        has_thread = bool((config.get("configurable") or {}).get("thread_id"))
        result = await search.search(
            {"queries": [query]},
            key=thread_key(config, tool_context_) if has_thread else None,
            context=tool_context_,
        )
        return [ids.get(name, name) for name in result.found]

    def retrieve_tools(query: str, config: RunnableConfig) -> list[str]:
        """Retrieve a tool to use, given a search query."""
        from toolrelay._sync import run_sync

        return run_sync(aretrieve_tools(query, config))

    return retrieve_tools, aretrieve_tools
