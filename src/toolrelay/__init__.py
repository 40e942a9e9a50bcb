"""toolrelay: tool calling for LLM agents with dozens to thousands of tools.

The names a program needs are here: tools and their context, the chat client with its
advisors and tool search's options, one round of execution with its interceptors, prompts and
messages, memory, the default search index and the exceptions. Each lives in its package
(``toolrelay.tools``, ``toolrelay.client``...), which holds the rest of that package's API.
They load on first use, so ``import toolrelay`` stays cheap and a program using tools alone
never imports the client or the indexes.
"""

from __future__ import annotations

import importlib
import logging
from typing import TYPE_CHECKING, Any

from toolrelay._version import __version__

if TYPE_CHECKING:
    from toolrelay.client import (
        ChatClient,
        MessageChatMemoryAdvisor,
        RunResult,
        ToolCallingAdvisor,
        ToolSearchAdvisor,
    )
    from toolrelay.exceptions import (
        ConfigurationError,
        ToolArgumentError,
        ToolContextError,
        ToolDefinitionError,
        ToolRelayError,
    )
    from toolrelay.execution import (
        ApprovalInterceptor,
        Approve,
        Defer,
        Deny,
        InMemoryIdempotencyStore,
        JsonLinesAuditSink,
        ToolCallingManager,
        ToolCallInterceptor,
        ToolInvocation,
    )
    from toolrelay.memory import InMemoryChatMemoryRepository, MessageWindowChatMemory
    from toolrelay.messages import ToolCall, UserMessage
    from toolrelay.models import ChatModel
    from toolrelay.prompt import ChatOptions, Prompt
    from toolrelay.search import default_index
    from toolrelay.tools import (
        FunctionTool,
        Tool,
        ToolCatalog,
        ToolContext,
        ToolDefinition,
        ToolMetadata,
        as_tools,
        tool,
        tools_from,
    )
    from toolrelay.toolsearch import SearchOptions

# Where each root name lives; the root re-exports it from there, the same object.
_HOMES: dict[str, str] = {
    **dict.fromkeys(
        (
            "tool",
            "Tool",
            "ToolDefinition",
            "ToolMetadata",
            "ToolContext",
            "FunctionTool",
            "ToolCatalog",
            "as_tools",
            "tools_from",
        ),
        "toolrelay.tools",
    ),
    **dict.fromkeys(
        (
            "ChatClient",
            "RunResult",
            "ToolCallingAdvisor",
            "ToolSearchAdvisor",
            "MessageChatMemoryAdvisor",
        ),
        "toolrelay.client",
    ),
    "SearchOptions": "toolrelay.toolsearch",
    **dict.fromkeys(
        (
            "ToolCallingManager",
            "ApprovalInterceptor",
            "Approve",
            "Deny",
            "Defer",
            "InMemoryIdempotencyStore",
            "ToolCallInterceptor",
            "ToolInvocation",
            "JsonLinesAuditSink",
        ),
        "toolrelay.execution",
    ),
    **dict.fromkeys(("Prompt", "ChatOptions"), "toolrelay.prompt"),
    **dict.fromkeys(("UserMessage", "ToolCall"), "toolrelay.messages"),
    **dict.fromkeys(
        ("MessageWindowChatMemory", "InMemoryChatMemoryRepository"), "toolrelay.memory"
    ),
    "default_index": "toolrelay.search",
    "ChatModel": "toolrelay.models",
    **dict.fromkeys(
        (
            "ToolRelayError",
            "ConfigurationError",
            "ToolArgumentError",
            "ToolContextError",
            "ToolDefinitionError",
        ),
        "toolrelay.exceptions",
    ),
}

__all__ = [
    "ApprovalInterceptor",
    "Approve",
    "ChatClient",
    "ChatModel",
    "ChatOptions",
    "ConfigurationError",
    "Defer",
    "Deny",
    "FunctionTool",
    "InMemoryChatMemoryRepository",
    "InMemoryIdempotencyStore",
    "JsonLinesAuditSink",
    "MessageChatMemoryAdvisor",
    "MessageWindowChatMemory",
    "Prompt",
    "RunResult",
    "SearchOptions",
    "Tool",
    "ToolArgumentError",
    "ToolCall",
    "ToolCallInterceptor",
    "ToolCallingAdvisor",
    "ToolCallingManager",
    "ToolCatalog",
    "ToolContext",
    "ToolContextError",
    "ToolDefinition",
    "ToolDefinitionError",
    "ToolInvocation",
    "ToolMetadata",
    "ToolRelayError",
    "ToolSearchAdvisor",
    "UserMessage",
    "__version__",
    "as_tools",
    "default_index",
    "tool",
    "tools_from",
]


def __getattr__(name: str) -> Any:
    home = _HOMES.get(name)
    if home is None:
        raise AttributeError(f"module 'toolrelay' has no attribute {name!r}")
    value = getattr(importlib.import_module(home), name)
    globals()[name] = value  # later lookups skip this function
    return value


def __dir__() -> list[str]:
    return sorted({*globals(), *__all__})


# A library logs, the application decides where to: without logging configured, nothing of
# toolrelay's (a failing tool's traceback, say) reaches stderr through logging's last resort.
logging.getLogger("toolrelay").addHandler(logging.NullHandler())
