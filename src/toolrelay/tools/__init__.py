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
    call_sync,
)
from toolrelay.tools._catalog import ToolCatalog, as_tools
from toolrelay.tools._decorator import ToolSpec, get_tool_spec, tool
from toolrelay.tools._discovery import tools_from
from toolrelay.tools._function import FunctionTool
from toolrelay.tools._names import provider_safe_name, validate_tool_name
from toolrelay.tools._results import ResultConverter, convert_result
from toolrelay.tools._tokens import summarize_tokens, tool_tokens
from toolrelay.tools._workers import (
    ToolThreadsStatus,
    WorkerPool,
    WorkerPoolBusy,
    WorkerPoolStatus,
    sync_tool_workers,
)

__all__ = [
    "FunctionTool",
    "ResultConverter",
    "Tool",
    "ToolCatalog",
    "ToolContext",
    "ToolDefinition",
    "ToolMetadata",
    "ToolSpec",
    "ToolThreadsStatus",
    "ValidatedArguments",
    "ValidatingTool",
    "WorkerPool",
    "WorkerPoolBusy",
    "WorkerPoolStatus",
    "as_tools",
    "call_sync",
    "convert_result",
    "get_tool_spec",
    "provider_safe_name",
    "summarize_tokens",
    "sync_tool_workers",
    "tool",
    "tool_tokens",
    "tools_from",
    "validate_tool_name",
]
