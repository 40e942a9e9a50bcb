"""One round of tool execution that never crashes on a model's mistake.

:class:`ToolCallingManager` resolves each call of a model response (the request's tools, then a
:class:`ToolResolver` chain, then lenient name matching), validates the arguments, runs the
calls concurrently with timeouts, limits and guards, and answers every call: a result, or an
error text the model can act on. The result is a :class:`ToolExecutionResult` with the new
conversation history.

    manager = ToolCallingManager(resolver=StaticToolResolver(tools))
    result = await manager.execute_tool_calls(prompt, chat_response)
    if result.return_direct:
        answer = result.build_generations()
"""

from toolrelay.execution.arguments import ParsedArguments, parse_arguments
from toolrelay.execution.exceptions_policy import (
    DefaultToolExceptionProcessor,
    ToolExceptionProcessor,
)
from toolrelay.execution.guards import ToolCallGuard, ToolCallRequest
from toolrelay.execution.limits import CallLimits, LimitBreach, TurnCallCounter
from toolrelay.execution.manager import ToolCallingManager
from toolrelay.execution.resolution import (
    DelegatingToolResolver,
    StaticToolResolver,
    ToolLookup,
    ToolResolver,
    closest_names,
    match_tool_name,
)
from toolrelay.execution.result import (
    RETURN_DIRECT_FINISH_REASON,
    ToolCallOutcome,
    ToolCallStatus,
    ToolExecutionResult,
)

__all__ = [
    "RETURN_DIRECT_FINISH_REASON",
    "CallLimits",
    "DefaultToolExceptionProcessor",
    "DelegatingToolResolver",
    "LimitBreach",
    "ParsedArguments",
    "StaticToolResolver",
    "ToolCallGuard",
    "ToolCallOutcome",
    "ToolCallRequest",
    "ToolCallStatus",
    "ToolCallingManager",
    "ToolExceptionProcessor",
    "ToolExecutionResult",
    "ToolLookup",
    "ToolResolver",
    "TurnCallCounter",
    "closest_names",
    "match_tool_name",
    "parse_arguments",
]
