"""Chat memory: a message window over a repository (in memory or SQLite).

Example::

    memory = MessageWindowChatMemory(SqliteChatMemoryRepository("chat.sqlite3"))
    client = ChatClient.builder(model).default_advisors(MessageChatMemoryAdvisor(memory)).build()
"""

from toolrelay.memory._base import CONVERSATION_ID, ChatMemory, ChatMemoryRepository
from toolrelay.memory._in_memory import InMemoryChatMemoryRepository
from toolrelay.memory._sqlite import SqliteChatMemoryRepository, default_database_path
from toolrelay.memory._window import DEFAULT_MAX_MESSAGES, MessageWindowChatMemory, apply_window

__all__ = [
    "CONVERSATION_ID",
    "DEFAULT_MAX_MESSAGES",
    "ChatMemory",
    "ChatMemoryRepository",
    "InMemoryChatMemoryRepository",
    "MessageWindowChatMemory",
    "SqliteChatMemoryRepository",
    "apply_window",
    "default_database_path",
]
