"""toolrelay inside LangGraph and LangChain: bigtool-style retrieval and a guarded tool node.

- :func:`create_agent`: langgraph-bigtool's ``create_agent`` with toolrelay's retrieval and
  guarded calls: ``from toolrelay.bridges.langgraph import create_agent`` instead of
  ``from langgraph_bigtool import create_agent``, and nothing else changes;
- :class:`ToolRelayNode`: the node answering tool calls where langgraph's ``ToolNode``
  goes, with :func:`bound_tools` for the model node's ``bind_tools`` at each step;
- :func:`retrieve_tools_functions`: toolrelay's retrieval for bigtool's own ``create_agent``;
- :func:`to_langchain` and :func:`from_langchain`: tools both ways, schemas and descriptions
  intact, the tool context carried in the ``RunnableConfig``
  (``configurable["tool_context"]``).

Example::

    from toolrelay.bridges.langgraph import create_agent

    graph = create_agent(llm, tool_registry).compile(checkpointer=InMemorySaver())
    graph.invoke({"messages": "..."}, {"configurable": {"thread_id": "t1"}})

Needs the ``langgraph`` extra.
"""

try:
    import langchain_core as _core  # noqa: F401 - only checks that they are installed
    import langgraph as _framework  # noqa: F401
except ImportError as exc:  # pragma: no cover - depends on the installation
    raise ImportError(
        "toolrelay.bridges.langgraph needs LangGraph: pip install -e '.[langgraph]'",
        name=exc.name,
    ) from exc

from toolrelay.bridges.langgraph._convert import from_langchain, to_langchain
from toolrelay.bridges.langgraph._graph import (
    ToolRelayNode,
    bound_tools,
    create_agent,
    retrieve_tools_functions,
)

__all__ = [
    "ToolRelayNode",
    "bound_tools",
    "create_agent",
    "from_langchain",
    "retrieve_tools_functions",
    "to_langchain",
]
