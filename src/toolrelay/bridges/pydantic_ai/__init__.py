"""toolrelay inside pydantic-ai: tool search, sessions and guarded calls for an ``Agent``.

- :class:`ToolSearchCapability`: pydantic-ai's ``ToolSearch`` capability with toolrelay's
  search as its strategy: the catalog tools the caller may see, deferred until the model finds
  them, revealed through the provider's own tool search where it has one (its prompt cache
  kept), with permission filtering, sessions and toolrelay's interceptors
  (:class:`~toolrelay.bridges.BridgeSearch`);
- :func:`to_pydantic_ai` and :func:`from_pydantic_ai`: tools both ways, schemas and
  descriptions intact, the tool context mapped to and from the run context.

Example::

    from pydantic_ai import Agent
    from toolrelay.bridges import BridgeSearch
    from toolrelay.bridges.pydantic_ai import ToolSearchCapability

    agent = Agent("openai:gpt-5.4", capabilities=[ToolSearchCapability(BridgeSearch(catalog))])
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

from toolrelay.bridges.pydantic_ai._capability import ToolSearchCapability
from toolrelay.bridges.pydantic_ai._convert import from_pydantic_ai, to_pydantic_ai

__all__ = ["ToolSearchCapability", "from_pydantic_ai", "to_pydantic_ai"]
