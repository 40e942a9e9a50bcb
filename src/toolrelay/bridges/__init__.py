"""toolrelay's tool search and guarded execution inside other agent frameworks.

Each framework's bridge is a subpackage, installed with its extra:

- :mod:`toolrelay.bridges.pydantic_ai` (``toolrelay[pydantic-ai]``): a toolset for
  pydantic-ai's ``Agent``;
- :mod:`toolrelay.bridges.openai_agents` (``toolrelay[openai-agents]``): tools for an
  OpenAI Agents SDK ``Agent``;
- :mod:`toolrelay.bridges.langgraph` (``toolrelay[langgraph]``): langgraph-bigtool's
  retrieval and a tool node for LangGraph graphs.

They share :class:`BridgeSearch`: the catalog, its index, each conversation's discovered
tools (a :class:`~toolrelay.toolsearch.SessionStore`), who may see what (``tool_filter``),
who may run what (``authorize``) and the :class:`~toolrelay.execution.ToolCallingManager`
whose guards (``approval=``, ``idempotency=``, ``audit=``, ``interceptors=``) every call
passes. Each bridge also
converts tools both ways between toolrelay and its framework.
"""

from toolrelay.bridges._search import BridgeCallResult, BridgeSearch

__all__ = ["BridgeCallResult", "BridgeSearch"]
