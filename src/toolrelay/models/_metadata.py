"""Keys the adapters use in :attr:`ChatResponse.metadata <toolrelay.messages.ChatResponse>`.

Providers report more than :class:`~toolrelay.messages.Usage` holds; the adapters put it in
the response metadata under these provider-neutral keys (absent when the provider did not
report it), so code reading cache hits works the same for every provider.
"""

from __future__ import annotations

__all__ = [
    "CACHE_READ_TOKENS",
    "CACHE_WRITE_TOKENS",
    "ID",
    "MODEL",
    "REASONING_TOKENS",
    "REFUSAL",
    "STOP_SEQUENCE",
]

ID = "id"
"""The provider's id of the response."""
MODEL = "model"
"""The model that answered, as the provider names it."""
CACHE_READ_TOKENS = "cache_read_tokens"
"""Prompt tokens served from the provider's prompt cache (included in ``prompt_tokens``)."""
CACHE_WRITE_TOKENS = "cache_write_tokens"
"""Prompt tokens written to the provider's prompt cache (included in ``prompt_tokens``)."""
REASONING_TOKENS = "reasoning_tokens"
"""Completion tokens spent on hidden reasoning (included in ``completion_tokens``)."""
REFUSAL = "refusal"
"""``Generation.metadata`` key: the model's refusal text, when it refused."""
STOP_SEQUENCE = "stop_sequence"
"""``Generation.metadata`` key: the stop sequence that ended the answer."""
