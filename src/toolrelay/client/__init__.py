"""The chat client: an ordered advisor chain around a model, with the tool loop as an advisor.

- :class:`ChatClient` — ``ChatClient(model, system=..., tools=[...], advisors=[...])`` runs a
  task with ``await client.run(task, conversation=...)`` (or ``run_sync``) into a typed
  :class:`RunResult` (``.text``, ``.messages``, ``.usage``, ``.tool_loop``, ``.tool_search``,
  ``.approval``); the builder and fluent requests (``client.prompt().user(...).call()``)
  are the Spring AI style of the same client.
- :mod:`~toolrelay.client._advisor` — advisor protocols, :class:`AdvisorChain`, order constants.
- :class:`ToolCallingAdvisor` — the do-while tool loop (one per client).
- :class:`MessageChatMemoryAdvisor` — conversation memory, outside or inside the loop.
- :class:`ToolProvider` — where the loop takes each turn's tools from: the request's own
  (the default) or tool search's (:class:`ToolSearch`).
- :class:`ToolSearchAdvisor` — the tool loop with progressive tool disclosure
  (``tool_search``), discovered tools kept per conversation in a :class:`SessionStore`;
  the texts it shows the model come in the catalog's language (:class:`SearchTexts`).
- :class:`ApprovalState` — a turn stopped for a person's approval (finish reason
  ``"approvalRequired"``), resumed with ``client.resume(state, decisions)``.
- :mod:`~toolrelay.client._conversations` — the key a conversation's memory, discovered
  tools and approval state are kept under: the id scoped by tenant (:func:`tenant_scope`).
"""

from toolrelay.client._advisor import (
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
from toolrelay.client._chat_client import ChatClient, ChatClientBuilder, ChatClientRequestSpec
from toolrelay.client._conversations import ConversationScope, tenant_scope, unscoped
from toolrelay.client._deferred_approval import ApprovalState, PendingApproval
from toolrelay.client._memory_advisor import MessageChatMemoryAdvisor
from toolrelay.client._requests import ChatClientRequest, ChatClientResponse
from toolrelay.client._responses import CallResponse, StreamResponse
from toolrelay.client._run import RunResult
from toolrelay.client._tool_calling import ToolCallingAdvisor, ToolLoopState
from toolrelay.client._tool_loop import LoopStop, ToolLoopReport
from toolrelay.client._tool_provider import RoundTools, ToolProvider, TurnTools
from toolrelay.client._tool_search import ToolSearch, ToolSearchAdvisor

__all__ = [
    "HIGHEST_PRECEDENCE",
    "LOWEST_PRECEDENCE",
    "MEMORY_ADVISOR_ORDER",
    "TOOL_CALLING_ADVISOR_ORDER",
    "Advisor",
    "AdvisorChain",
    "ApprovalState",
    "BaseAdvisor",
    "CallAdvisor",
    "CallResponse",
    "ChatClient",
    "ChatClientBuilder",
    "ChatClientRequest",
    "ChatClientRequestSpec",
    "ChatClientResponse",
    "ConversationScope",
    "HistoryAdvisor",
    "LoopStop",
    "MessageChatMemoryAdvisor",
    "PendingApproval",
    "RoundTools",
    "RunResult",
    "StreamAdvisor",
    "StreamResponse",
    "ToolCallingAdvisor",
    "ToolLoopReport",
    "ToolLoopState",
    "ToolProvider",
    "ToolSearch",
    "ToolSearchAdvisor",
    "TurnTools",
    "tenant_scope",
    "unscoped",
]
