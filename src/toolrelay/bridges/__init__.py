"""toolrelay's tool search and guarded execution inside other agent frameworks.

Each framework's bridge is a subpackage, installed with its extra:

- :mod:`toolrelay.bridges.pydantic_ai` (extra ``pydantic-ai``): pydantic-ai's ``ToolSearch``
  capability for its ``Agent``, answered by toolrelay's search;
- :mod:`toolrelay.bridges.openai_agents` (extra ``openai-agents``): tools for an OpenAI
  Agents SDK ``Agent``;
- :mod:`toolrelay.bridges.langgraph` (extra ``langgraph``): langgraph-bigtool's
  retrieval and a tool node for LangGraph graphs.

They share :class:`BridgeSearch`: the catalog, its index, each conversation's discovered
tools (a :class:`~toolrelay.toolsearch.SessionStore`), how it searches and who may see what
(:class:`~toolrelay.toolsearch.SearchOptions`, ``tool_filter`` included) and the
:class:`~toolrelay.execution.ToolCallingManager` whose guards every call passes (the guard
options, as every door takes them: ``approval=``, ``idempotency=``, ``audit=``,
``authorize=``, ``interceptors=``). Each bridge also converts tools both ways between
toolrelay and its framework.
"""

from toolrelay.bridges._search import BridgeCallResult, BridgeSearch

__all__ = ["BridgeCallResult", "BridgeSearch"]
