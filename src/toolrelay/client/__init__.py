"""The chat client: an ordered advisor chain around a model, with the tool loop as an advisor.

- :class:`ChatClient` — fluent requests (``client.prompt().user(...).call().content()``).
- :mod:`~toolrelay.client.advisor` — advisor protocols, :class:`AdvisorChain`, order constants.
- :class:`ToolCallingAdvisor` — the do-while tool loop (one per client).
- :class:`MessageChatMemoryAdvisor` — conversation memory, outside or inside the loop.
- :class:`ToolSearchAdvisor` — the tool loop with progressive tool disclosure
  (``tool_search``), discovered tools kept per conversation in a :class:`SessionStore`;
  the texts it shows the model come in the catalog's language (:class:`SearchTexts`).
- :class:`ApprovalState` — a turn stopped for a person's approval (finish reason
  ``"approvalRequired"``), resumed with ``client.prompt().resume(state, decisions)``.
- :mod:`~toolrelay.client.conversations` — the key a conversation's memory, discovered
  tools and approval state are kept under: the id scoped by tenant (:func:`tenant_scope`).
"""

from toolrelay.client.advisor import (
    HIGHEST_PRECEDENCE,
    LOWEST_PRECEDENCE,
    MEMORY_ADVISOR_ORDER,
    TOOL_CALLING_ADVISOR_ORDER,
    Advisor,
    AdvisorChain,
    BaseAdvisor,
    CallAdvisor,
    HistoryAdvisor,
    StreamAdvisor,
)
from toolrelay.client.chat_client import ChatClient, ChatClientBuilder, ChatClientRequestSpec
from toolrelay.client.conversations import (
    CONVERSATION_SCOPE,
    ConversationScope,
    scoped_key,
    tenant_scope,
    unscoped,
)
from toolrelay.client.deferred_approval import (
    APPROVAL_STATE_KEY,
    ApprovalState,
    PendingApproval,
    Resumption,
    approval_state,
)
from toolrelay.client.memory_advisor import MessageChatMemoryAdvisor, answer_message
from toolrelay.client.requests import ChatClientRequest, ChatClientResponse
from toolrelay.client.responses import CallResponse, StreamResponse, parse_entity
from toolrelay.client.search_texts import SearchLanguage, SearchTexts
from toolrelay.client.search_tool import (
    DEFAULT_MIN_RELATIVE_SCORE,
    DEFAULT_SEARCH_DESCRIPTION,
    DEFAULT_SYSTEM_SUFFIX,
    TOOL_SEARCH_KEY,
    TOOL_SEARCH_NAME,
    ToolSearcher,
    ToolSearchRecord,
    ToolSearchReport,
    ToolSearchRound,
    tool_search_report,
)
from toolrelay.client.sessions import DEFAULT_MAX_SESSIONS, InMemorySessionStore, SessionStore
from toolrelay.client.streaming import FINAL_RESPONSE_KEY, StreamAggregator, text_chunk
from toolrelay.client.tool_calling import (
    DEFAULT_MAX_MODEL_CALLS,
    EligibilityChecker,
    ToolCallingAdvisor,
    has_tool_calls,
)
from toolrelay.client.tool_loop import (
    APPROVAL_REQUIRED_FINISH_REASON,
    TOOL_CALL_LIMIT_FINISH_REASON,
    TOOL_LOOP_KEY,
    LoopStop,
    ToolLoopReport,
    ToolLoopState,
    tool_loop_report,
)
from toolrelay.client.tool_search import ConversationKey, ToolSearchAdvisor
from toolrelay.client.tool_search_access import (
    DEFAULT_SIMILAR_NAMES_MESSAGE,
    DEFAULT_UNAVAILABLE_MESSAGE,
    Authorizer,
    ToolFilter,
)

__all__ = [
    "APPROVAL_REQUIRED_FINISH_REASON",
    "APPROVAL_STATE_KEY",
    "CONVERSATION_SCOPE",
    "DEFAULT_MAX_MODEL_CALLS",
    "DEFAULT_MAX_SESSIONS",
    "DEFAULT_MIN_RELATIVE_SCORE",
    "DEFAULT_SEARCH_DESCRIPTION",
    "DEFAULT_SIMILAR_NAMES_MESSAGE",
    "DEFAULT_SYSTEM_SUFFIX",
    "DEFAULT_UNAVAILABLE_MESSAGE",
    "FINAL_RESPONSE_KEY",
    "HIGHEST_PRECEDENCE",
    "LOWEST_PRECEDENCE",
    "MEMORY_ADVISOR_ORDER",
    "TOOL_CALLING_ADVISOR_ORDER",
    "TOOL_CALL_LIMIT_FINISH_REASON",
    "TOOL_LOOP_KEY",
    "TOOL_SEARCH_KEY",
    "TOOL_SEARCH_NAME",
    "Advisor",
    "AdvisorChain",
    "ApprovalState",
    "Authorizer",
    "BaseAdvisor",
    "CallAdvisor",
    "CallResponse",
    "ChatClient",
    "ChatClientBuilder",
    "ChatClientRequest",
    "ChatClientRequestSpec",
    "ChatClientResponse",
    "ConversationKey",
    "ConversationScope",
    "EligibilityChecker",
    "HistoryAdvisor",
    "InMemorySessionStore",
    "LoopStop",
    "MessageChatMemoryAdvisor",
    "PendingApproval",
    "Resumption",
    "SearchLanguage",
    "SearchTexts",
    "SessionStore",
    "StreamAdvisor",
    "StreamAggregator",
    "StreamResponse",
    "ToolCallingAdvisor",
    "ToolFilter",
    "ToolLoopReport",
    "ToolLoopState",
    "ToolSearchAdvisor",
    "ToolSearchRecord",
    "ToolSearchReport",
    "ToolSearchRound",
    "ToolSearcher",
    "answer_message",
    "approval_state",
    "has_tool_calls",
    "parse_entity",
    "scoped_key",
    "tenant_scope",
    "text_chunk",
    "tool_loop_report",
    "tool_search_report",
    "unscoped",
]
