"""``toolrelay demo --lang``: the demo's words in each language.

The demo runs the refund triage in English (``en``, the default) or Chinese (``zh``). The
language chooses the catalog's descriptions and the task (the demo catalog's
``build_catalog(lang=...)`` and ``TASKS``), the system text below, and everything the replay
model says: what it searches for, its remarks between the calls, the tickets and the message
it writes, its answer. The tool search texts (``tool_search``'s description, the system
suffix, the "not available" answer) follow the catalog's language by themselves (the
advisor's ``language="auto"``). Headings, tables and checks stay English.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from types import MappingProxyType

import typer

__all__ = [
    "CHINESE_DEMO",
    "DEMO_LANGUAGES",
    "ENGLISH_DEMO",
    "DemoWords",
    "ReplayWords",
    "TriageWords",
    "parse_demo_language",
]


@dataclass(frozen=True, kw_only=True)
class ReplayWords:
    """What the replay model says around its calls, as ``str.format`` templates.

    Attributes:
        searching: Before the searches of a turn: ``{purpose}``, their purposes joined by
            ``and_``.
        and_: What joins the purposes of several searches.
        widening: A search did not return the tool; asking again for more hits: ``{query}``,
            ``{tool}``.
        found: The search returned the tool: ``{tool}``, ``{times}``.
        shown_earlier: Not returned by a search but among the request's tools: ``{tool}``,
            ``{times}`` (``{query}`` too).
        missed: Not found; called anyway so the gate's answer shows: ``{query}``, ``{tool}``,
            ``{returned}``.
        times: ``{times}`` when a step calls its tool more than once: ``{count}``.
        nothing: ``{returned}`` when the search returned nothing.
        stopped: The final answer after a failure: ``{why}``, ``{error}``.
        refused: ``{why}`` when the search missed and the call was refused: ``{tool}``.
        failed: ``{why}`` when the tool answered with an error: ``{tool}``.
    """

    searching: str
    and_: str
    widening: str
    found: str
    shown_earlier: str
    missed: str
    times: str
    nothing: str
    stopped: str
    refused: str
    failed: str


@dataclass(frozen=True, kw_only=True)
class TriageWords:
    """The refund triage in one language: the searches, and what the replay writes.

    Attributes:
        queries: The search query of each step (find, retry, incident, notify).
        purposes: What each step is for, for :attr:`ReplayWords.searching`.
        report: The outcome: ``{failed}``, ``{recovered}``, ``{recovered_ids}``, ``{opened}``,
            ``{ticket_ids}`` (the id lists are ``listed`` or empty).
        listed: Ids in a report: ``{ids}``, joined with ``separator``.
        separator: Between ids.
        notified: Appended to the report in the answer: ``{message_id}``.
        incident_title: An incident's title: ``{refund_id}``, ``{reason}``.
        incident_description: Its description: ``{refund_id}``, ``{order_id}``, ``{amount}``,
            ``{currency}``, ``{channel}``, ``{reason}``, ``{tried}``.
        retried: ``{tried}`` for a refund a retry did not fix.
        not_retryable: ``{tried}`` for a refund a retry cannot fix.
        subject: The subject of the owner's message.
    """

    queries: tuple[str, str, str, str]
    purposes: tuple[str, str, str, str]
    report: str
    listed: str
    separator: str
    notified: str
    incident_title: str
    incident_description: str
    retried: str
    not_retryable: str
    subject: str

    def ids(self, ids: list[str]) -> str:
        """``ids`` as a report shows them (nothing when there are none)."""
        return self.listed.format(ids=self.separator.join(ids)) if ids else ""


@dataclass(frozen=True, kw_only=True)
class DemoWords:
    """The demo in one language.

    Attributes:
        language: ``"en"`` or ``"zh"``.
        system: The system text.
        replay: What the replay says around its calls.
        triage: The triage's searches and writing.
    """

    language: str
    system: str
    replay: ReplayWords
    triage: TriageWords


ENGLISH_DEMO = DemoWords(
    language="en",
    system=(
        "You are the refund desk's operations assistant. Act with the tools, one step at a "
        "time, using the results of earlier steps; then answer briefly with what you did."
    ),
    replay=ReplayWords(
        searching="Searching for the tools to {purpose}.",
        and_="; to ",
        widening="The search for {query!r} did not return {tool}; asking for more hits.",
        found="The search returned {tool}; calling it{times}.",
        shown_earlier=("{tool} is among the tools this request shows; calling it{times}."),
        missed=(
            "The search for {query!r} did not return {tool} (it returned {returned}). Calling "
            "{tool} anyway so the tool gate's answer shows; the replay stops after that."
        ),
        times=" {count} times",
        nothing="nothing",
        stopped="Stopped: {why}: {error}",
        refused="the search did not find {tool}, and the call was refused",
        failed="{tool} answered with an error",
    ),
    triage=TriageWords(
        queries=(
            "failed refunds from yesterday",
            "retry a failed refund",
            "open an incident ticket for a failing refund",
            "notify the refunds owner",
        ),
        purposes=(
            "find yesterday's failed refunds",
            "retry the recoverable refunds",
            "open incidents for the refunds still failing",
            "tell the refunds owner what was done",
        ),
        report=(
            "{failed} refunds failed yesterday; {recovered} succeeded on retry{recovered_ids}; "
            "{opened} incident(s) opened for the rest{ticket_ids}."
        ),
        listed=" ({ids})",
        separator=", ",
        notified=" The owner was notified ({message_id}).",
        incident_title="Refund {refund_id} failing: {reason}",
        incident_description=(
            "Refund {refund_id} of order {order_id} ({amount} {currency} via {channel}) failed "
            "with {reason}; {tried}."
        ),
        retried="a retry did not fix it",
        not_retryable="a retry cannot fix it",
        subject="Refund triage",
    ),
)
"""The demo in English."""

CHINESE_DEMO = DemoWords(
    language="zh",
    system=(
        "你是退款服务台的运营助手。请使用工具一步一步地完成任务，并利用前面步骤的结果；"
        "完成后简要说明你做了什么。"
    ),
    replay=ReplayWords(
        searching="先搜索工具：{purpose}。",
        and_="；",
        widening="搜索“{query}”没有返回 {tool}；请求更多结果。",
        found="搜索返回了 {tool}，现在调用{times}。",
        shown_earlier=("{tool} 已在本次请求提供的工具中；现在调用{times}。"),
        missed=(
            "搜索“{query}”没有返回 {tool}（返回的是：{returned}）。仍然调用 {tool}，"
            "以便显示工具闸门的答复；回放随后停止。"
        ),
        times=" {count} 次",
        nothing="无",
        stopped="已停止：{why}：{error}",
        refused="搜索没有找到 {tool}，调用被拒绝",
        failed="{tool} 返回了错误",
    ),
    triage=TriageWords(
        queries=(
            "昨天退款失败的订单",
            "重试失败的退款",
            "为仍然失败的退款创建工单",
            "通知退款负责人",
        ),
        purposes=(
            "查找昨天退款失败的订单",
            "重试可以恢复的退款",
            "为仍然失败的退款创建事故工单",
            "把处理结果告诉退款负责人",
        ),
        report=(
            "昨天有 {failed} 笔退款失败；{recovered} 笔重试后成功{recovered_ids}；"
            "其余的已创建 {opened} 张事故工单{ticket_ids}。"
        ),
        listed="（{ids}）",
        separator="、",
        notified="已通知负责人（{message_id}）。",
        incident_title="退款 {refund_id} 失败：{reason}",
        incident_description=(
            "订单 {order_id} 的退款 {refund_id}（{amount} {currency}，渠道 {channel}）"
            "因 {reason} 失败；{tried}。"
        ),
        retried="重试未能解决",
        not_retryable="重试无法解决",
        subject="退款排查",
    ),
)
"""The demo in Chinese (the seed documents' language)."""

DEMO_LANGUAGES: Mapping[str, DemoWords] = MappingProxyType({"en": ENGLISH_DEMO, "zh": CHINESE_DEMO})
"""The demo's words by ``--lang`` value."""


def parse_demo_language(value: str) -> str:
    """The ``--lang`` value ``value`` names (any case, surrounding spaces ignored).

    Raises:
        typer.BadParameter: The demo does not speak that language.
    """
    language = str(value).strip().lower()
    if language not in DEMO_LANGUAGES:
        raise typer.BadParameter(f"unknown language {value!r}; use en or zh")
    return language
