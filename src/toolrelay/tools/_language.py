"""The language of tool texts: its CJK share, a catalog's language, texts replaced.

Tool search talks to the model in the catalog's language (the search tool's description, the
system-prompt suffix, the "not available" answer), and an index may pick its embedder by it.
Both ask the same question, so it is answered here, below the client and the search layers:

>>> cjk_share("查询指定时间范围内退款失败的订单")
1.0
>>> round(cjk_share("查询退款 refund.find_failed_orders"), 2)
0.15

The share counts characters, not words: a Chinese word is one or two characters where an
English word is five or six letters, so a text that is half Chinese by words is only about a
fifth CJK by characters. :data:`CHINESE_THRESHOLD` sits there. Japanese kana and Korean hangul
count as CJK too; the only languages told apart are English and Chinese.

:func:`replace_texts` gives a definition another description and other parameter
descriptions, to show the same tool in another language.
"""

from __future__ import annotations

import copy
import dataclasses
import re
from collections.abc import Iterable, Mapping
from typing import Literal

from toolrelay.exceptions import ToolDefinitionError
from toolrelay.tools._base import ToolDefinition

__all__ = [
    "BOPOMOFO",
    "CHINESE_THRESHOLD",
    "HAN",
    "HANGUL",
    "KANA",
    "Language",
    "catalog_language",
    "cjk_share",
    "replace_texts",
]

Language = Literal["en", "zh"]
"""A language of tool texts: ``"en"`` (English, the default) or ``"zh"`` (Chinese)."""

CHINESE_THRESHOLD = 0.2
"""A text (or catalog) whose CJK share is above this is Chinese.

Chinese tool descriptions keep English identifiers (``refund.find_orders``, ``RF-2001``,
``YYYY-MM-DD``) and still come out well above 0.5; English ones are at 0.
"""

# The scripts of Chinese, Japanese and Korean text, as regex class contents, shared by every
# module that looks for them (search analysis, lint wording).
HAN = "\u3005\u3007\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff\U00020000-\U0003134f"
"""Han ideographs: the unified block and extensions A to G, compatibility ideographs, 々, 〇."""
KANA = "\u3040-\u309f\u30a0-\u30ff\u31f0-\u31ff\uff66-\uff9f"
"""Hiragana, katakana (with ー), katakana extensions, half-width katakana."""
HANGUL = "\u1100-\u11ff\u3130-\u318f\ua960-\ua97f\uac00-\ud7af\ud7b0-\ud7ff"
"""Hangul syllables and jamo."""
BOPOMOFO = "\u3100-\u312f\u31a0-\u31bf"
"""Bopomofo (zhuyin), the phonetic script of Chinese."""

_CJK = re.compile(f"[{HAN}{KANA}{HANGUL}{BOPOMOFO}]")
# Letters and digits of any script ("_" and punctuation are not): the share's denominator.
_WORD_CHARACTER = re.compile(r"[^\W_]")


def _counts(text: str) -> tuple[int, int]:
    """CJK characters and letters/digits of ``text`` (regexes: fast on long catalogs)."""
    return len(_CJK.findall(text)), len(_WORD_CHARACTER.findall(text))


def cjk_share(text: str) -> float:
    """The share of CJK characters among the letters and digits of ``text`` (0 to 1).

    Spaces, punctuation and ``_`` do not count; a text without letters or digits is 0.
    """
    cjk, letters = _counts(text)
    return cjk / letters if letters else 0.0


def catalog_language(
    definitions: Iterable[ToolDefinition], *, threshold: float = CHINESE_THRESHOLD
) -> Language:
    """``"zh"`` when the tools' descriptions together are more than ``threshold`` CJK.

    Every character of every description counts once, so a few long English descriptions
    outweigh many one-word Chinese ones and the other way round. An empty catalog is
    ``"en"``.
    """
    cjk = letters = 0
    for definition in definitions:
        more_cjk, more_letters = _counts(definition.description)
        cjk += more_cjk
        letters += more_letters
    return "zh" if letters and cjk / letters > threshold else "en"


def replace_texts(
    definition: ToolDefinition,
    *,
    description: str | None = None,
    parameters: Mapping[str, str] | None = None,
) -> ToolDefinition:
    """``definition`` with another description and other parameter descriptions.

    The name and everything else in the schema stay as they are, so the same tool can be
    shown in another language; the original definition is not changed.

    Args:
        definition: The definition to copy.
        description: The new description; ``None`` keeps the old one.
        parameters: New descriptions of top-level parameters, by parameter name; parameters
            not named keep theirs.

    Raises:
        ToolDefinitionError: ``parameters`` names a parameter the schema does not have.
    """
    if not parameters:
        if description is None:
            return definition
        return dataclasses.replace(definition, description=description)
    schema = copy.deepcopy(dict(definition.input_schema))
    properties = schema.get("properties")
    known = properties if isinstance(properties, dict) else {}
    unknown = sorted(name for name in parameters if not isinstance(known.get(name), dict))
    if unknown:
        raise ToolDefinitionError(
            definition.name, [f"no parameter {name!r} to describe" for name in unknown]
        )
    for name, text in parameters.items():
        known[name]["description"] = text
    return dataclasses.replace(
        definition,
        description=definition.description if description is None else description,
        input_schema=schema,
    )
