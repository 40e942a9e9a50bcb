"""Chat memory: a message window over a repository (in memory or SQLite).

Example::

    memory = MessageWindowChatMemory(SqliteChatMemoryRepository("chat.sqlite3"))
    client = ChatClient.builder(model).default_advisors(MessageChatMemoryAdvisor(memory)).build()
"""

from toolrelay.memory._base import CONVERSATION_ID, ChatMemory, ChatMemoryRepository
from toolrelay.memory._in_memory import InMemoryChatMemoryRepository
from toolrelay.memory._sqlite import SqliteChatMemoryRepository
from toolrelay.memory._window import MessageWindowChatMemory

__all__ = [
    "CONVERSATION_ID",
    "ChatMemory",
    "ChatMemoryRepository",
    "InMemoryChatMemoryRepository",
    "MessageWindowChatMemory",
    "SqliteChatMemoryRepository",
]
