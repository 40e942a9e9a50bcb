"""Names of the spans' attributes and the metrics' instruments, and the values they take.

The ``gen_ai.*`` and ``error.type`` names follow the OpenTelemetry semantic conventions for
generative AI (still in development there, so they are spelt out here rather than imported
from an unstable package). The ``toolrelay.*`` names carry what those conventions do not
cover: the tool loop, the tool search and the tool outcome statuses.

Attributes marked *content* are set only when content capture is enabled: they hold what
users, models or tools wrote.
"""

from __future__ import annotations

__all__ = [
    "CHAT",
    "DURATION_BUCKETS",
    "ERROR_TYPE",
    "EXECUTE_TOOL",
    "GEN_AI_AGENT_NAME",
    "GEN_AI_CLIENT_OPERATION_DURATION",
    "GEN_AI_CLIENT_TOKEN_USAGE",
    "GEN_AI_CONVERSATION_ID",
    "GEN_AI_INPUT_MESSAGES",
    "GEN_AI_OPERATION_NAME",
    "GEN_AI_OUTPUT_MESSAGES",
    "GEN_AI_PROVIDER_NAME",
    "GEN_AI_REQUEST_MAX_TOKENS",
    "GEN_AI_REQUEST_MODEL",
    "GEN_AI_REQUEST_TEMPERATURE",
    "GEN_AI_RESPONSE_FINISH_REASONS",
    "GEN_AI_RESPONSE_ID",
    "GEN_AI_RESPONSE_MODEL",
    "GEN_AI_TOKEN_TYPE",
    "GEN_AI_TOOL_CALL_ARGUMENTS",
    "GEN_AI_TOOL_CALL_ID",
    "GEN_AI_TOOL_CALL_RESULT",
    "GEN_AI_TOOL_NAME",
    "GEN_AI_TOOL_TYPE",
    "GEN_AI_USAGE_CACHE_CREATION_INPUT_TOKENS",
    "GEN_AI_USAGE_CACHE_READ_INPUT_TOKENS",
    "GEN_AI_USAGE_INPUT_TOKENS",
    "GEN_AI_USAGE_OUTPUT_TOKENS",
    "GEN_AI_USAGE_REASONING_OUTPUT_TOKENS",
    "INDEX_SPAN",
    "INVOKE_AGENT",
    "SCOPE",
    "SEARCH_DURATION",
    "SEARCH_SPAN",
    "TOKEN_BUCKETS",
    "TOKEN_INPUT",
    "TOKEN_OUTPUT",
    "TOOLRELAY_INDEX_REBUILT",
    "TOOLRELAY_INDEX_TOOLS",
    "TOOLRELAY_LOOP_FAILED_TOOL_CALLS",
    "TOOLRELAY_LOOP_MODEL_CALLS",
    "TOOLRELAY_LOOP_ROUNDS",
    "TOOLRELAY_LOOP_STOP",
    "TOOLRELAY_LOOP_TOOL_CALLS",
    "TOOLRELAY_REQUEST_TOOL_COUNT",
    "TOOLRELAY_RESPONSE_TOOL_CALL_COUNT",
    "TOOLRELAY_SEARCH_CATEGORY",
    "TOOLRELAY_SEARCH_DISCOVERED",
    "TOOLRELAY_SEARCH_HITS",
    "TOOLRELAY_SEARCH_MAX_RESULTS",
    "TOOLRELAY_SEARCH_QUERY",
    "TOOLRELAY_SEARCH_QUERY_LENGTH",
    "TOOLRELAY_SEARCH_REINDEXED",
    "TOOLRELAY_SEARCH_RESULTS",
    "TOOLRELAY_SEARCH_SEARCHES",
    "TOOLRELAY_SEARCH_TOP_SCORE",
    "TOOLRELAY_SEARCH_TOTAL",
    "TOOLRELAY_SEARCH_TYPE",
    "TOOLRELAY_TOOL_APPROVAL",
    "TOOLRELAY_TOOL_REPLAYED",
    "TOOLRELAY_TOOL_STATUS",
    "TOOLRELAY_TURN_MODEL_CALL",
    "error_type",
]

SCOPE = "toolrelay"
"""The instrumentation scope of every tracer and meter."""

