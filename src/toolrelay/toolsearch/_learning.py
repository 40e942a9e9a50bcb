"""Learning from use: whose history a search reads, and which calls it records.

A search is ranked with the usage history of its scope (the tool context's tenant, or one
history shared by all); after a call, each tool that a search of the same turn (the chat
client) or of the same caller (the gateway) found, and that then ran with an ``ok`` outcome,
is recorded with the query of the search that found it. Both front ends use what is here.
"""

from __future__ import annotations

import time
from collections import OrderedDict
from collections.abc import Hashable, Iterable, Sequence
from dataclasses import dataclass, field

from toolrelay.execution import ToolCallStatus
from toolrelay.search._history import QueryHistory
from toolrelay.search._usage import UsageEntry, UsageLog
from toolrelay.tools import ToolContext

__all__ = ["CallerRecorders", "UsageRecorder", "read_history", "usage_scope"]


def usage_scope(context: ToolContext, *, shared: bool) -> str:
    """The scope of a caller's usage history: ``"tenant:<id>"``, or ``""`` (shared; no tenant)."""
    if shared or context.tenant_id is None:
        return ""
    return f"tenant:{context.tenant_id}"


async def read_history(log: UsageLog | None, scope: str) -> QueryHistory | None:
    """The history of ``scope`` in ``log`` for the next searches, ``None`` without a log."""
    return None if log is None else QueryHistory.of(await log.entries(scope))


@dataclass(kw_only=True)
class UsageRecorder:
    """Which query found each tool, and the entries its successful calls add, each once.

    Attributes:
        scope: Whose history the entries go to.
        found_by: The query of the latest search that found each tool, by canonical name.
        learned: The entries recorded so far, in order.
    """

    scope: str
    found_by: dict[str, str] = field(default_factory=dict)
    learned: list[UsageEntry] = field(default_factory=list)

    def found(self, query: str, names: Sequence[str]) -> None:
        """Note that a search for ``query`` returned ``names``."""
        for name in names:
            self.found_by[name] = query

    async def record(
        self, log: UsageLog | None, calls: Iterable[tuple[str | None, ToolCallStatus]]
    ) -> list[UsageEntry]:
        """Record the successful ``(tool, status)`` calls of found tools not yet recorded."""
        if log is None:
            return []
        known = {(e.query, e.tool) for e in self.learned}
        now = time.time()
        fresh = []
        for name, status in calls:
            if status is not ToolCallStatus.OK or name is None or name not in self.found_by:
                continue
            query = self.found_by[name]
            if (query, name) in known:
                continue
            known.add((query, name))
            fresh.append(UsageEntry(query=query, tool=name, scope=self.scope, last_used=now))
        if fresh:
            await log.record(fresh)
            self.learned.extend(fresh)
        return fresh


class CallerRecorders:
    """The recorders of the callers whose recent searches are remembered (the latest kept).

    Front ends without turns (the gateway, the bridges) record a successful call of a tool
    that one of the same caller's recent searches found.

    Args:
        kept: How many callers are remembered at most.
    """

    def __init__(self, kept: int = 10_000) -> None:
        self.kept = kept
        self._recorders: OrderedDict[Hashable, UsageRecorder] = OrderedDict()

    def of(self, caller: Hashable, scope: str) -> UsageRecorder:
        """The recorder of ``caller`` (made for ``scope`` when it has none yet)."""
        recorder = self._recorders.pop(caller, None) or UsageRecorder(scope=scope)
        self._recorders[caller] = recorder
        if len(self._recorders) > self.kept:
            self._recorders.popitem(last=False)
        return recorder
