"""Every text the model reads when a tool call goes wrong, kept in one place.

The texts are addressed to the model (what happened and what to do next), short, and stable:
tests assert them exactly, and prompts tuned against them should not drift.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping, Sequence
from datetime import UTC, datetime
from typing import Any

from toolrelay._plural import plural
from toolrelay.exceptions import ArgumentProblem
from toolrelay.tools._names import provider_safe_name
from toolrelay.tools._workers import ToolThreadsStatus, WorkerPoolBusy, WorkerPoolStatus

__all__ = [
    "EXTRA_ARGUMENT",
    "approval_failed",
    "approval_not_configured",
    "approval_timed_out",
    "arguments_summary",
    "arguments_too_deep",
    "arguments_too_long",
    "denied",
    "earlier_result_unknown",
    "error_cut",
    "idempotency_conflict",
    "invalid_arguments",
    "keyed_result_cut",
    "name_not_text",
    "name_too_long",
    "per_tool_limit",
    "replayed",
    "result_cut",
    "result_unknown",
    "taken_over",
    "timed_out",
    "timed_out_running",
    "timed_out_waiting",
    "tool_busy",
    "tool_failed_without_message",
    "total_limit",
    "unknown_tool",
    "unusable_result",
    "utc_time",
]

_MAX_SHOWN_NAME = 80

EXTRA_ARGUMENT = "Extra inputs are not permitted"
"""The problem of an argument the tool does not declare (pydantic's wording, kept for all)."""


def _shown(name: str) -> str:
    """Quote a name the model wrote, shortened so a runaway name cannot flood the context."""
    if len(name) > _MAX_SHOWN_NAME:
        name = name[:_MAX_SHOWN_NAME] + "..."
    return repr(name)


def unknown_tool(name: str, suggestions: Sequence[str], *, any_tools: bool = True) -> str:
    """No tool answers to ``name``.

    Suggestions are shown in their provider-safe form, the form the model was shown. For
    ``unknown_tool("getWether", ["get_weather", "get_time"])`` the text is::

        Unknown tool 'getWether'. Available tools with similar names: get_weather, get_time.
        Call one of the available tools with its exact name.

    (on one line). Without suggestions the middle sentence says no tool has a similar name;
    when ``any_tools`` is false the model is told to answer without tools.
    """
    if suggestions:
        listed = ", ".join(provider_safe_name(s) for s in suggestions)
        return (
            f"Unknown tool {_shown(name)}. Available tools with similar names: {listed}. "
            "Call one of the available tools with its exact name."
        )
    if any_tools:
        return (
            f"Unknown tool {_shown(name)}. No available tool has a similar name. "
            "Call one of the available tools with its exact name."
        )
    return f"Unknown tool {_shown(name)}. No tools are available; answer without calling tools."


def name_too_long(length: int, limit: int) -> str:
    """The called name is longer than any tool name can be; it was not looked up."""
    return (
        f"The tool name in this call is {length:,} characters long; tool names have at most "
        f"{limit:,}. Call one of the available tools with its exact name."
    )


def name_not_text(kind: str) -> str:
    """The call's tool name is missing (``null``) or not text; nothing was looked up."""
    return (
        f"This tool call has no tool name (its name is {kind}, not text). Call one of the "
        "available tools with its exact name."
    )


def arguments_too_long(length: int, limit: int) -> ArgumentProblem:
    """The argument text is longer than the manager accepts; it was not parsed."""
    return ArgumentProblem(
        location="",
        message=(
            f"The arguments are {length:,} characters long; at most {limit:,} are accepted. "
            "Send shorter arguments."
        ),
    )


def arguments_too_deep(limit: int) -> ArgumentProblem:
    """The arguments nest objects and arrays deeper than the manager accepts."""
    return ArgumentProblem(
        location="",
        message=f"Arguments are nested too deeply (more than {limit} levels). Send flatter ones.",
    )


def invalid_arguments(tool_name: str, problems: Iterable[ArgumentProblem]) -> str:
    """The arguments were unusable; one line per problem.

    >>> from toolrelay.exceptions import ArgumentProblem
    >>> print(invalid_arguments("get_weather", [ArgumentProblem(location="city",
    ...                                          message="Field required")]))
    Invalid arguments for tool 'get_weather':
    - city: Field required
    Fix the arguments and call the tool again.
    """
    lines = "\n".join(f"- {p}" for p in problems) or "- the arguments were rejected"
    return (
        f"Invalid arguments for tool {_shown(tool_name)}:\n{lines}\n"
        "Fix the arguments and call the tool again."
    )


def tool_failed_without_message(tool_name: str, exc: BaseException) -> str:
    """A tool raised an exception whose message is empty (Spring AI's wording)."""
    return f"Exception occurred in tool: {tool_name} ({type(exc).__name__})"


def timed_out(tool_name: str, seconds: float) -> str:
    """The tool ran longer than its timeout and was cancelled.

    >>> timed_out("slow_search", 2.0)
    "Tool 'slow_search' timed out after 2 s and was cancelled."
    """
    return f"Tool {_shown(tool_name)} timed out after {seconds:g} s and was cancelled."


def timed_out_running(tool_name: str, seconds: float) -> str:
    """A synchronous tool ran past its timeout; its thread cannot be stopped.

    The model reads that the call may still take effect, so it does not take the timeout for
    a failure that is safe to retry.
    """
    return (
        f"Tool {_shown(tool_name)} timed out after {seconds:g} s. It could not be stopped and "
        "may still finish, but its result will not reach you."
    )


def timed_out_waiting(
    tool_name: str,
    seconds: float,
    workers: WorkerPoolStatus,
    tool: ToolThreadsStatus | None = None,
) -> str:
    """A synchronous tool waited its whole timeout for a thread and never started.

    When the tool's own share of threads was full (``tool``), the text says so; else it
    counts the busy threads of the whole pool.
    """
    if tool is not None and tool.busy >= tool.share:
        stuck = (
            f", {tool.stuck:,} of them with calls that timed out and are still running"
            if tool.stuck
            else ""
        )
        return (
            f"Tool {_shown(tool_name)} did not start within its timeout of {seconds:g} s: all "
            f"{tool.share:,} threads it may use are busy with its other calls{stuck}. It did "
            "not run; try again later or answer without it."
        )
    stuck = (
        f", {workers.stuck:,} of them with calls that timed out and are still running"
        if workers.stuck
        else ""
    )
    threads = max(workers.max_workers, workers.busy)
    return (
        f"Tool {_shown(tool_name)} did not start within its timeout of {seconds:g} s: all "
        f"{threads:,} threads for synchronous tools are busy{stuck}. It did not run; "
        "try again later or answer without it."
    )


def tool_busy(tool_name: str, busy: WorkerPoolBusy) -> str:
    """A synchronous tool got no thread, and would get none until a stuck call returns.

    The call was refused at once rather than after its timeout.
    """
    if busy.whole_pool:
        why = (
            f"all {busy.limit:,} threads for synchronous tools are taken by calls that timed "
            "out and are still running"
        )
    else:
        why = (
            f"{plural(busy.stuck, 'earlier call')} of it timed out and "
            f"{'is' if busy.stuck == 1 else 'are'} still running, as many as it may run at once"
        )
    return (
        f"Tool {_shown(tool_name)} is busy: {why}. This call did not run; try again later or "
        "use another tool."
    )


def result_cut(shown: int, total: int) -> str:
    """Appended to a result cut to its bound: how much was shown, and how to get the rest.

    For ``result_cut(20_000, 5_242_880)`` the note is, on a line of its own::

        [Result cut: these are the first 20,000 of 5,242,880 characters. For what was left
        out, call the tool again asking for less: a narrower query, one page, or fewer fields.]

    (on one line). The counts are characters of the result's text.
    """
    return (
        f"\n[Result cut: these are the first {shown:,} of {total:,} characters. For what was "
        "left out, call the tool again asking for less: a narrower query, one page, or fewer "
        "fields.]"
    )


def keyed_result_cut(shown: int, total: int) -> str:
    """Appended to the cut result of a tool with an idempotency key (an operation's record).

    Calling it again with other arguments would reuse the operation's key (refused), and an
    identical call replays this same text, so the note only says what was shown::

        [Result cut: these are the first 20,000 of 5,242,880 characters. The operation ran
        once; calling it again returns this same text, so go on with what is shown.]
    """
    return (
        f"\n[Result cut: these are the first {shown:,} of {total:,} characters. The operation "
        "ran once; calling it again returns this same text, so go on with what is shown.]"
    )


def error_cut(shown: int, total: int) -> str:
    """Appended to a tool's error text cut to the result bound (an error quoting a whole page)."""
    return f"\n[Error text cut: these are the first {shown:,} of {total:,} characters.]"


def result_unknown() -> str:
    """Appended to the timeout of an idempotent call: it is not run again by itself."""
    return (
        " Whether it took effect is unknown; an identical call will not run it again. "
        "Tell the user it may or may not have happened."
    )


def not_run_again() -> str:
    """Appended to the answer of an idempotent call that ran but whose result was unusable."""
    return " It ran; an identical call will not run it again."


def taken_over(tool_name: str) -> str:
    """An identical call took over this call's reservation before it started; it did not run."""
    return (
        f"Tool {_shown(tool_name)} did not run: an identical call is running it elsewhere. "
        "Call it again later to get its result."
    )


def earlier_result_unknown(tool_name: str) -> str:
    """An identical idempotent call timed out or was interrupted while running before."""
    return (
        f"Tool {_shown(tool_name)} did not run: an identical call timed out or was interrupted "
        "while running earlier, and whether it took effect is unknown. Do not call it again; "
        "tell the user it may or may not have happened, so that someone can check."
    )


_MAX_SHOWN_VALUE = 40
_MAX_SUMMARY = 200


def arguments_summary(arguments: Mapping[str, Any]) -> str:
    """A short readable form of a call's arguments, recorded with its idempotency key.

    Each argument as ``name=value`` (the value as JSON), in the arguments' order; long values
    and long summaries are shortened with ``...``:

    >>> arguments_summary({"order_id": "E-5", "amount_cents": 1000})
    'order_id="E-5", amount_cents=1000'
    """
    parts = []
    for name, value in arguments.items():
        text = json.dumps(value, ensure_ascii=False, separators=(",", ":"), default=str)
        if len(text) > _MAX_SHOWN_VALUE:
            text = text[:_MAX_SHOWN_VALUE] + "..."
        parts.append(f"{name}={text}")
    summary = ", ".join(parts) or "no arguments"
    return summary if len(summary) <= _MAX_SUMMARY else summary[:_MAX_SUMMARY] + "..."


def utc_time(timestamp: float) -> str:
    """A time (seconds since the epoch) to the minute, in UTC: ``2026-12-06 12:03 UTC``."""
    return datetime.fromtimestamp(timestamp, UTC).strftime("%Y-%m-%d %H:%M UTC")


def replayed(ran_at: float | None) -> str:
    """The line before a replayed result: the call did not run again, and when it did run.

    For ``replayed(1796558580.0)`` the line is::

        [not run again: this exact call already ran at 2026-12-06 12:03 UTC; its recorded
        result follows]

    (on one line, ending with a newline); the recorded result follows it unchanged.
    """
    when = "" if ran_at is None else f" at {utc_time(ran_at)}"
    return f"[not run again: this exact call already ran{when}; its recorded result follows]\n"


def idempotency_conflict(
    tool_name: str,
    *,
    ran_at: float | None,
    summary: str,
    state: str = "ran",
    key_arguments: Sequence[str] = (),
) -> str:
    """The idempotency key of the call was already used by a call with other arguments.

    ``state`` says what became of that call: ``"ran"``, ``"running"`` or ``"unknown"``;
    ``key_arguments`` are the arguments the key is made of (none for a key function). For
    ``idempotency_conflict("refund.issue", ran_at=1796558580.0, summary='order_id="E-5",
    amount_cents=1000', key_arguments=["order_id"])`` the text is::

        Tool 'refund.issue' did not run: its idempotency key was already used at
        2026-12-06 12:03 UTC for other arguments (order_id="E-5", amount_cents=1000). A
        different operation needs a different key (this tool's key is made of order_id);
        this call did not run.

    (on one line).
    """
    when = "" if ran_at is None else f" at {utc_time(ran_at)}"
    by = {
        "running": ", by a call that is still running",
        "unknown": ", by a call whose outcome is unknown",
    }.get(state, "")
    made = f" (this tool's key is made of {', '.join(key_arguments)})" if key_arguments else ""
    return (
        f"Tool {_shown(tool_name)} did not run: its idempotency key was already used{when} "
        f"for other arguments ({summary}){by}. A different operation needs a different "
        f"key{made}; this call did not run."
    )


def unusable_result(tool_name: str, exc: BaseException) -> str:
    """A tool returned a value that could not be turned into text."""
    return (
        f"Tool {_shown(tool_name)} returned a value that cannot be turned into text "
        f"({type(exc).__name__})."
    )


def approval_failed(tool_name: str) -> str:
    """The approval handler failed, so nobody approved the call."""
    return (
        f"The call to tool {_shown(tool_name)} could not be approved (the approval check "
        "failed), so it did not run. Tell the user it needs approval."
    )


def approval_timed_out(tool_name: str, seconds: float) -> str:
    """Nobody approved the call in time, and the approval is configured to deny then."""
    return (
        f"The call to tool {_shown(tool_name)} was not approved within {seconds:g} s, so it "
        "did not run. Tell the user it needs approval."
    )


def approval_not_configured(tool_name: str) -> str:
    """A tool that requires approval, where nobody was configured to give it."""
    return (
        f"The tool {_shown(tool_name)} requires approval before it runs, and no approval is "
        "configured here, so it did not run. Tell the user it needs approval."
    )


def denied(tool_name: str) -> str:
    """Used when an interceptor denies a call with an empty reason."""
    return f"The call to tool {_shown(tool_name)} was denied."


def per_tool_limit(tool_name: str, limit: int) -> str:
    """The tool was called more often in this turn than its limit allows."""
    return (
        f"Tool call limit reached: {_shown(tool_name)} may be called at most "
        f"{plural(limit, 'time')} per turn. Do not call it again; answer with the information "
        "you have."
    )


def total_limit(limit: int) -> str:
    """The turn made more tool calls than the total limit allows."""
    return (
        f"Tool call limit reached: at most {plural(limit, 'tool call')} "
        f"{'is' if limit == 1 else 'are'} allowed per turn. Do not call more tools; answer "
        "with the information you have."
    )