# --- operations (gen_ai.operation.name) -------------------------------------------------------

CHAT = "chat"
"""One model call (span ``chat {model}``)."""
EXECUTE_TOOL = "execute_tool"
"""One tool execution (span ``execute_tool {tool}``)."""
INVOKE_AGENT = "invoke_agent"
"""One client request: the whole turn with its tool loop (span ``invoke_agent [{agent}]``)."""

SEARCH_SPAN = "toolrelay.search"
"""The span of one search of a tool index."""
INDEX_SPAN = "toolrelay.index"
"""The span of one (re)indexing of a catalog."""

# --- semantic-convention attributes -------------------------------------------------------------

GEN_AI_OPERATION_NAME = "gen_ai.operation.name"
GEN_AI_PROVIDER_NAME = "gen_ai.provider.name"
GEN_AI_AGENT_NAME = "gen_ai.agent.name"
GEN_AI_CONVERSATION_ID = "gen_ai.conversation.id"
GEN_AI_REQUEST_MODEL = "gen_ai.request.model"
GEN_AI_REQUEST_TEMPERATURE = "gen_ai.request.temperature"
GEN_AI_REQUEST_MAX_TOKENS = "gen_ai.request.max_tokens"
GEN_AI_RESPONSE_MODEL = "gen_ai.response.model"
GEN_AI_RESPONSE_ID = "gen_ai.response.id"
GEN_AI_RESPONSE_FINISH_REASONS = "gen_ai.response.finish_reasons"
GEN_AI_USAGE_INPUT_TOKENS = "gen_ai.usage.input_tokens"
GEN_AI_USAGE_OUTPUT_TOKENS = "gen_ai.usage.output_tokens"
GEN_AI_USAGE_CACHE_READ_INPUT_TOKENS = "gen_ai.usage.cache_read.input_tokens"
GEN_AI_USAGE_CACHE_CREATION_INPUT_TOKENS = "gen_ai.usage.cache_creation.input_tokens"
GEN_AI_USAGE_REASONING_OUTPUT_TOKENS = "gen_ai.usage.reasoning.output_tokens"
GEN_AI_TOOL_NAME = "gen_ai.tool.name"
GEN_AI_TOOL_TYPE = "gen_ai.tool.type"
GEN_AI_TOOL_CALL_ID = "gen_ai.tool.call.id"
GEN_AI_TOOL_CALL_ARGUMENTS = "gen_ai.tool.call.arguments"
"""*Content*: the JSON arguments the tool ran with."""
GEN_AI_TOOL_CALL_RESULT = "gen_ai.tool.call.result"
"""*Content*: the text the model reads back."""
GEN_AI_INPUT_MESSAGES = "gen_ai.input.messages"
"""*Content*: the messages sent, as the conventions' JSON (roles and parts)."""
GEN_AI_OUTPUT_MESSAGES = "gen_ai.output.messages"
"""*Content*: the answer's messages, as the conventions' JSON."""
GEN_AI_TOKEN_TYPE = "gen_ai.token.type"
ERROR_TYPE = "error.type"

TOKEN_INPUT = "input"
TOKEN_OUTPUT = "output"

# --- toolrelay attributes ---------------------------------------------------------------------

