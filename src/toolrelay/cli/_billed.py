"""What the command line's runs cost as billed, through :mod:`toolrelay.models._billing`.

``toolrelay demo`` bills the requests of its turn as sent, and the same requests carrying
every catalog tool, on the headline models (``claude-sonnet-4-5``, ``gpt-5``): input under
each provider's prompt cache with the adapters' default settings, and the model's visible
output at the output price. ``toolrelay eval tokens`` bills a conversation of identical
requests per way of sending tools.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from toolrelay.messages import (
    AssistantMessage,
    Message,
    ToolCall,
    ToolResponse,
    ToolResponseMessage,
    UserMessage,
)
from toolrelay.models._billing import HEADLINE_MODELS, Bill, PricedModel, output_tokens
from toolrelay.prompt import Prompt
from toolrelay.tools._base import ToolDefinition
from toolrelay.toolsearch._texts import TOOL_SEARCH_NAME

if TYPE_CHECKING:
    from toolrelay.cli._pipeline import RoundRecord

__all__ = [
    "CONVERSATION_MESSAGE",
    "BilledTurn",
    "bill_conversation",
    "bill_rounds",
    "billed_json",
    "billed_line",
]

CONVERSATION_MESSAGE = "Find yesterday's failed refunds and retry them."
"""The user turn of the conversation ``eval tokens`` bills (its size barely matters)."""


@dataclass(frozen=True, kw_only=True)
class BilledTurn:
    """A turn's requests billed on one model.

    Attributes:
        model: The priced model.
        requests: Model requests billed.
        output: Output tokens over the requests.
        cost: US dollars, the requests as sent.
        every_tool: US dollars, the same requests each carrying every catalog tool.
    """

    model: PricedModel
    requests: int
    output: int
    cost: float
    every_tool: float

    @property
    def saved_percent(self) -> float:
        return 100.0 * (1 - self.cost / self.every_tool) if self.every_tool else 0.0


def bill_rounds(
    rounds: Sequence[RoundRecord], every_tool: Sequence[ToolDefinition]
) -> list[BilledTurn]:
    """Each headline model's bill for ``rounds``, as sent and with ``every_tool``."""
    billed = []
    for model in HEADLINE_MODELS:
        sent, full = Bill(model), Bill(model)
        output = 0
        for record in rounds:
            if record.prompt is None or record.response is None:
                continue
            tokens = output_tokens(record.response, model.layout)
            output += tokens
            sent.add(model.body(record.prompt), tokens)
            full.add(model.body(record.prompt, tools=every_tool), tokens)
        billed.append(
            BilledTurn(
                model=model,
                requests=len(sent.requests),
                output=output,
                cost=sent.cost,
                every_tool=full.cost,
            )
        )
    return billed


def billed_line(billed: BilledTurn, catalog_size: int) -> str:
    """One line: the cost as billed, as sent and with every tool."""
    return (
        f"{billed.model.name}, billed: ${billed.cost:.4f} ({billed.output:,} output tokens); "
        f"all {catalog_size:,} tools: ${billed.every_tool:.4f}; {billed.saved_percent:.1f}% saved"
    )


def billed_json(billed: Sequence[BilledTurn]) -> dict[str, Any]:
    """The bills as JSON-ready data, by model name."""
    return {
        b.model.name: {
            "requests": b.requests,
            "output_tokens": b.output,
            "cost_usd": round(b.cost, 6),
            "with_all_tools_usd": round(b.every_tool, 6),
            "saved_percent": round(b.saved_percent, 2),
        }
        for b in billed
    }


def bill_conversation(
    definitions: Sequence[ToolDefinition],
    *,
    rounds: int,
    output: int,
    answer: str | None = None,
) -> dict[str, float]:
    """US dollars per headline model (by name) for a conversation of ``rounds`` requests.

    Each request carries ``definitions`` and one user turn (and, with ``answer``, a search
    call answered with that text: the proxy channel's found tools), and is answered with
    ``output`` tokens.
    """
    messages: tuple[Message, ...] = (UserMessage(text=CONVERSATION_MESSAGE),)
    if answer is not None:
        call = ToolCall(id="call_1", name=TOOL_SEARCH_NAME, arguments='{"query": "refund"}')
        messages += (
            AssistantMessage(tool_calls=(call,)),
            ToolResponseMessage(
                responses=(ToolResponse(id="call_1", name=TOOL_SEARCH_NAME, data=answer),)
            ),
        )
    prompt = Prompt(messages=messages)
    costs = {}
    for model in HEADLINE_MODELS:
        bill = Bill(model)
        body = model.body(prompt, tools=definitions)
        for _ in range(rounds):
            bill.add(body, output)
        costs[model.name] = bill.cost
    return costs
