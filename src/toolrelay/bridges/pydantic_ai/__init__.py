"""toolrelay inside pydantic-ai: tool search, sessions and guarded calls for an ``Agent``.

- :class:`ToolSearchToolset`: a toolset that gives an agent ``tool_search`` over a toolrelay
  index and, from the next step on, the tools it found, with permission filtering, sessions
  and toolrelay's interceptors (:class:`~toolrelay.bridges.BridgeSearch`);
- :func:`to_pydantic_ai` and :func:`from_pydantic_ai`: tools both ways, schemas and
  descriptions intact, the tool context mapped to and from the run context.

Example::

    from pydantic_ai import Agent
    from toolrelay.bridges import BridgeSearch
    from toolrelay.bridges.pydantic_ai import ToolSearchToolset

    agent = Agent("openai:gpt-5", toolsets=[ToolSearchToolset(BridgeSearch(catalog))])
    result = await agent.run("Refund order 42", deps={"tenant_id": "acme"})

Needs the ``pydantic-ai`` extra.
"""

try:
    import pydantic_ai as _framework  # noqa: F401 - only checks that it is installed
except ImportError as exc:  # pragma: no cover - depends on the installation
    raise ImportError(
        "toolrelay.bridges.pydantic_ai needs pydantic-ai: pip install -e '.[pydantic-ai]'",
        name=exc.name,
    ) from exc

from toolrelay.bridges.pydantic_ai._convert import from_pydantic_ai, to_pydantic_ai
from toolrelay.bridges.pydantic_ai._toolset import ToolSearchToolset

__all__ = ["ToolSearchToolset", "from_pydantic_ai", "to_pydantic_ai"]
