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

from toolrelay.tools._base import (
    Tool,
    ToolContext,
    ToolDefinition,
    ToolMetadata,
    ValidatedArguments,
    ValidatingTool,
)
from toolrelay.tools._catalog import ToolCatalog, as_tools
from toolrelay.tools._decorator import tool
from toolrelay.tools._discovery import tools_from
from toolrelay.tools._function import FunctionTool
from toolrelay.tools._names import provider_safe_name
from toolrelay.tools._results import ResultConverter
from toolrelay.tools._workers import WorkerPool, WorkerPoolBusy, sync_tool_workers

__all__ = [
    "FunctionTool",
    "ResultConverter",
    "Tool",
    "ToolCatalog",
    "ToolContext",
    "ToolDefinition",
    "ToolMetadata",
    "ValidatedArguments",
    "ValidatingTool",
    "WorkerPool",
    "WorkerPoolBusy",
    "as_tools",
    "provider_safe_name",
    "sync_tool_workers",
    "tool",
    "tools_from",
]