TOOLRELAY_TURN_MODEL_CALL = "toolrelay.turn.model_call"
"""On a chat span: the model call's number in its turn (from 1). On an execute_tool span: the
number of the model call that asked for the tool, so a tool's round is the chat span with
the same number."""
TOOLRELAY_REQUEST_TOOL_COUNT = "toolrelay.request.tool_count"
"""How many tool definitions the model call offered."""
TOOLRELAY_RESPONSE_TOOL_CALL_COUNT = "toolrelay.response.tool_call_count"
"""How many tool calls the model's answer asked for."""
TOOLRELAY_TOOL_STATUS = "toolrelay.tool.status"
"""How the call ended: a :class:`~toolrelay.execution.ToolCallStatus` value."""
TOOLRELAY_TOOL_APPROVAL = "toolrelay.tool.approval"
"""What an approval decided: an :class:`~toolrelay.execution.ApprovalStatus` value."""
TOOLRELAY_TOOL_REPLAYED = "toolrelay.tool.replayed"
"""The result was replayed from an idempotency record; the tool did not run again."""
TOOLRELAY_LOOP_MODEL_CALLS = "toolrelay.tool_loop.model_calls"
TOOLRELAY_LOOP_ROUNDS = "toolrelay.tool_loop.rounds"
TOOLRELAY_LOOP_STOP = "toolrelay.tool_loop.stop"
"""Why the loop ended: a :class:`~toolrelay.client.LoopStop` value."""
TOOLRELAY_LOOP_TOOL_CALLS = "toolrelay.tool_loop.tool_calls"
"""Tool calls answered in the turn, including those that never ran (unknown names, ...)."""
TOOLRELAY_LOOP_FAILED_TOOL_CALLS = "toolrelay.tool_loop.failed_tool_calls"
"""Tool calls of the turn answered with an error response."""
TOOLRELAY_SEARCH_TYPE = "toolrelay.search.type"
"""The kind of index (``"bm25"``, ``"hybrid"``, ...)."""
TOOLRELAY_SEARCH_QUERY_LENGTH = "toolrelay.search.query_length"
"""The query's length in characters."""
TOOLRELAY_SEARCH_QUERY = "toolrelay.search.query"
"""*Content*: the query as written."""
TOOLRELAY_SEARCH_CATEGORY = "toolrelay.search.category"
"""*Content*: the category the search was limited to."""
TOOLRELAY_SEARCH_MAX_RESULTS = "toolrelay.search.max_results"
TOOLRELAY_SEARCH_HITS = "toolrelay.search.hits"
"""How many tools the search returned."""
TOOLRELAY_SEARCH_TOTAL = "toolrelay.search.total"
"""How many permitted tools matched before ``max_results`` was applied."""
TOOLRELAY_SEARCH_RESULTS = "toolrelay.search.results"
"""The canonical names of the tools found, best first (catalog names, not content)."""
TOOLRELAY_SEARCH_TOP_SCORE = "toolrelay.search.top_score"
TOOLRELAY_SEARCH_SEARCHES = "toolrelay.tool_search.searches"
"""Searches made in the turn."""
TOOLRELAY_SEARCH_DISCOVERED = "toolrelay.tool_search.discovered"
"""Tools the conversation has discovered at the end of the turn."""
TOOLRELAY_SEARCH_PINNED = "toolrelay.tool_search.pinned"
"""Tools the conversation's first reveal pinned to its tool list."""
TOOLRELAY_SEARCH_REINDEXED = "toolrelay.tool_search.reindexed"
"""The turn found the catalog changed and rebuilt the index."""
TOOLRELAY_INDEX_TOOLS = "toolrelay.index.tools"
"""How many tool definitions were indexed."""
TOOLRELAY_INDEX_REBUILT = "toolrelay.index.rebuilt"
"""Whether indexing rebuilt the index (``False``: the catalog was unchanged)."""

# --- metrics ----------------------------------------------------------------------------------

GEN_AI_CLIENT_OPERATION_DURATION = "gen_ai.client.operation.duration"
"""Histogram, seconds: every ``chat``, ``execute_tool`` and ``invoke_agent`` operation."""
GEN_AI_CLIENT_TOKEN_USAGE = "gen_ai.client.token.usage"
"""Histogram, tokens: per model call, one point per ``gen_ai.token.type`` (input, output)."""
SEARCH_DURATION = "toolrelay.search.duration"
"""Histogram, seconds: every search of a traced index."""

DURATION_BUCKETS = (
    0.01,
    0.02,
    0.04,
    0.08,
    0.16,
    0.32,
    0.64,
    1.28,
    2.56,
    5.12,
    10.24,
    20.48,
    40.96,
    81.92,
)
"""The bucket boundaries the conventions advise for operation durations (seconds)."""
TOKEN_BUCKETS = (
    1,
    4,
    16,
    64,
    256,
    1024,
    4096,
    16384,
    65536,
    262144,
    1048576,
    4194304,
    16777216,
    67108864,
)
"""The bucket boundaries the conventions advise for token counts."""


def error_type(error: BaseException) -> str:
    """The ``error.type`` of an exception: its class's qualified name (``"ModelError"``)."""
    return type(error).__qualname__
