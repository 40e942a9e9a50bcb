"""Tools that change things must say so, and destructive ones must ask first.

- ``side-effect-unmarked`` (*warning*): the name or the description says the tool changes
  something (create, delete, update, send, retry, refund, pay, disable, execute, ...; 创建
  删除 更新 修改 发送 重试 退款 支付 禁用 执行 ...) but the tool declares neither
  ``read_only``, ``destructive`` nor ``requires_approval``. JSON tools declare them with MCP
  annotations (``readOnlyHint``, ``destructiveHint``; a stated ``destructiveHint: false``
  counts as declared) or ``_meta["toolrelay/requires_approval"]``.
- ``destructive-without-approval`` (*warning*): a ``destructive`` tool that does not
  require approval; the model alone decides to run it.

Declared metadata is what permission and approval policies act on; an unmarked refund tool
runs like a lookup.
"""

from __future__ import annotations

from collections.abc import Iterator

from toolrelay.lint._context import LintContext
from toolrelay.lint._findings import Finding, Rule, Severity
from toolrelay.lint._targets import ANNOTATIONS, LintTarget
from toolrelay.lint._verbs import description_mutating_verb, name_mutating_verb
from toolrelay.tools._names import split_name_words

__all__ = ["DESTRUCTIVE_WITHOUT_APPROVAL", "RULES", "UNMARKED", "check", "mutating_verb"]

UNMARKED = Rule(
    id="side-effect-unmarked",
    severity=Severity.WARNING,
    summary="Mutating verb but no read_only / destructive / requires_approval metadata",
)
DESTRUCTIVE_WITHOUT_APPROVAL = Rule(
    id="destructive-without-approval",
    severity=Severity.WARNING,
    summary="Destructive tool that does not require approval",
)
RULES = (UNMARKED, DESTRUCTIVE_WITHOUT_APPROVAL)


def mutating_verb(target: LintTarget) -> str | None:
    """The verb that says the tool changes something (name first, then description)."""
    description = target.definition.description
    last_segment = target.name.rsplit(".", 1)[-1]
    return name_mutating_verb(split_name_words(last_segment), description) or (
        description_mutating_verb(description)
    )


def _declared(target: LintTarget) -> bool:
    meta = target.metadata
    if meta is None:
        return False
    hints = meta.extra.get(ANNOTATIONS)
    stated = isinstance(hints, dict) and "destructiveHint" in hints
    return meta.read_only or meta.destructive or meta.requires_approval or stated


def check(ctx: LintContext) -> Iterator[Finding]:
    """Findings of the side-effect rules for every tool."""
    for target in ctx.unique:
        name = target.name
        meta = target.metadata
        if meta is not None and meta.destructive and not meta.requires_approval:
            yield DESTRUCTIVE_WITHOUT_APPROVAL.finding(
                name,
                "destructive, yet the model alone decides to run it",
                'set requires_approval=True (JSON: _meta {"toolrelay/requires_approval": true})',
            )
        if _declared(target):
            continue
        verb = mutating_verb(target)
        if verb is None:
            continue
        yield UNMARKED.finding(
            name,
            f"{verb!r} says it changes something, but no side effects are declared",
            "declare it: destructive=True (and requires_approval=True) if irreversible, "
            "requires_approval=True if a person should confirm, read_only=True if it changes "
            "nothing (JSON: annotations readOnlyHint / destructiveHint)",
        )
