"""toolrelay inside the OpenAI Agents SDK: tool search, sessions and guarded calls.

- :class:`ToolSearchTools`: the tools of an ``Agent``: ``tool_search`` over a toolrelay
  index, and the catalog's tools enabled (the SDK's ``is_enabled``) from the turn after a
  search found them, with permission filtering, sessions and toolrelay's interceptors
  (:class:`~toolrelay.bridges.BridgeSearch`);
- :func:`to_openai_agents` and :func:`from_openai_agents`: tools both ways, schemas and
  descriptions intact, the tool context mapped to and from the run's context object.

Example::

    from agents import Agent, Runner
    from toolrelay.bridges import BridgeSearch
    from toolrelay.bridges.openai_agents import ToolSearchTools

    agent = Agent(name="desk", tools=ToolSearchTools(BridgeSearch(catalog)).tools())
    await Runner.run(agent, "Refund order 42", context={"session_id": "c1"})

Needs the ``openai-agents`` extra.
"""

try:
    import agents as _framework  # noqa: F401 - only checks that it is installed
except ImportError as exc:  # pragma: no cover - depends on the installation
    raise ImportError(
        "toolrelay.bridges.openai_agents needs the OpenAI Agents SDK: "
        "pip install -e '.[openai-agents]'",
        name=exc.name,
    ) from exc

from toolrelay.bridges.openai_agents._convert import from_openai_agents, to_openai_agents
from toolrelay.bridges.openai_agents._tools import ToolSearchTools

__all__ = ["ToolSearchTools", "from_openai_agents", "to_openai_agents"]
