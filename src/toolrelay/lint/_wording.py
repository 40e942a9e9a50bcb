"""Reading a description as retrieval text: its length in words and what it tells a model.

A description should say what the tool does, when to use it, and what it does not do (the
sibling it must not be mistaken for). These are judged by cue words, in English and Chinese:
a description without any verb does not say what the tool does; "use when", "if", "for" and
"当…时", "用于" tell when; "not", "only", "instead" and "不", "仅", "而非" draw a limit.
The cues are deliberately generous: a rule that cries wolf gets disabled.
"""

from __future__ import annotations

import re

from toolrelay.lint._verbs import MUTATING_VERBS, READ_VERBS, description_mutating_verb, inflections
from toolrelay.tools._language import HAN

__all__ = ["says_what", "says_what_not", "says_when", "word_count", "words"]

_LATIN_WORD = re.compile(r"[^\W_]+")
_CJK = re.compile(f"[{HAN}]")

_WHEN = re.compile(
    r"\b(?:use[ds]?|using|when|whenever|if|unless|useful|helpful|ideal|intended|designed|"
    r"prefer|suitable|before|after|for\s+(?:example|instance|the\s+case)|in\s+order\s+to|"
    r"call\s+(?:this|it)|needed|required\s+to|e\.g)\b|当|用于|用来|适用|如果|若|需要|场景|时使用",
    re.IGNORECASE,
)
_WHAT_NOT = re.compile(
    r"\b(?:not|never|no|only|instead|rather|except|without|cannot|can't|doesn't|don't|"
    r"won't|isn't|avoid|neither|nor|solely|exclusively|read-only|readonly)\b|不|仅|只|勿|而非|"
    r"无法|禁止|除",
    re.IGNORECASE,
)
_ZH_VERBS = re.compile(
    "查询|获取|查看|列出|搜索|检索|统计|读取|显示|检查|返回|计算|生成|转换|分析|翻译|验证|预订|"
    "创建|新建|新增|添加|删除|移除|更新|修改|发送|重试|退款|支付|转账|禁用|启用|执行|取消|提交|"
    "上传|下载|导出|设置|关闭|打开|播放|推荐|比较|识别|解析|预测|估算"
)
# Verbs tools commonly open with, besides the reading and mutating ones.
_OTHER_VERBS = """
    provide give generate produce create make build perform process handle manage track monitor
    recommend suggest predict play open parse extract format render resolve identify determine
    measure simulate plan optimize sort filter match map lookup log record notify call invoke
    connect control configure load save store sync verify authenticate authorize login logout
    tell answer help display print scan evaluate test solve fit train classify rank score
    """.split()  # noqa: SIM905 - a word list reads best as text
_ACTION_FORMS: frozenset[str] = frozenset(
    form for verb in (*READ_VERBS, *MUTATING_VERBS, *_OTHER_VERBS) for form in inflections(verb)
)


def words(text: str) -> list[str]:
    """The lower-case Latin/Cyrillic/... words of ``text`` (CJK characters excluded)."""
    return [w.lower() for w in _LATIN_WORD.findall(_CJK.sub(" ", text))]


def word_count(text: str) -> float:
    """Words in ``text``, counting each CJK character as half a word.

    Chinese has no spaces; two characters make a word on average, so "查询用户订单"
    (query a user's orders) counts as 3 words.
    """
    return len(words(text)) + len(_CJK.findall(text)) / 2


def says_what(description: str) -> bool:
    """Whether the description names an action (any verb a tool would do)."""
    if _ZH_VERBS.search(description) or description_mutating_verb(description):
        return True
    return any(w in _ACTION_FORMS for w in words(description))


def says_when(description: str) -> bool:
    """Whether the description says when to use the tool."""
    return _WHEN.search(description) is not None


def says_what_not(description: str) -> bool:
    """Whether the description draws a limit: what the tool does not do, or only does."""
    return _WHAT_NOT.search(description) is not None
