"""Which words say that a tool changes something, and which say that it only reads.

English verbs are matched in any inflection (``create``, ``creates``, ``created``,
``creating``). Some mutating verbs are also common nouns (``refund``, ``update``, ``order``),
so they count only where a verb stands: first in a name's last segment, or first in the
description. Chinese verbs are matched as substrings of the first clause of a description,
unless a reading verb comes first (``查询退款状态`` reads; ``为订单发起退款`` refunds).
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence

__all__ = [
    "MUTATING_VERBS",
    "READ_VERBS",
    "chinese_mutating_verb",
    "description_mutating_verb",
    "first_verb",
    "inflections",
    "name_mutating_verb",
    "opening_words",
]

# Mutating verbs that are rarely nouns: they count first or last in a name.
_STRONG = """
    create delete remove send retry disable enable execute cancel revoke purge insert write
    submit publish upload approve deploy restart terminate kill destroy erase wipe overwrite
    deactivate activate rerun escalate assign grant rename archive unsubscribe subscribe ban
    suspend unlock lock modify edit transfer register invite trigger reboot shutdown drop
    """.split()  # noqa: SIM905 - a word list reads best as text
# Mutating verbs that double as nouns: they count only in a verb's position.
_AMBIGUOUS = """
    update refund pay charge post set add patch reset book reserve order close move merge
    replace clear start stop run apply schedule
    """.split()  # noqa: SIM905 - a word list reads best as text

MUTATING_VERBS: frozenset[str] = frozenset((*_STRONG, *_AMBIGUOUS))
"""Verbs of tools that change something (base forms)."""

READ_VERBS: frozenset[str] = frozenset(
    """
    get list search find query fetch retrieve read show view look lookup check count describe
    explain estimate preview validate calculate compute return returns summarize inspect
    download export browse detect analyze analyse compare convert translate
    """.split()  # noqa: SIM905 - a word list reads best as text
)
"""Verbs of tools that only read (base forms)."""

# Lead-ins before the verb of a description: "Use this tool to delete ..." -> "delete ...".
_LEAD_IN = re.compile(
    r"^\s*(?:(?:this|the|a)\s+(?:tool|function|endpoint|api|method)\s+"
    r"(?:that\s+|which\s+|will\s+|can\s+|to\s+|is\s+used\s+to\s+|lets\s+you\s+|allows\s+"
    r"(?:you\s+|the\s+user\s+)?to\s+)?"
    r"|(?:use\s+(?:this\s+)?(?:tool\s+|function\s+)?to\s+)"
    r"|(?:(?:tool|function|endpoint|api|method)\s+(?:to|that|for)\s+)"
    r"|(?:(?:used|able|designed|intended)\s+to\s+)"
    r"|(?:(?:allows|lets|helps)\s+(?:you\s+|the\s+user\s+|users\s+)?(?:to\s+)?)"
    r"|(?:(?:will|can|attempts\s+to|tries\s+to|permanently|irreversibly|immediately|"
    r"directly|automatically|manually|asynchronously|also|then)\s+))+",
    re.IGNORECASE,
)
_WORD = re.compile(r"[A-Za-z]+")
# A short label before a colon: "TheClique (Data): ...", "Book Cover API: ...".
_HEADING = re.compile(r"^([^:.\n]{1,60}?):\s+")
# Names that open with these ask a question: "is_registered", "has_access".
_VERB_LAST_MAX_WORDS = 3
_COPULAS = frozenset({"is", "are", "has", "have", "can", "does", "was", "exists", "exist"})
# Words that make the word before them a noun: "order status", "schedule of", "refunds list".
_NOUN_FOLLOWERS = frozenset(
    """
    of for list lists status history detail details info information data id ids count summary
    report reports by types type number numbers total stats statistics events items item record
    records log logs and or in on at is are was were has have api endpoint page date time
    """.split()  # noqa: SIM905
)

_ZH_MUTATING = """
    创建 新建 新增 添加 删除 移除 清空 更新 修改 编辑 变更 设置 发送 推送 重试 退款 支付 付款
    转账 扣款 充值 禁用 停用 启用 执行 运行 取消 撤销 撤回 提交 发布 上传 重置 关闭 写入 插入
    审批 授权 冻结 注销 下单
    """.split()  # noqa: SIM905 - a word list reads best as text
_ZH_READ = "查询 获取 查看 列出 搜索 检索 统计 读取 显示 检查 返回 分析 估算 预览 解释".split()  # noqa: SIM905
_ZH_LEAD_IN = re.compile(
    r"^\s*(?:该|此|本|这个)?(?:工具|接口|函数|方法)?\s*(?:用于|用来|可以|可|将|能够|会|帮助|允许)*"
)
_ZH_CLAUSE_END = re.compile(r"[，。；：,.;:!?！？\n]")


def inflections(verb: str) -> set[str]:
    """The forms of an English verb a description may use (over-generating is harmless)."""
    forms = {verb, verb + "s", verb + "es", verb + "ed", verb + "d", verb + "ing"}
    if verb.endswith("e"):
        forms |= {verb[:-1] + "ing", verb + "d"}
    if verb.endswith("y"):
        forms |= {verb[:-1] + "ies", verb[:-1] + "ied"}
    if re.search(r"[^aeiou][aeiou][bdgkmnprt]$", verb):
        forms |= {verb + verb[-1] + "ed", verb + verb[-1] + "ing"}
    return forms


_IRREGULAR = {"send": {"sent"}, "pay": {"paid"}, "set": {"set"}, "write": {"wrote", "written"}}


def _forms(verbs: Iterable[str]) -> dict[str, str]:
    """Every form of every verb, mapped to its base form."""
    table: dict[str, str] = {}
    for verb in verbs:
        for form in inflections(verb) | _IRREGULAR.get(verb, set()):
            table.setdefault(form, verb)
    return table


_STRONG_FORMS = _forms(_STRONG)
_AMBIGUOUS_FORMS = _forms(_AMBIGUOUS)
_READ_FORMS = _forms(READ_VERBS)


def opening_words(description: str, count: int = 2) -> list[str]:
    """The first English words of a description, lower-cased, after lead-ins and a heading.

    A short heading ending in a colon ("Book Cover API: Get the cover...") is skipped,
    unless it opens with a mutating verb ("Deletes the file: ...").
    """
    text = description.strip()
    heading = _HEADING.match(text)
    if heading:
        label = _WORD.findall(heading.group(1))
        if not label or label[0].lower() not in _STRONG_FORMS:
            text = text[heading.end() :]
    head = _LEAD_IN.sub("", text, count=1)
    return [w.lower() for w in _WORD.findall(head[:80])[:count]]


def first_verb(description: str) -> str | None:
    """The first English word of a description (see :func:`opening_words`)."""
    words = opening_words(description, 1)
    return words[0] if words else None


def name_mutating_verb(words: Sequence[str], description: str) -> str | None:
    """The mutating verb in a name's last segment, as its base form, or ``None``.

    Names are read as imperatives, verb first (``refund_order``) or, for verbs that are
    rarely nouns, verb last (``user_delete``).

    Args:
        words: The lower-case words of the name's last dotted segment.
        description: The description, to tell a noun from a verb: an ambiguous word
            (``refund_status``) counts only when the description does not open with a
            reading verb.
    """
    if not words:
        return None
    first = words[0]
    if first in _READ_FORMS or first in _COPULAS:
        return None
    if first in _STRONG_FORMS:
        return _STRONG_FORMS[first]
    # "orders_list" and "schedules" are nouns; "refund_order" is a verb.
    following = words[1] if len(words) > 1 else None
    if first in _AMBIGUOUS and _verb_position(following):
        return None if first_verb(description) in _READ_FORMS else first
    # Verb last only in short names: long ones end in a service's name ("..._for_archive").
    last = words[-1]
    return last if 1 < len(words) <= _VERB_LAST_MAX_WORDS and last in _STRONG else None


def description_mutating_verb(description: str) -> str | None:
    """The mutating verb a description opens with (English or Chinese), or ``None``."""
    opening = opening_words(description)
    if opening:
        verb = opening[0]
        following = opening[1] if len(opening) > 1 else None
        if verb in _STRONG_FORMS:
            return _STRONG_FORMS[verb]
        if verb in _AMBIGUOUS_FORMS and _verb_position(following):
            return _AMBIGUOUS_FORMS[verb]
    return chinese_mutating_verb(description)


def _verb_position(following: str | None) -> bool:
    """Whether a word followed by ``following`` reads as a verb (not "order status")."""
    return following not in _NOUN_FOLLOWERS


def chinese_mutating_verb(text: str) -> str | None:
    """The Chinese mutating verb of the first clause, unless a reading verb precedes it."""
    clause = _ZH_CLAUSE_END.split(_ZH_LEAD_IN.sub("", text.strip(), count=1), maxsplit=1)[0]
    best: tuple[int, str] | None = None
    for verb in _ZH_MUTATING:
        at = clause.find(verb)
        if at >= 0 and (best is None or at < best[0]):
            best = (at, verb)
    if best is None:
        return None
    reads = [clause.find(v) for v in _ZH_READ if v in clause]
    if reads and min(reads) < best[0]:
        return None
    return best[1]
