"""Tools: the contract, ``@tool``, function tools, schemas, results, names and catalogs.

Example::

    from toolrelay.tools import FunctionTool, ToolContext, tool

    @tool
    def get_weather(city: str, unit: Literal["c", "f"] = "c") -> dict[str, Any]:
        \"\"\"Current weather for a city (Args section → parameter descriptions).\"\"\"
        ...

    weather = FunctionTool.from_function(get_weather)
    text = await weather.call('{"city": "Paris"}', ToolContext(tenant_id="t1"))
"""

from toolrelay.tools.base import Tool, ToolContext, ToolDefinition, ToolMetadata, call_sync
from toolrelay.tools.catalog import ToolCatalog, as_tools
from toolrelay.tools.decorator import ToolSpec, get_tool_spec, tool
from toolrelay.tools.discovery import tools_from
from toolrelay.tools.function import FunctionTool
from toolrelay.tools.names import (
    fold_name,
    is_provider_safe,
    provider_safe_name,
    split_name_words,
    validate_tool_name,
)
from toolrelay.tools.results import ResultConverter, convert_result
from toolrelay.tools.tokens import count_tokens, tool_payload, tool_tokens

__all__ = [
    "FunctionTool",
    "ResultConverter",
    "Tool",
    "ToolCatalog",
    "ToolContext",
    "ToolDefinition",
    "ToolMetadata",
    "ToolSpec",
    "as_tools",
    "call_sync",
    "convert_result",
    "count_tokens",
    "fold_name",
    "get_tool_spec",
    "is_provider_safe",
    "provider_safe_name",
    "split_name_words",
    "tool",
    "tool_payload",
    "tool_tokens",
    "tools_from",
    "validate_tool_name",
]
